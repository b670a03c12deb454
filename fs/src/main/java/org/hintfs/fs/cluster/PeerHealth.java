package org.hintfs.fs.cluster;

import org.hintfs.fs.store.RecentLatency;

/**
 * How long to wait for one home before reading the source instead, and whether to ask it at all:
 * from that home's recent answers. A home that is alive but slow (its disk stalled, its CPU taken)
 * is never suspected by failure detection, so without this a reader waited for it up to the ask's
 * whole timeout.
 *
 * <p>Hedge bound: {@link #HEDGE_FACTOR} times the 90th percentile of the last 64 answers' times,
 * never under {@link #MIN_HEDGE_MILLIS} nor over {@link #MAX_HEDGE_MILLIS}; {@link
 * #INITIAL_HEDGE_MILLIS} until 16 answers have come ({@link RecentLatency}). An ask past it is
 * given up (its answer, if it comes, is dropped) and the source read here: one more GET for that
 * file.
 *
 * <p>Skip: after {@link #BAD_IN_A_ROW} asks in a row that failed or ran past the bound, the home is
 * not asked for {@link #SKIP_MILLIS} (doubling while it stays bad, up to {@link #MAX_SKIP_MILLIS});
 * then one ask goes to it, the probe, while the others still skip it: one good answer makes it a
 * home like any other, a bad one starts the next skip. A home slow only for what it must fetch
 * itself (its source is slow) answers fast again once it holds what is asked: short skips and one
 * probe at a time find that within seconds, at the cost of one reader's bound per probe.
 *
 * <p>Concurrency: synchronized on this object (the bound on {@link RecentLatency}'s own); nothing
 * here waits or does I/O.
 */
final class PeerHealth {
  /** The bound before 16 answers: a fresh member's first asks took up to 0.5 s here. */
  static final long INITIAL_HEDGE_MILLIS = 1_000;

  /** The bound over the 90th percentile: a home's answer includes its own misses' source reads. */
  static final int HEDGE_FACTOR = 4;

  /**
   * The least bound: a loaded 2-core CI machine paused a healthy member's answers for a few hundred
   * ms at times (GC, JIT), and each hedge costs a second source read of that file.
   */
  static final long MIN_HEDGE_MILLIS = 500;

  /** The most bound: a home slower than this is treated as gone. */
  static final long MAX_HEDGE_MILLIS = 5_000;

  /** Failed or lagging asks in a row before the home is skipped. */
  static final int BAD_IN_A_ROW = 3;

  /** The first skip; each further one doubles it. */
  static final long SKIP_MILLIS = 1_000;

  /** The longest skip: a probe at least this often. */
  static final long MAX_SKIP_MILLIS = 8_000;

  private final RecentLatency latency =
      new RecentLatency(INITIAL_HEDGE_MILLIS, HEDGE_FACTOR, MIN_HEDGE_MILLIS, MAX_HEDGE_MILLIS);
  private int badInARow;
  private int skips;
  private long skipUntilNanos;
  private boolean probing;

  /** How long to wait for this home's answer now, in milliseconds. */
  long hedgeMillis() {
    return latency.boundMillis();
  }

  /**
   * True while this home is skipped: the source is read without asking it. Once a skip is over, the
   * first caller is let through as the probe and the others skip until its answer.
   */
  synchronized boolean skipped(long nowNanos) {
    if (badInARow < BAD_IN_A_ROW) {
      return false;
    }
    if (nowNanos - skipUntilNanos < 0 || probing) {
      return true;
    }
    probing = true;
    return false;
  }

  /** An answer that came within the bound and checked. */
  synchronized void answered(long nanos) {
    latency.answered(nanos);
    badInARow = 0;
    skips = 0;
    probing = false;
  }

  /**
   * An ask that failed or ran past the bound.
   *
   * @return true if this one starts the first skip since the home last answered well
   */
  synchronized boolean failed(long nowNanos) {
    badInARow++;
    probing = false;
    if (badInARow < BAD_IN_A_ROW || nowNanos - skipUntilNanos < 0) {
      return false;
    }
    long ms = Math.min(MAX_SKIP_MILLIS, SKIP_MILLIS << Math.min(skips, 10));
    skips++;
    skipUntilNanos = nowNanos + ms * 1_000_000;
    return skips == 1;
  }
}
