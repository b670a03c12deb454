package org.hintfs.policy.sampler;

/**
 * One seeded {@code DataLoader(shuffle=True)}'s orders, epoch after epoch, in O(n) per epoch at any
 * epoch: {@link TorchSamplers#dataLoaderShuffle} without building the permutations it drops.
 *
 * <p>Each epoch of the loader draws, from its generator, the iterator's {@code _base_seed} (2
 * outputs; with persistent workers at the first epoch only), the epoch's {@code randperm(n)}, and
 * the sampler's empty tail, one more {@code randperm(n)}. How many outputs each takes is a count
 * ({@link TorchGenerator#randpermDraws}), so reaching epoch E is a {@link TorchGenerator#skip} of
 * them, and the epoch itself is the one permutation built. The generator is kept as it stands at
 * the start of the epoch after the last one built (and at the start of that one, for a reader that
 * reads it again), so a run's next epoch costs one permutation, not E + 1, and nothing but two
 * generators' states (5 KB) is kept between epochs.
 *
 * <p>Thread-safe; the orders returned are the caller's.
 */
public final class ShuffleReplay {
  /** Outputs of the iterator's {@code _base_seed} draw ({@link TorchGenerator#randomInt64}). */
  private static final int BASE_SEED_DRAWS = 2;

  private final int n;
  private final long seed;
  private final boolean persistentWorkers;

  /** The generator at the start of epoch {@link #lastEpoch}, the last one built (null: none). */
  private TorchGenerator lastStart;

  private int lastEpoch;

  /** The generator at the start of epoch {@link #nextEpoch} (null: none built yet). */
  private TorchGenerator nextStart;

  private int nextEpoch;

  public ShuffleReplay(int n, long seed, boolean persistentWorkers) {
    this.n = n;
    this.seed = seed;
    this.persistentWorkers = persistentWorkers;
  }

  /** {@code dataLoaderShuffle(n, seed, epoch + 1, persistentWorkers)[epoch]}, built alone. */
  public synchronized int[] epoch(int epoch) {
    TorchGenerator g = startOf(epoch);
    lastStart = g.copy();
    lastEpoch = epoch;
    g.skip(baseSeedDraws(epoch));
    int[] order = g.randperm(n);
    g.skip(TorchGenerator.randpermDraws(n)); // the sampler's tail: randperm(n)[:0]
    nextStart = g;
    nextEpoch = epoch + 1;
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
    TorchGenerator base;
    int from;
    if (nextStart != null && nextEpoch <= epoch) {
      base = nextStart;
      from = nextEpoch;
    } else if (lastStart != null && lastEpoch <= epoch) {
      base = lastStart;
      from = lastEpoch;
    } else {
      base = new TorchGenerator(seed);
      from = 0;
    }
    TorchGenerator g = base.copy();
    long outputs = 0;
    for (int e = from; e < epoch; e++) {
      outputs += baseSeedDraws(e) + 2 * TorchGenerator.randpermDraws(n);
    }
    g.skip(outputs);
    return g;
  }

  private int baseSeedDraws(int epoch) {
    return epoch == 0 || !persistentWorkers ? BASE_SEED_DRAWS : 0;
  }
}
