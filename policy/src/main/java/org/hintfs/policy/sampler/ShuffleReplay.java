package org.hintfs.policy.sampler;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One seeded {@code DataLoader(shuffle=True)}'s orders, epoch after epoch, in O(n) per epoch at any
 * epoch: {@link TorchSamplers#dataLoaderShuffle} without building the permutations it drops.
 *
 * <p>Each epoch of the loader draws, from its generator, the iterator's {@code _base_seed} (2
 * outputs; with persistent workers at the first epoch only), the epoch's {@code randperm(n)}, and
 * the sampler's empty tail, one more {@code randperm(n)}. How many outputs each takes is a count
 * ({@link TorchGenerator#randpermDraws}), so reaching epoch E is a {@link TorchGenerator#skip} of
 * them, and the epoch itself is the one permutation built. The generator is kept as it stands at
 * the start of each epoch built and of the one after it, the last {@link #KEPT} of them (2.5 KB
 * each), and an epoch starts from the nearest before it: a run's next epoch costs one permutation
 * and one skip of n, not E + 1 permutations, and so does an epoch read again, or each of two jobs
 * of one seed at different epochs.
 *
 * <p>Thread-safe; the orders returned are the caller's.
 */
public final class ShuffleReplay {
  /** Outputs of the iterator's {@code _base_seed} draw ({@link TorchGenerator#randomInt64}). */
  private static final int BASE_SEED_DRAWS = 2;

  private final int n;
  private final long seed;
  private final boolean persistentWorkers;

  /** Generator states kept, at the start of an epoch each. */
  static final int KEPT = 8;

  /** The generator at the start of each epoch kept, least recently used first. */
  private final Map<Integer, TorchGenerator> starts =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, TorchGenerator> eldest) {
          return size() > KEPT;
        }
      };

  public ShuffleReplay(int n, long seed, boolean persistentWorkers) {
    this.n = n;
    this.seed = seed;
    this.persistentWorkers = persistentWorkers;
  }

  /** {@code dataLoaderShuffle(n, seed, epoch + 1, persistentWorkers)[epoch]}, built alone. */
  public synchronized int[] epoch(int epoch) {
    TorchGenerator g = startOf(epoch);
    starts.put(epoch, g.copy());
    g.skip(baseSeedDraws(epoch));
    int[] order = g.randperm(n);
    g.skip(TorchGenerator.randpermDraws(n)); // the sampler's tail: randperm(n)[:0]
    starts.put(epoch + 1, g);
    return order;
  }

  /**
   * The first {@code m} samples of {@code epoch}'s order: m draws of the forward Fisher-Yates, not
   * a permutation of n (for n below {@link TorchGenerator#LARGE_N}).
   */
  public synchronized int[] head(int epoch, int m) {
    TorchGenerator g = startOf(epoch);
    g.skip(baseSeedDraws(epoch));
    int len = Math.min(m, n);
    if (n >= TorchGenerator.LARGE_N) {
      return java.util.Arrays.copyOf(g.randperm(n), len); // the inside-out shuffle has no prefix
    }
    return OrderDetector.randpermPrefix(g, n, len);
  }

  /**
   * A generator of its own at the start of {@code epoch}: from the kept state nearest before it (or
   * a fresh one), skipped ahead epoch by epoch.
   */
  private TorchGenerator startOf(int epoch) {
    int from = -1;
    for (int e : starts.keySet()) {
      if (e <= epoch && e > from) {
        from = e;
      }
    }
    TorchGenerator g = from < 0 ? new TorchGenerator(seed) : starts.get(from).copy();
    long outputs = 0;
    for (int e = Math.max(0, from); e < epoch; e++) {
      outputs += baseSeedDraws(e) + 2 * TorchGenerator.randpermDraws(n);
    }
    g.skip(outputs);
    return g;
  }

  private int baseSeedDraws(int epoch) {
    return epoch == 0 || !persistentWorkers ? BASE_SEED_DRAWS : 0;
  }
}
