package org.hintfs.policy.sampler;

import java.util.Arrays;

/** The orders PyTorch's samplers produce, replayed. */
public final class TorchSamplers {
  private TorchSamplers() {}

  /**
   * {@code DistributedSampler(dataset of n, num_replicas=world, rank=rank, shuffle, seed,
   * drop_last)} after {@code set_epoch(epoch)}: every world-th index of {@link #distributedJob}
   * from rank.
   */
  public static int[] distributed(
      int n, int world, int rank, boolean shuffle, long seed, long epoch, boolean dropLast) {
    if (world < 1 || rank < 0 || rank >= world) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + world + ")");
    }
    int[] job = distributedJob(n, world, shuffle, seed, epoch, dropLast);
    int[] out = new int[job.length / world];
    for (int k = 0, i = rank; i < job.length; i += world, k++) {
      out[k] = job[i];
    }
    return out;
  }

  /**
   * What every rank of a {@code DistributedSampler} job reads in one epoch, interleaved: rank
   * {@code r}'s {@code k}-th sample is at {@code k * world + r}. A permutation from a generator
   * seeded with {@code seed + epoch}; without drop_last, padded by repeating its start up to a
   * multiple of world; with it, cut down to one. One permutation serves every rank (the simulator
   * of a job of a thousand ranks draws it once).
   */
  public static int[] distributedJob(
      int n, int world, boolean shuffle, long seed, long epoch, boolean dropLast) {
    if (world < 1) {
      throw new IllegalArgumentException("world " + world + " is not at least 1");
    }
    int numSamples =
        dropLast && n % world != 0
            ? (int) Math.ceil((double) (n - world) / world)
            : (int) Math.ceil((double) n / world);
    int total = numSamples * world;
    int[] indices;
    if (shuffle) {
      indices = new TorchGenerator(seed + epoch).randperm(n);
    } else {
      indices = new int[n];
      for (int i = 0; i < n; i++) {
        indices[i] = i;
      }
    }
    int[] padded = Arrays.copyOf(indices, total);
    if (!dropLast) {
      for (int i = n; i < total; i++) {
        padded[i] = indices[(i - n) % n];
      }
    }
    return padded;
  }

  /**
   * The first {@code m} samples of {@link #distributed}'s order, from the permutation's first
   * {@code m * world} places (a sparse Fisher-Yates), not from a permutation of n.
   */
  public static int[] distributedHead(
      int n, int world, int rank, long seed, long epoch, boolean dropLast, int m) {
    if (world < 1 || rank < 0 || rank >= world) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + world + ")");
    }
    int len = Math.min(m, distributedLength(n, world, dropLast));
    if (n >= TorchGenerator.LARGE_N || (long) len * world > Integer.MAX_VALUE) {
      return Arrays.copyOf(distributed(n, world, rank, true, seed, epoch, dropLast), len);
    }
    int[] job = OrderDetector.distributedPrefix(n, seed + epoch, len * world);
    int[] out = new int[len];
    for (int k = 0; k < len; k++) {
      out[k] = job[k * world + rank];
    }
    return out;
  }

  /**
   * Every rank's order of {@link #distributed} at once, as positions: for each sample of the
   * dataset, where in its rank's order it is read first (-1 if drop_last cut it). Rank {@code r}
   * reads position {@code k} at the same step as every other rank (DDP keeps them in lockstep), so
   * this is the job's order on one clock. One permutation, not one per rank.
   */
  public static int[] distributedPositions(
      int n, int world, boolean shuffle, long seed, long epoch, boolean dropLast) {
    int[] job = distributedJob(n, world, shuffle, seed, epoch, dropLast);
    int[] pos = new int[n];
    Arrays.fill(pos, -1);
    // The first n places hold each sample once; any after them repeat the start (padding).
    for (int i = Math.min(job.length, n) - 1; i >= 0; i--) {
      pos[job[i]] = i / world;
    }
    return pos;
  }

  /** The length of each rank's order in {@link #distributed}. */
  public static int distributedLength(int n, int world, boolean dropLast) {
    return dropLast && n % world != 0
        ? (int) Math.ceil((double) (n - world) / world)
        : (int) Math.ceil((double) n / world);
  }

  /**
   * The orders {@code DataLoader(dataset of n, shuffle=True, generator=g)} reads over several
   * epochs, {@code g} seeded with {@code seed}. Each {@code iter(loader)} first draws the
   * iterator's {@code _base_seed} (one 64-bit value) from {@code g}, then {@code RandomSampler}
   * draws {@code randperm(n)} from it, and when it is exhausted one more {@code randperm(n)} for
   * the {@code [:num_samples % n]} tail, empty here but drawn all the same. With persistent workers
   * the iterator, and so the base-seed draw, is made once, at the first epoch only.
   *
   * <p>Every epoch's order, each built: the reference {@link ShuffleReplay} (one epoch at a time,
   * the others skipped) is checked against, and torch checks this.
   */
  public static int[][] dataLoaderShuffle(int n, long seed, int epochs, boolean persistentWorkers) {
    TorchGenerator g = new TorchGenerator(seed);
    int[][] out = new int[epochs][];
    for (int e = 0; e < epochs; e++) {
      if (e == 0 || !persistentWorkers) {
        g.randomInt64();
      }
      out[e] = g.randperm(n);
      g.randperm(n); // RandomSampler's tail: torch.randperm(n)[:num_samples % n], here [:0]
    }
    return out;
  }
}
