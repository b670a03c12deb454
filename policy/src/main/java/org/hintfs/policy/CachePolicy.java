package org.hintfs.policy;

/**
 * Decides what the cache admits and what it evicts. Samples are dense ints {@code 0..n-1}.
 *
 * <p>The store owns capacity (it knows what an entry costs on disk); the policy owns the order. The
 * caller serializes all calls (policies are not thread-safe) and tells the policy every change:
 * each access with whether it hit, each sample it added and each it removed, whatever the reason.
 */
public interface CachePolicy {

  /** The short name the policy is registered under ({@code lru}, ...). */
  String name();

  /** A sample was read; {@code hit} if it was served from the cache. */
  void recordAccess(int sample, boolean hit);

  /**
   * After a miss, when the fetched sample fits only by evicting: is it worth a victim? (A sample
   * that fits in free space is always stored.)
   */
  boolean admit(int sample);

  /** The sample is now cached. */
  void added(int sample);

  /** The sample is no longer cached (evicted, dropped as corrupt, or stale). */
  void removed(int sample);

  /** The cached sample to evict next, or -1 if there is none. It stays cached until removed. */
  int victim();

  /**
   * A sample is about to be fetched ahead of its read (prefetch), not read: policies that know the
   * future look it up before {@link #admit}. Default: nothing.
   */
  default void prefetching(int sample) {}

  /** The known future order changed (a new seed or epoch): re-key these cached samples. */
  default void orderChanged(int[] cached) {}

  /**
   * The same re-keying in steps, so that no step holds the caller's lock for more than a slice:
   * this first step (under the lock) returns the work, or null if this policy keys nothing by the
   * order. From now until {@link #endReorder}, the policy notes every sample it re-keys by itself
   * (an access, a prefetch): those keep their own, newer keys.
   */
  default Reorder beginReorder(int[] cached) {
    return null;
  }

  /**
   * A re-keying under way, in slices of the cached list: {@link #compute} runs without the caller's
   * lock, on any thread, while the policy goes on taking the caller's other calls (it reads only
   * the thread-safe next-use oracle and writes only the reorder's own arrays); then {@link
   * #applyReorder}, under the lock, applies that slice. The same thread runs both.
   */
  interface Reorder {
    /**
     * Computes the new keys of the next slice of at most {@code max} samples; false if none was
     * left (the reorder is done).
     */
    boolean compute(int max);
  }

  /**
   * Under the caller's lock: the keys of the slice last computed take effect for its samples still
   * cached and not re-keyed since {@link #beginReorder}. Until every slice is applied, the cached
   * samples are ordered by a mix of old and new keys.
   */
  default void applyReorder(Reorder r) {}

  /**
   * The last step, under the caller's lock: the policy stops noting for this reorder. Always called
   * once for every begun reorder, whether or not all its slices were applied.
   */
  default void endReorder(Reorder r) {}

  /** Number of samples the policy believes are cached. */
  int size();

  /** True if the policy believes the sample is cached. */
  boolean contains(int sample);

  /** Throws {@link IllegalStateException} if the policy's own structures are inconsistent. */
  void checkInvariants();
}
