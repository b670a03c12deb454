package org.hintfs.policy;

import java.util.Arrays;

/**
 * Every sample's latest importance score: SHADE's "ghost cache", a float per sample that outlives
 * the sample's stay in the cache.
 *
 * <p>Scores arrive directly ({@link #set}) or as one minibatch of per-sample losses ({@link
 * #recordBatch}), turned into SHADE's rank score (Eq. 6): {@code log(#{k in batch: l_i > l_k} +
 * b0)}, so only the order of losses inside a batch matters, not their scale. With b0 = 10 and a
 * batch of 64 the scores span log(10) = 2.30 to log(73) = 4.29: at most 1.9x apart.
 *
 * <p>H-samples (ImPACT's H-list) are the top {@link #highFraction()} of known scores (default 20%,
 * ImPACT's usual cache share); an unscored sample is never an H-sample. The threshold is the
 * matching quantile of all known scores, recomputed after every max(64, known/10) score updates, so
 * its O(n log n) sort costs about a microsecond per update.
 */
public final class Importance {
  /** SHADE's b0: keeps the lowest rank's score positive (log(0) is undefined). */
  public static final double B0 = 10.0;

  private final float[] score;
  private double sum;
  private int known;
  private double highFraction = 0.2;
  private float threshold = Float.NaN;
  private long updatesSinceThreshold = Long.MAX_VALUE / 2;

  /** Told whenever a sample's score changes (policies keep their heaps in order). */
  @FunctionalInterface
  public interface IntListener {
    void changed(int sample);
  }

  /** Scores for {@code samples} samples, all unknown (NaN). */
  public Importance(int samples) {
    this.score = new float[samples];
    Arrays.fill(score, Float.NaN);
  }

  private final java.util.List<IntListener> listeners = new java.util.ArrayList<>();

  /** Registers a listener for score changes. */
  public void addListener(IntListener l) {
    listeners.add(l);
  }

  public int samples() {
    return score.length;
  }

  /** The latest score, or NaN if none arrived yet. */
  public float score(int s) {
    return score[s];
  }

  /** True once a sample has a score. */
  public boolean known(int s) {
    return !Float.isNaN(score[s]);
  }

  /** Sets a score directly (an {@code importance} hint). */
  public void set(int s, float v) {
    if (Float.isNaN(v) || Float.isInfinite(v)) {
      throw new IllegalArgumentException("score of sample " + s + " must be finite, not " + v);
    }
    if (known(s)) {
      sum -= score[s];
    } else {
      known++;
    }
    score[s] = v;
    sum += v;
    updatesSinceThreshold++;
    for (IntListener l : listeners) {
      l.changed(s);
    }
  }

  /**
   * One minibatch of losses: each sample gets {@code log(#{k: l_i > l_k} + b0)}.
   *
   * @throws IllegalArgumentException if the arrays differ in length or a loss is not finite
   */
  public void recordBatch(int[] samples, float[] losses) {
    if (samples.length != losses.length) {
      throw new IllegalArgumentException("one loss per sample");
    }
    int n = samples.length;
    float[] sorted = losses.clone();
    for (float l : sorted) {
      if (Float.isNaN(l) || Float.isInfinite(l)) {
        throw new IllegalArgumentException("losses must be finite, not " + l);
      }
    }
    Arrays.sort(sorted);
    for (int i = 0; i < n; i++) {
      // Number of losses strictly below l_i: the first index holding l_i in the sorted copy.
      int below = lowerBound(sorted, losses[i]);
      set(samples[i], (float) Math.log(below + B0));
    }
  }

  private static int lowerBound(float[] a, float v) {
    int lo = 0;
    int hi = a.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (a[mid] < v) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** The mean of all known scores (NaN if none). */
  public double mean() {
    return known == 0 ? Double.NaN : sum / known;
  }

  /** Number of samples with a score. */
  public int knownCount() {
    return known;
  }

  /** The share of scored samples that are H-samples. */
  public double highFraction() {
    return highFraction;
  }

  /** Sets the share of H-samples (0..1). */
  public void setHighFraction(double f) {
    if (!(f >= 0 && f <= 1)) {
      throw new IllegalArgumentException("the H-sample share must be in [0, 1], not " + f);
    }
    highFraction = f;
    updatesSinceThreshold = Long.MAX_VALUE / 2;
  }

  /** An H-sample: scored, and among the top {@link #highFraction()} of known scores. */
  public boolean isHigh(int s) {
    return known(s) && highFraction > 0 && score[s] >= threshold();
  }

  /** The lowest score an H-sample has (NaN while nothing is scored). */
  public float threshold() {
    if (updatesSinceThreshold >= Math.max(64, known / 10)) {
      float[] k = new float[known];
      int j = 0;
      for (float v : score) {
        if (!Float.isNaN(v)) {
          k[j++] = v;
        }
      }
      Arrays.sort(k);
      threshold =
          known == 0
              ? Float.NaN
              : k[Math.min(known - 1, (int) Math.floor((1 - highFraction) * known))];
      updatesSinceThreshold = 0;
    }
    return threshold;
  }
}
