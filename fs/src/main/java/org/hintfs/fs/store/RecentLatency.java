package org.hintfs.fs.store;

import java.util.Arrays;

/**
 * The times of the last {@link #WINDOW} answers of something remote (the source, a peer), and a
 * bound taken from them: how long to wait before treating one that has not answered as lost.
 *
 * <p>Bound: {@code factor} times the 90th percentile of the remembered times, between {@code min}
 * and {@code max}; {@code initial} until {@link #WARM} answers have come (a JVM's first are its
 * slowest). Synchronized: an update and a bound cost a copy and a sort of 64 longs.
 */
public final class RecentLatency {
  /** Answers remembered. */
  public static final int WINDOW = 64;

  /** Answers before the bound is taken from them. */
  public static final int WARM = 16;

  private final long initialMillis;
  private final int factor;
  private final long minMillis;
  private final long maxMillis;
  private final long[] micros = new long[WINDOW];
  private int answers;

  /** A bound of {@code factor} x p90, clamped to [min, max] ms; {@code initial} ms until warm. */
  public RecentLatency(long initialMillis, int factor, long minMillis, long maxMillis) {
    this.initialMillis = initialMillis;
    this.factor = factor;
    this.minMillis = minMillis;
    this.maxMillis = maxMillis;
  }

  /** One answer that took {@code nanos}. */
  public synchronized void answered(long nanos) {
    micros[answers % WINDOW] = nanos / 1000;
    answers++;
  }

  /** How long to wait for the next answer, in milliseconds. */
  public synchronized long boundMillis() {
    if (answers < WARM) {
      return initialMillis;
    }
    int n = Math.min(answers, WINDOW);
    long[] recent = Arrays.copyOf(micros, n);
    Arrays.sort(recent);
    long p90 = recent[Math.min(n - 1, (int) Math.ceil(n * 0.9) - 1)];
    return Math.max(minMillis, Math.min(maxMillis, factor * p90 / 1000));
  }
}
