package org.hintfs.fs.store;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The source reads allowed at once, shared by demand and speculation: a reader's miss goes before a
 * prefetch, a prefetch before an admin's fetch, and speculation never takes the last {@link
 * #reserve} reads, so a reader's miss finds one free however many prefetches wait on a slow or hung
 * source (mountpoint-s3 likewise serves a reader's own request before its read-ahead).
 *
 * <p>Rules: at most {@code limit} reads run; a reader's miss starts whenever one is free; a
 * prefetch or admin fetch starts only while no reader's miss waits and fewer than {@code limit -
 * reserve} speculative reads run; an admin fetch also waits for every waiting prefetch. A
 * speculative read a reader comes to wait for (a late prefetch) is promoted to a reader's miss
 * while it waits.
 *
 * <p>Concurrency: every field is guarded by {@code lock}; waiters wait on their class's condition
 * and every release wakes them all (at most a few hundred threads ever wait here).
 */
final class FetchGate {
  /** Who waits: a reader's miss, the prefetcher (and substitution's owed samples), an admin. */
  enum Priority {
    DEMAND,
    PREFETCH,
    ADMIN
  }

  private final int limit;
  private final int reserve;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition[] turns = new Condition[Priority.values().length];
  private final int[] waiting = new int[Priority.values().length];
  private int running;
  private int runningSpeculative;
  private int peak;

  /**
   * A gate of {@code limit} reads, of which a quarter (at least one, none if the limit is one) only
   * readers' misses may take: at the default 64, 48 may be prefetches and 16 are kept for misses.
   */
  FetchGate(int limit) {
    this.limit = Math.max(1, limit);
    this.reserve = this.limit == 1 ? 0 : Math.max(1, this.limit / 4);
    for (int i = 0; i < turns.length; i++) {
      turns[i] = lock.newCondition();
    }
  }

  /**
   * Waits for a read's turn.
   *
   * @param promoted true once a reader waits for this speculative read: it then goes as a miss
   * @return the priority it ran with, for {@link #release}
   */
  Priority acquire(Priority p, BooleanSupplier promoted) throws InterruptedException {
    lock.lock();
    try {
      Priority cur = p;
      waiting[cur.ordinal()]++;
      try {
        while (true) {
          if (cur != Priority.DEMAND && promoted.getAsBoolean()) {
            waiting[cur.ordinal()]--;
            cur = Priority.DEMAND;
            waiting[cur.ordinal()]++;
          }
          if (mayStart(cur)) {
            break;
          }
          turns[cur.ordinal()].await();
        }
      } finally {
        waiting[cur.ordinal()]--;
      }
      running++;
      if (cur != Priority.DEMAND) {
        runningSpeculative++;
      }
      peak = Math.max(peak, running);
      return cur;
    } finally {
      lock.unlock();
    }
  }

  private boolean mayStart(Priority p) {
    if (running >= limit) {
      return false;
    }
    if (p == Priority.DEMAND) {
      return true;
    }
    if (waiting[Priority.DEMAND.ordinal()] > 0 || runningSpeculative >= limit - reserve) {
      return false;
    }
    return p != Priority.ADMIN || waiting[Priority.PREFETCH.ordinal()] == 0;
  }

  /** Ends a read that {@link #acquire} let start with priority {@code p}. */
  void release(Priority p) {
    lock.lock();
    try {
      running--;
      if (p != Priority.DEMAND) {
        runningSpeculative--;
      }
      wakeAll();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes the waiting speculative reads: one of them may have been promoted. */
  void promoted() {
    lock.lock();
    try {
      wakeAll();
    } finally {
      lock.unlock();
    }
  }

  private void wakeAll() {
    for (Condition c : turns) {
      c.signalAll();
    }
  }

  /** A figure read under the lock. */
  private int locked(java.util.function.IntSupplier figure) {
    lock.lock();
    try {
      return figure.getAsInt();
    } finally {
      lock.unlock();
    }
  }

  /** Reads allowed at once. */
  int limit() {
    return limit;
  }

  /** Reads only a reader's miss may take. */
  int reserve() {
    return reserve;
  }

  /** The most reads that ran at once so far. */
  int peak() {
    return locked(() -> peak);
  }

  /** Prefetches and admin fetches running now. */
  int runningSpeculative() {
    return locked(() -> runningSpeculative);
  }

  /** Readers' misses waiting for a read now. */
  int demandWaiting() {
    return locked(() -> waiting[Priority.DEMAND.ordinal()]);
  }
}
