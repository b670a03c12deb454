package org.hintfs.policy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Picks a cached sample to serve in place of a missed one (Quiver's substitutable hits, made safe
 * for accuracy by ImPACT's and SpiderCache's rules).
 *
 * <p>Rules, in order:
 *
 * <ol>
 *   <li>never for an H-sample ({@link Importance#isHigh}): important samples are always read;
 *   <li>only a cached sample of the same class: the label comes from the path, so a substitute of
 *       another class would train the model on a wrong label;
 *   <li>a declared neighbour of the missed sample first ({@code similar}, SpiderCache);
 *   <li>else an L-sample not yet served this epoch (ImPACT), chosen at random;
 *   <li>a sample already served this epoch only when the class has no unused one left;
 *   <li>at most {@code maxFraction} of this epoch's accesses are substituted.
 * </ol>
 *
 * <p>State: per class, two pools of cached samples (not yet served this epoch, and served), each an
 * int array with a position index, so add, remove, move and random pick are O(1).
 */
public final class SubstitutionChooser {
  private static final byte NONE = 0;
  private static final byte UNUSED = 1;
  private static final byte USED = 2;

  /** Random candidates tried before scanning the pool. */
  private static final int MAX_TRIES = 8;

  private final Importance importance;
  private final int[] classOf;
  private final byte[] pool;
  private final int[] slot;
  private final java.util.BitSet servedThisEpoch;
  private final Pool[] unused;
  private final Pool[] used;
  private final Map<Integer, int[]> neighbours = new HashMap<>();
  private final SplittableRandom rnd;
  private double maxFraction;
  private long accessesThisEpoch;
  private long substitutionsThisEpoch;
  private long substitutions;

  private static final class Pool {
    int[] items = new int[8];
    int size;
  }

  /**
   * A chooser over the context's classes.
   *
   * @param maxFraction the most of an epoch's accesses that may be substituted (0..1)
   */
  public SubstitutionChooser(PolicyContext ctx, double maxFraction, long seed) {
    if (ctx.classOf() == null) {
      throw new IllegalArgumentException("substitution needs each sample's class (a dataset hint)");
    }
    this.importance = ctx.importance();
    this.classOf = ctx.classOf();
    int classes = Arrays.stream(classOf).max().orElse(-1) + 1;
    this.pool = new byte[ctx.samples()];
    this.slot = new int[ctx.samples()];
    this.servedThisEpoch = new java.util.BitSet(ctx.samples());
    this.unused = new Pool[classes];
    this.used = new Pool[classes];
    for (int c = 0; c < classes; c++) {
      unused[c] = new Pool();
      used[c] = new Pool();
    }
    this.rnd = new SplittableRandom(seed);
    setMaxFraction(maxFraction);
  }

  /** Changes the per-epoch cap. */
  public void setMaxFraction(double f) {
    if (!(f >= 0 && f <= 1)) {
      throw new IllegalArgumentException("max fraction must be between 0 and 1, not " + f);
    }
    this.maxFraction = f;
  }

  /** Declares the neighbours a missed sample may be substituted with. */
  public void setNeighbours(int sample, int[] ns) {
    neighbours.put(sample, ns.clone());
  }

  /** A new epoch: every cached sample is unused again; the cap restarts. */
  public void newEpoch() {
    for (int c = 0; c < used.length; c++) {
      Pool u = used[c];
      while (u.size > 0) {
        int s = u.items[u.size - 1];
        move(s, UNUSED);
      }
    }
    servedThisEpoch.clear();
    accessesThisEpoch = 0;
    substitutionsThisEpoch = 0;
  }

  /** A sample was read (hit or miss): it counts as served this epoch. */
  public void accessed(int sample) {
    accessesThisEpoch++;
    servedThisEpoch.set(sample);
    if (pool[sample] == UNUSED) {
      move(sample, USED);
    }
  }

  /** The sample is now cached. */
  public void cached(int sample) {
    if (pool[sample] == NONE && classOf[sample] >= 0) {
      insert(sample, servedThisEpoch.get(sample) ? USED : UNUSED);
    }
  }

  /** The sample is no longer cached. */
  public void uncached(int sample) {
    if (pool[sample] != NONE) {
      take(sample);
    }
  }

  /**
   * A substitute for a missed sample, marked served; or -1 if the rules allow none. Call after
   * {@link #accessed} for the missed sample.
   */
  public int choose(int missed) {
    int c = classOf[missed];
    if (c < 0 || importance.isHigh(missed)) {
      return -1;
    }
    if (substitutionsThisEpoch + 1 > maxFraction * accessesThisEpoch) {
      return -1;
    }
    int pick = -1;
    int[] ns = neighbours.get(missed);
    if (ns != null) {
      for (int n : ns) {
        if (n != missed && pool[n] == UNUSED && classOf[n] == c && !importance.isHigh(n)) {
          pick = n;
          break;
        }
      }
    }
    if (pick < 0) {
      pick = pickFrom(unused[c], missed);
    }
    if (pick < 0) {
      // Only when no unused sample of the class is eligible: reuse one served this epoch.
      pick = pickFrom(used[c], missed);
    }
    if (pick < 0) {
      return -1;
    }
    substitutionsThisEpoch++;
    substitutions++;
    servedThisEpoch.set(pick);
    if (pool[pick] == UNUSED) {
      move(pick, USED);
    }
    return pick;
  }

  /** A random eligible (not H, not the missed one) member of the pool, or -1 if none is. */
  private int pickFrom(Pool p, int missed) {
    for (int t = 0; t < MAX_TRIES && p.size > 0; t++) {
      int s = p.items[rnd.nextInt(p.size)];
      if (s != missed && !importance.isHigh(s)) {
        return s;
      }
    }
    // Unlucky or a pool of mostly H-samples: scan, from a random start, so the answer is exact.
    int start = p.size == 0 ? 0 : rnd.nextInt(p.size);
    for (int k = 0; k < p.size; k++) {
      int s = p.items[(start + k) % p.size];
      if (s != missed && !importance.isHigh(s)) {
        return s;
      }
    }
    return -1;
  }

  /** Substitutions made so far, all epochs. */
  public long substitutions() {
    return substitutions;
  }

  /** Cached samples of a class not yet served this epoch. */
  public int unusedIn(int cls) {
    return unused[cls].size;
  }

  private void move(int s, byte to) {
    take(s);
    insert(s, to);
  }

  private void insert(int s, byte to) {
    Pool p = (to == UNUSED ? unused : used)[classOf[s]];
    if (p.size == p.items.length) {
      p.items = Arrays.copyOf(p.items, p.size * 2);
    }
    p.items[p.size] = s;
    slot[s] = p.size++;
    pool[s] = to;
  }

  private void take(int s) {
    Pool p = (pool[s] == UNUSED ? unused : used)[classOf[s]];
    int i = slot[s];
    int last = p.items[--p.size];
    p.items[i] = last;
    slot[last] = i;
    pool[s] = NONE;
  }
}
