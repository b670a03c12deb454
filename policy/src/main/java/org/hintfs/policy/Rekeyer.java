package org.hintfs.policy;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Re-keys what a {@link Residency} holds when the known future order changes (a seed, an epoch, a
 * stream's end), for the owner of the lock that serialises the residency's calls.
 *
 * <p>Two costs bounded: requests that come while one is queued or running are merged into at most
 * one more run (a stream's order moves on every few opens, and each run is O(cached)), and no lock
 * hold is O(cached): the new keys are computed without the lock and applied under it {@link #SLICE}
 * at a time, so an open waiting for the lock waits for one slice, not for 1.28 M files. A request
 * is never lost: one that arrives after a run began causes one more run.
 *
 * <p>Until the last slice is applied, the cached samples are ordered by a mix of old and new keys
 * (the old ones are what the policy had before the order changed); once it is, the order is the
 * one-shot re-key's ({@link CachePolicy#orderChanged}). The cached list is taken under the lock
 * when a run begins; a sample read or prefetched meanwhile keeps the key its own access gave it.
 */
public final class Rekeyer {
  /** Samples re-keyed per hold of the lock. */
  public static final int SLICE = 4096;

  private final Object lock;
  private final Residency residency;
  private final AtomicBoolean requested = new AtomicBoolean();
  private final AtomicBoolean running = new AtomicBoolean();

  /** Re-keys {@code residency}'s policy; every call into it is made holding {@code lock}. */
  public Rekeyer(Object lock, Residency residency) {
    this.lock = lock;
    this.residency = residency;
  }

  /**
   * The order changed: re-keys now on this thread, or, if another thread is re-keying, has it run
   * once more after its current run and returns at once.
   */
  public void request() {
    requested.set(true);
    // Re-checked after giving up the run: a request that came while this thread was leaving it
    // (and found it still running) is this thread's to serve.
    while (requested.get() && running.compareAndSet(false, true)) {
      try {
        while (requested.getAndSet(false)) {
          rekey();
        }
      } finally {
        running.set(false);
      }
    }
  }

  /** One re-key of every cached sample. */
  private void rekey() {
    CachePolicy policy;
    CachePolicy.Reorder r;
    synchronized (lock) {
      policy = residency.policy();
      r = policy.beginReorder(residency.residents());
    }
    if (r == null) {
      return;
    }
    try {
      while (r.compute(SLICE)) {
        synchronized (lock) {
          if (residency.policy() != policy) {
            return; // switched meanwhile: the new policy has keys of its own
          }
          policy.applyReorder(r);
        }
      }
    } finally {
      synchronized (lock) {
        policy.endReorder(r);
      }
    }
  }
}
