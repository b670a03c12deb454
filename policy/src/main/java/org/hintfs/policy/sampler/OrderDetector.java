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
 * <p>Matching: DataLoader workers open the first batches out of order, so the observed opens are
 * matched as a set against the candidate's first {@code reach} positions. A candidate is accepted
 * only if at least 90% of the opens fall there and the chance that as many uniformly random reads
 * would, {@code C(K, c) (reach / n)^c}, times the number of candidates tried, is below {@link
 * Options#maxChance}.
 */
public final class OrderDetector {
  private OrderDetector() {}

  /**
   * What to search.
   *
   * @param seeds candidate sampler seeds
   * @param maxEpoch epochs 0..maxEpoch for each seed
   * @param maxWorld world sizes 1..maxWorld
   * @param reach positions from an epoch's start that the first opens may come from
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
    int[] rankCount = new int[o.maxWorld()];
    int[] rankSpan = new int[o.maxWorld()];
    int bestSpan = Integer.MAX_VALUE;
    for (long g : gs) {
      int[] prefix = distributedPrefix(n, g, prefixLength);
      for (int q = prefix.length - 1; q >= 0; q--) {
        firstPos[prefix[q]] = q;
      }
      for (int w = 1; w <= o.maxWorld(); w++) {
        Arrays.fill(rankCount, 0, w, 0);
        Arrays.fill(rankSpan, 0, w, 0);
        for (int s : observed) {
          int q = firstPos[s];
          if (q >= 0 && q / w < o.reach()) {
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
            best = match("distributed", g, w, r, rankCount[r], observed.length, n, o, candidates);
            bestSpan = rankSpan[r];
          }
        }
      }
      for (int v : prefix) {
        firstPos[v] = -1;
      }
    }
    for (long s : o.seeds()) {
      TorchGenerator gen = new TorchGenerator(s);
      gen.randomInt64(); // the DataLoader iterator's _base_seed
      int[] prefix = randpermPrefix(gen, n, Math.min(n, o.reach()));
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
        best = match("random", s, 1, 0, c, observed.length, n, o, candidates);
        bestSpan = o.reach();
      }
    }
    return best != null && best.log10Chance() <= Math.log10(o.maxChance()) ? best : null;
  }

  private static Match match(
      String sampler, long g, int w, int r, int c, int k, int n, Options o, long candidates) {
    double p = Math.min(1.0, (double) o.reach() / Math.max(1, n));
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

  /** Every distinct seed + epoch. */
  static long[] generatorSeeds(Options o) {
    return Arrays.stream(o.seeds())
        .flatMap(s -> java.util.stream.LongStream.rangeClosed(s, s + o.maxEpoch()))
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
