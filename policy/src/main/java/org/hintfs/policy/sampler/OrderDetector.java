package org.hintfs.policy.sampler;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Recognises a PyTorch sampler's order from the first files a reader opened, with no hint.
 *
 * <p>What is searched: {@code DistributedSampler(shuffle=True)} with generator seed {@code g = seed
 * + epoch} for every {@code g} the candidate seeds and epochs give, every world size up to {@link
 * Options#maxWorld} and every rank (drop_last changes only an epoch's tail, so it cannot be told
 * from the first reads and is taken as off); and {@code DataLoader(shuffle=True,
 * generator=torch.Generator().manual_seed(s))}'s first epoch ({@code _base_seed} draw, then {@code
 * randperm}).
 *
 * <p>Cost: {@code randperm(n)} for n below 214,748,364 is a forward Fisher-Yates, so its first m
 * elements need m draws and a sparse swap map, not a permutation of n. Rank r of world W reads
 * positions r, r + W, r + 2W... of it, so one prefix of {@code reach * maxWorld} elements answers
 * every (W, r) at once: each observed sample's first position q in the prefix puts it in rank q mod
 * W at index q / W. Per generator seed: {@code reach * maxWorld} draws and {@code K * maxWorld}
 * lookups, whatever n is.
 *
 * <p>Matching: DataLoader workers open the first batches out of order (8 workers with batch 256 ask
 * for 4,096 samples at once), so the observed opens are matched as a set against the candidate's
 * first positions: for world W, the first {@code reach * maxWorld / W} of its rank's positions (the
 * whole prefix drawn, 65,536 with the defaults, so a smaller world looks further at no extra cost),
 * at most n / 4 of them (on a small dataset a long reach would hold every sample). A candidate is
 * accepted only if at least 90% of the opens fall there and the chance that as many uniformly
 * random reads would, {@code C(K, c) p^c} with p the widest reach over n, times the number of
 * candidates tried, is below {@link Options#maxChance}.
 *
 * <p>Order of the search: generator seeds epoch by epoch (every candidate seed at epoch 0, then at
 * epoch 1, ...), the most likely first, and it stops after a generator seed whose best candidate is
 * beyond any doubt ({@link #CERTAIN}: a chance 10^10 times below the acceptance bound). A default
 * {@code DistributedSampler} is then found after one generator seed instead of all 2,500: the
 * search costs milliseconds, not seconds of a 2-core node's CPU. Failed searches still try every
 * candidate.
 */
public final class OrderDetector {
  /** How far below the acceptance bound (log10) a match must be for the search to stop early. */
  static final double CERTAIN = 10;

  /** Positions of a seeded DataLoader shuffle's order the first opens are matched against. */
  static final int RANDOM_REACH = 8_192;

  private OrderDetector() {}

  /**
   * What to search.
   *
   * @param seeds candidate sampler seeds
   * @param maxEpoch epochs 0..maxEpoch for each seed
   * @param maxWorld world sizes 1..maxWorld
   * @param reach positions from an epoch's start that the first opens may come from, at the largest
   *     world (a world W looks {@code maxWorld / W} times as far)
   * @param maxChance the largest accepted chance that random reads match as well (all candidates)
   */
  public record Options(long[] seeds, int maxEpoch, int maxWorld, int reach, double maxChance) {
    /** Seeds 0..100 and common ones, epochs 0..20, worlds 1..64. */
    public static Options defaults() {
      long[] common = {
        123, 777, 1234, 1337, 2020, 2021, 2022, 2023, 2024, 2025, 3407, 12345, 31337
      };
      long[] seeds = new long[101 + common.length];
      for (int s = 0; s <= 100; s++) {
        seeds[s] = s;
      }
      System.arraycopy(common, 0, seeds, 101, common.length);
      return new Options(seeds, 20, 64, 1024, 1e-9);
    }
  }

  /**
   * A recognised order.
   *
   * @param sampler "distributed" or "random"
   * @param generatorSeed the generator's seed: seed + epoch for "distributed", the seed for
   *     "random" (epoch 0)
   * @param matched opens found in the candidate's first {@code reach} positions
   * @param log10Chance log10 of the chance random reads match as well, all candidates counted
   */
  public record Match(
      String sampler,
      long generatorSeed,
      int world,
      int rank,
      int matched,
      int observed,
      double log10Chance) {}

  /**
   * The candidate that explains {@code observed} (dataset indices of the first opens, distinct), or
   * null if none does beyond doubt.
   */
  public static Match detect(int n, int[] observed, Options o) {
    return detect(n, observed, o, true);
  }

  /** {@link #detect}; {@code stopEarly} false tries every candidate (to check the early stop). */
  static Match detect(int n, int[] observed, Options o, boolean stopEarly) {
    if (observed.length == 0 || n >= (int) (0xffffffffL / 20)) {
      return null;
    }
    long[] gs = generatorSeeds(o);
    long candidates = gs.length * (long) o.maxWorld() * (o.maxWorld() + 1) / 2 + o.seeds().length;
    int need = (int) Math.ceil(0.9 * observed.length);
    Match best = null;
    int prefixLength = (int) Math.min((long) o.reach() * o.maxWorld(), Integer.MAX_VALUE - 8);
    int[] firstPos = new int[n];
    Arrays.fill(firstPos, -1);
    int[] reachOf = new int[o.maxWorld() + 1];
    for (int w = 1; w <= o.maxWorld(); w++) {
      reachOf[w] = Math.max(1, Math.min(prefixLength / w, n / 4));
    }
    int[] rankCount = new int[o.maxWorld()];
    int[] rankSpan = new int[o.maxWorld()];
    int bestSpan = Integer.MAX_VALUE;
    // Past n the padded order repeats its start, and only a sample's first position is matched:
    // a prefix longer than n adds nothing (on 2,000 samples, 97% of the positions drawn: a failed
    // search 117 -> 28 ms).
    int drawn = Math.min(prefixLength, n);
    for (long g : gs) {
      int[] prefix = distributedPrefix(n, g, drawn);
      for (int q = prefix.length - 1; q >= 0; q--) {
        firstPos[prefix[q]] = q;
      }
      for (int w = 1; w <= o.maxWorld(); w++) {
        Arrays.fill(rankCount, 0, w, 0);
        Arrays.fill(rankSpan, 0, w, 0);
        for (int s : observed) {
          int q = firstPos[s];
          if (q >= 0 && q / w < reachOf[w]) {
            rankCount[q % w]++;
            rankSpan[q % w] = Math.max(rankSpan[q % w], q / w);
          }
        }
        for (int r = 0; r < w; r++) {
          // More opens explained wins; at equal counts, the tighter fit (a rank of world 4 also
          // lies within the first positions of world 1's order, but spread 4 times as wide).
          if (rankCount[r] >= need
              && (best == null
                  || rankCount[r] > best.matched()
                  || (rankCount[r] == best.matched() && rankSpan[r] < bestSpan))) {
            best =
                match(
                    "distributed",
                    g,
                    w,
                    r,
                    rankCount[r],
                    observed.length,
                    n,
                    reachOf[1],
                    candidates);
            bestSpan = rankSpan[r];
          }
        }
      }
      for (int v : prefix) {
        firstPos[v] = -1;
      }
      if (stopEarly && best != null && best.log10Chance() <= Math.log10(o.maxChance()) - CERTAIN) {
        return best; // beyond any doubt: no other candidate can explain the opens as well
      }
    }
    for (long s : o.seeds()) {
      TorchGenerator gen = new TorchGenerator(s);
      gen.randomInt64(); // the DataLoader iterator's _base_seed
      // One rank: 8,192 positions cover 8 workers x 2 batches of 512 (a longer reach would cost
      // this path's sparse swap map more than every distributed candidate together).
      int[] prefix = randpermPrefix(gen, n, Math.min(RANDOM_REACH, reachOf[1]));
      for (int v : prefix) {
        firstPos[v] = 0;
      }
      int c = 0;
      for (int x : observed) {
        c += firstPos[x] == 0 ? 1 : 0;
      }
      for (int v : prefix) {
        firstPos[v] = -1;
      }
      if (c >= need && (best == null || c > best.matched())) {
        best = match("random", s, 1, 0, c, observed.length, n, reachOf[1], candidates);
        bestSpan = Math.min(RANDOM_REACH, reachOf[1]);
      }
    }
    return best != null && best.log10Chance() <= Math.log10(o.maxChance()) ? best : null;
  }

  private static Match match(
      String sampler, long g, int w, int r, int c, int k, int n, int reach, long candidates) {
    double p = Math.min(1.0, (double) reach / Math.max(1, n));
    double log10 = log10Binomial(k, c) + c * Math.log10(p) + Math.log10(Math.max(1, candidates));
    return new Match(sampler, g, w, r, c, k, log10);
  }

  private static double log10Binomial(int k, int c) {
    double s = 0;
    for (int i = 0; i < c; i++) {
      s += Math.log10(k - i) - Math.log10(i + 1);
    }
    return s;
  }

  /** Every distinct seed + epoch, epoch by epoch: every seed's epoch 0 first. */
  static long[] generatorSeeds(Options o) {
    return java.util.stream.IntStream.rangeClosed(0, o.maxEpoch())
        .boxed()
        .flatMapToLong(e -> Arrays.stream(o.seeds()).map(s -> s + e))
        .distinct()
        .toArray();
  }

  /**
   * The first {@code m} elements of DistributedSampler's padded permutation for generator seed
   * {@code g}: {@code randperm(n)}, repeated from its start past n (the padding).
   */
  static int[] distributedPrefix(int n, long g, int m) {
    int[] head = randpermPrefix(new TorchGenerator(g), n, Math.min(n, m));
    if (m <= n) {
      return head;
    }
    int[] out = Arrays.copyOf(head, m);
    for (int i = n; i < m; i++) {
      out[i] = head[(i - n) % n];
    }
    return out;
  }

  /**
   * The first {@code m} elements of {@code gen.randperm(n)} for n below 2^32 / 20: the forward
   * Fisher-Yates' first m swaps, with the swapped-out values kept in a map.
   */
  public static int[] randpermPrefix(TorchGenerator gen, int n, int m) {
    if (n <= SCRATCH_LIMIT) {
      return randpermPrefix(gen, n, m, scratch(n));
    }
    int[] out = new int[m];
    Map<Integer, Integer> moved = new HashMap<>();
    for (int i = 0; i < m; i++) {
      if (i == n - 1) {
        out[i] = moved.getOrDefault(i, i); // torch makes n - 1 swaps: the last stays
        break;
      }
      int j = i + (int) (gen.random() % (n - i));
      int vi = moved.getOrDefault(i, i);
      int vj = moved.getOrDefault(j, j);
      out[i] = vj;
      moved.put(j, vi);
    }
    return out;
  }

  /** Datasets up to 16 M samples swap in a reused array (64 MiB at most) instead of a map. */
  private static final int SCRATCH_LIMIT = 16 << 20;

  private static final ThreadLocal<int[]> SCRATCH = ThreadLocal.withInitial(() -> new int[0]);

  /** An identity array of at least n (kept so between calls: every swap is undone). */
  private static int[] scratch(int n) {
    int[] a = SCRATCH.get();
    if (a.length < n) {
      a = new int[n];
      for (int i = 0; i < n; i++) {
        a[i] = i;
      }
      SCRATCH.set(a);
    }
    return a;
  }

  private static int[] randpermPrefix(TorchGenerator gen, int n, int m, int[] a) {
    int[] out = new int[m];
    int[] touched = new int[m];
    int t = 0;
    for (int i = 0; i < m; i++) {
      if (i == n - 1) {
        out[i] = a[i];
        break;
      }
      int j = i + (int) (gen.random() % (n - i));
      out[i] = a[j];
      a[j] = a[i];
      touched[t++] = j;
    }
    // Undo: positions below m were only read; restore every swapped-into slot to identity.
    for (int k = 0; k < t; k++) {
      a[touched[k]] = touched[k];
    }
    return out;
  }
}
