package org.hintfs.policy.sim;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.hintfs.policy.Importance;

/**
 * Synthetic traces, all seeded:
 *
 * <ul>
 *   <li>{@link #uniform}: every epoch a random permutation of all samples (what DistributedSampler
 *       with one rank produces; the exact torch order is replayed elsewhere);
 *   <li>{@link #importanceSampling}: every epoch N draws with replacement, each sample with
 *       probability proportional to its SHADE rank score, from a model whose per-sample losses
 *       drift as it learns;
 *   <li>{@link #pads}: SHADE's PADS, a closed loop: the same draws, ordered so that samples the
 *       cache holds come first and repetitions of a sample are adjacent. It needs the cache's
 *       state, so it runs inside the simulation.
 * </ul>
 *
 * <p>The model behind the losses: each sample has a hidden difficulty (log-normal); a training step
 * on it shrinks the difficulty by 3%, and its loss is the difficulty times log-normal noise.
 * Batches of 64 give per-sample losses, which become rank scores as in SHADE.
 */
public final class TraceGenerators {
  /** Samples per minibatch: SHADE's default and the size rank scores are computed in. */
  public static final int BATCH = 64;

  /** Classes in generated traces (ImageNet-like proportions do not matter here). */
  public static final int CLASSES = 10;

  private TraceGenerators() {}

  static int[] sizes(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed ^ 0x5EEDL);
    int[] s = new int[n];
    for (int i = 0; i < n; i++) {
      s[i] = (int) Math.max(1_000, 110_000 + 30_000 * gaussian(r));
    }
    return s;
  }

  static double gaussian(SplittableRandom r) {
    double u = 1 - r.nextDouble();
    double v = r.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Uniform epoch shuffles of {@code n} samples. */
  public static Trace uniform(int n, int epochs, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] size = sizes(n, seed);
    Trace t = new Trace();
    int[] perm = new int[n];
    for (int e = 0; e < epochs; e++) {
      for (int i = 0; i < n; i++) {
        perm[i] = i;
      }
      for (int i = n - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        int x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
      }
      for (int s : perm) {
        t.read(e, s, size[s], s % CLASSES);
      }
    }
    return t;
  }

  /** The learning model that produces losses. */
  static final class Model {
    final double[] difficulty;
    final SplittableRandom r;

    Model(int n, long seed) {
      r = new SplittableRandom(seed ^ 0xD1FFL);
      difficulty = new double[n];
      for (int i = 0; i < n; i++) {
        difficulty[i] = Math.exp(gaussian(r));
      }
    }

    float lossOf(int s) {
      float loss = (float) (difficulty[s] * Math.exp(0.3 * gaussian(r)));
      difficulty[s] *= 0.97;
      return loss;
    }
  }

  /** N draws with replacement, proportional to score (1 for samples with none yet). */
  static int[] draw(Importance imp, int n, SplittableRandom r) {
    double[] cum = new double[n];
    double total = 0;
    for (int i = 0; i < n; i++) {
      total += imp.known(i) ? imp.score(i) : 1.0;
      cum[i] = total;
    }
    int[] out = new int[n];
    for (int k = 0; k < n; k++) {
      int i = Arrays.binarySearch(cum, r.nextDouble() * total);
      out[k] = i >= 0 ? i : -i - 1;
    }
    return out;
  }

  /** Emits one epoch's reads in batches, each followed by its losses. */
  static void emit(Trace t, int epoch, int[] order, int[] size, Model m, Importance imp) {
    for (int b = 0; b < order.length; b += BATCH) {
      int end = Math.min(order.length, b + BATCH);
      int[] batch = Arrays.copyOfRange(order, b, end);
      float[] losses = new float[batch.length];
      for (int k = 0; k < batch.length; k++) {
        t.read(epoch, batch[k], size[batch[k]], batch[k] % CLASSES);
        losses[k] = m.lossOf(batch[k]);
      }
      t.scores(true, batch, losses);
      imp.recordBatch(batch, losses);
    }
  }

  /** Loss-based importance sampling with replacement, as SHADE's sampler draws. */
  public static Trace importanceSampling(int n, int epochs, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] size = sizes(n, seed);
    Model m = new Model(n, seed);
    Importance imp = new Importance(n);
    Trace t = new Trace();
    for (int e = 0; e < epochs; e++) {
      emit(t, e, draw(imp, n, r), size, m, imp);
    }
    return t;
  }

  /**
   * SHADE's PADS in closed loop with a simulated cache running {@code policy}: every epoch draws as
   * {@link #importanceSampling} does, then orders the draws so that the samples the cache holds at
   * the start of the epoch come first, and all draws of one sample are adjacent (SHADE's {@code <3,
   * 3, 5, 5, 2>}): a repetition of a sample that was just fetched is a hit for any policy that
   * admitted it.
   */
  public static Simulator.Result pads(
      int n, int epochs, long seed, String policy, double fraction, Simulator.Options opt) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] size = sizes(n, seed);
    long bytes = Arrays.stream(size).asLongStream().sum();
    int[] classes = new int[n];
    for (int i = 0; i < n; i++) {
      classes[i] = i % CLASSES;
    }
    Simulator.Run run = new Simulator.Run(n, classes, null, policy, (long) (bytes * fraction), opt);
    Model m = new Model(n, seed);
    Importance gen = new Importance(n);
    for (int e = 0; e < epochs; e++) {
      int[] drawn = draw(gen, n, r);
      int[] order = padsOrder(drawn, run.cached::get, r);
      for (int b = 0; b < order.length; b += BATCH) {
        int end = Math.min(order.length, b + BATCH);
        int[] batch = Arrays.copyOfRange(order, b, end);
        float[] losses = new float[batch.length];
        for (int k = 0; k < batch.length; k++) {
          run.read(e, batch[k], size[batch[k]]);
          losses[k] = m.lossOf(batch[k]);
        }
        gen.recordBatch(batch, losses);
        run.apply(new Trace.ScoreEvent(0, true, batch, losses));
      }
    }
    return run.finish(fraction);
  }

  /** Cached samples' draws first, then the rest; each sample's draws adjacent; groups shuffled. */
  static int[] padsOrder(int[] drawn, java.util.function.IntPredicate cached, SplittableRandom r) {
    int n = drawn.length;
    int[] count = new int[n];
    for (int s : drawn) {
      count[s]++;
    }
    int[] distinct = Arrays.stream(drawn).distinct().toArray();
    for (int i = distinct.length - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int x = distinct[i];
      distinct[i] = distinct[j];
      distinct[j] = x;
    }
    int[] out = new int[n];
    int k = 0;
    for (int pass = 0; pass < 2; pass++) {
      for (int s : distinct) {
        if (cached.test(s) == (pass == 0)) {
          for (int c = 0; c < count[s]; c++) {
            out[k++] = s;
          }
        }
      }
    }
    return out;
  }
}
