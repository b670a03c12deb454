package org.hintfs.policy;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Picks a cached sample to serve in place of a missed one (Quiver's substitutable hits), under
 * rules that keep training honest (ImPACT's L-cache, SHADE's and Quiver's bounds).
 *
 * <p>A missed sample is substituted only if all of these hold:
 *
 * <ol>
 *   <li>its importance is known and it is not an H-sample ({@link Importance#isHigh}), and the
 *       first epoch is over (ImPACT's warm-up) — both waived by {@link Rules#fromStart};
 *   <li>it was not substituted in the previous epoch without reaching the trainer: such a sample is
 *       <em>owed</em>, read from the source this time, so every sample reaches the trainer at least
 *       once in any two consecutive epochs;
 *   <li>no fetch of it is already in flight (the caller says so): the prefetcher is let win;
 *   <li>the epoch's substitutions stay within {@link Rules#maxFraction} of its reads;
 *   <li>a cached sample of the same class (the label comes from the path) that has not reached the
 *       trainer this epoch is there to stand in: a declared neighbour first ({@code similar},
 *       SpiderCache), else one at random. A sample stands in at most once per epoch; one already
 *       served stands in again only with {@link Rules#reuse}.
 * </ol>
 *
 * <p>State: per class, two pools of cached samples (not yet served this epoch, and served), each an
 * int array with a position index, so add, remove, move and random pick are O(1); three bit sets
 * (served this epoch, substituted away this epoch, owed from the last).
 */
public final class SubstitutionChooser {
  private static final byte NONE = 0;
  private static final byte UNUSED = 1;
  private static final byte USED = 2;

  /** Random candidates tried before scanning the pool. */
  private static final int MAX_TRIES = 8;

  /**
   * What the chooser may do.
   *
   * @param maxFraction the most of an epoch's reads that may be substituted, in [0, 1]
   * @param reuse a sample already served this epoch may stand in again
   * @param fromStart substitute from the first read, before any importance is known
   */
  public record Rules(double maxFraction, boolean reuse, boolean fromStart) {
    /**
     * The default cap: a fifth of an epoch's reads. Chosen from the accuracy runs in BENCHMARKS.md
     * ("Substitution that never starves training").
     */
    public static final double DEFAULT_MAX = 0.2;

    public Rules {
      if (!(maxFraction >= 0 && maxFraction <= 1)) {
        throw new IllegalArgumentException(
            "max fraction must be between 0 and 1, not " + maxFraction);
      }
    }

    /** The defaults: {@link #DEFAULT_MAX}, no reuse, after the first epoch. */
    public static Rules defaults() {
      return new Rules(DEFAULT_MAX, false, false);
    }

    /** As the rule line shows them: {@code max 0.2}, plus {@code reuse} and {@code from-start}. */
    @Override
    public String toString() {
      return "max " + maxFraction + (reuse ? " reuse" : "") + (fromStart ? " from-start" : "");
    }
  }

  /** Why misses were not substituted (all epochs). */
  public static final class Refusals {
    /** Before the first epoch ended, or the sample had no score yet. */
    public long warmUp;

    /** An H-sample. */
    public long important;

    /** Substituted last epoch: owed to the trainer now. */
    public long owed;

    /** Its fetch was already in flight: waited for. */
    public long inFlight;

    /** The epoch's cap was reached. */
    public long capped;

    /** No eligible cached sample of its class. */
    public long noCandidate;

    /** Served as itself recently: the kernel's page cache may still answer its reads. */
    public long pageCached;

    /** A copy (to read outside the lock the chooser is used under). */
    public Refusals copy() {
      Refusals r = new Refusals();
      r.warmUp = warmUp;
      r.important = important;
      r.owed = owed;
      r.inFlight = inFlight;
      r.pageCached = pageCached;
      r.capped = capped;
      r.noCandidate = noCandidate;
      return r;
    }
  }

  private final Importance importance;
  private final int[] classOf;
  private final byte[] pool;
  private final int[] slot;
  private final BitSet servedThisEpoch;
  private final BitSet substitutedAway;
  private BitSet owed;
  private final Pool[] unused;
  private final Pool[] used;
  private final Map<Integer, int[]> neighbours = new HashMap<>();
  private final SplittableRandom rnd;
  private final Refusals refusals = new Refusals();
  private Rules rules;
  private int epochsEnded;
  private long readsThisEpoch;
  private long readsLastEpoch;
  private long substitutionsThisEpoch;
  private long substitutions;
  private long lateSubstitutions;

  private static final class Pool {
    int[] items = new int[8];
    int size;
  }

  /** A chooser over the context's classes. */
  public SubstitutionChooser(PolicyContext ctx, Rules rules, long seed) {
    if (ctx.classOf() == null) {
      throw new IllegalArgumentException("substitution needs each sample's class (a dataset hint)");
    }
    this.importance = ctx.importance();
    this.classOf = ctx.classOf();
    int classes = Arrays.stream(classOf).max().orElse(-1) + 1;
    this.pool = new byte[ctx.samples()];
    this.slot = new int[ctx.samples()];
    this.servedThisEpoch = new BitSet(ctx.samples());
    this.substitutedAway = new BitSet(ctx.samples());
    this.owed = new BitSet(ctx.samples());
    this.unused = new Pool[classes];
    this.used = new Pool[classes];
    for (int c = 0; c < classes; c++) {
      unused[c] = new Pool();
      used[c] = new Pool();
    }
    this.rnd = new SplittableRandom(seed);
    this.rules = rules;
  }

  /** Changes the rules (from the next choice on). */
  public void setRules(Rules r) {
    this.rules = r;
  }

  public Rules rules() {
    return rules;
  }

  /** Declares the neighbours a missed sample may be substituted with. */
  public void setNeighbours(int sample, int[] ns) {
    neighbours.put(sample, ns.clone());
  }

  /**
   * A new epoch: every cached sample may stand in again; the cap restarts; what was substituted
   * away and never reached the trainer in the epoch that ends is owed in this one.
   *
   * @return the owed samples, ascending (the caller fetches them ahead)
   */
  public int[] newEpoch() {
    for (Pool u : used) {
      while (u.size > 0) {
        move(u.items[u.size - 1], UNUSED);
      }
    }
    BitSet next = (BitSet) substitutedAway.clone();
    next.andNot(servedThisEpoch);
    owed = next;
    substitutedAway.clear();
    servedThisEpoch.clear();
    readsLastEpoch = readsThisEpoch;
    readsThisEpoch = 0;
    substitutionsThisEpoch = 0;
    epochsEnded++;
    return owed.stream().toArray();
  }

  /**
   * An open of sample {@code id}: the substitute to serve, or -1 to serve the sample itself.
   *
   * @param hit the sample is cached
   * @param fetching a fetch of the sample is in flight (a prefetch due soon): it is waited for
   */
  public int opened(int id, boolean hit, boolean fetching) {
    return opened(id, hit, fetching, false);
  }

  /**
   * An open of sample {@code id}, as {@link #opened(int, boolean, boolean)}, with {@code late}: the
   * source has not answered this miss within its deadline (it is slow or hung), and the reader
   * would wait on it. Then the sample may stand in under the cap and its class alone: warm-up,
   * importance, owed, in-flight, once-per-epoch (a stand-in already served may serve again) and the
   * stand-in's own importance (an H-sample may stand in when no other is cached) are waived, since
   * what they protect is not worth stopping the trainer for as long as the source is gone. It is
   * owed next epoch as any other.
   */
  public int opened(int id, boolean hit, boolean fetching, boolean late) {
    readsThisEpoch++;
    int sub = hit ? -1 : choose(id, fetching, late);
    if (sub < 0) {
      served(id);
      owed.clear(id);
      return -1;
    }
    substitutedAway.set(id);
    substitutionsThisEpoch++;
    substitutions++;
    if (late) {
      lateSubstitutions++;
    }
    served(sub);
    return sub;
  }

  /**
   * An open of sample {@code id}, a miss the kernel's page cache may still hold (the mount served
   * it as itself recently): served as itself, never stood in for, counted in {@link
   * Refusals#pageCached}.
   */
  public void openedPageCached(int id) {
    readsThisEpoch++;
    refusals.pageCached++;
    served(id);
    owed.clear(id);
  }

  /**
   * Whether a miss of {@code id} would be stood in for now: the rules allow it and its class has a
   * stand-in free. When not, its reader waits on the source. Changes nothing.
   */
  public boolean rulesAllow(int id, boolean fetching) {
    if (refusal(id, fetching, false) != null) {
      return false;
    }
    int c = classOf[id];
    return neighbour(id, c) >= 0 || anyIn(unused[c], id) || (rules.reuse() && anyIn(used[c], id));
  }

  private int choose(int missed, boolean fetching, boolean late) {
    Refusal r = refusal(missed, fetching, late);
    if (r != null) {
      switch (r) {
        case NO_CLASS -> {}
        case WARM_UP -> refusals.warmUp++;
        case IMPORTANT -> refusals.important++;
        case OWED -> refusals.owed++;
        case IN_FLIGHT -> refusals.inFlight++;
        case CAPPED -> refusals.capped++;
      }
      return -1;
    }
    int c = classOf[missed];
    int pick = neighbour(missed, c);
    if (pick < 0) {
      pick = pickFrom(unused[c], missed);
    }
    if (pick < 0 && (rules.reuse() || late)) {
      pick = pickFrom(used[c], missed);
    }
    if (pick < 0 && late) {
      // Only H-samples are cached in this class: one stands in rather than the trainer stopping.
      pick = pickFrom(unused[c], missed, true);
      if (pick < 0) {
        pick = pickFrom(used[c], missed, true);
      }
    }
    if (pick < 0) {
      refusals.noCandidate++;
    }
    return pick;
  }

  private enum Refusal {
    NO_CLASS,
    WARM_UP,
    IMPORTANT,
    OWED,
    IN_FLIGHT,
    CAPPED
  }

  /** Why the rules refuse to stand in for {@code missed} now, or null if they allow it. */
  private Refusal refusal(int missed, boolean fetching, boolean late) {
    if (classOf[missed] < 0) {
      return Refusal.NO_CLASS;
    }
    if (!late) {
      if (!rules.fromStart() && (epochsEnded == 0 || !importance.known(missed))) {
        return Refusal.WARM_UP;
      }
      if (importance.isHigh(missed)) {
        return Refusal.IMPORTANT;
      }
      if (owed.get(missed)) {
        return Refusal.OWED;
      }
      if (fetching) {
        return Refusal.IN_FLIGHT;
      }
    }
    // The cap is a running share of the epoch's reads; a late miss may use the whole epoch's share
    // (as long as the last epoch) from its start, or a hang that meets an epoch's first reads
    // would stop the trainer on the first miss.
    long reads = late ? Math.max(readsThisEpoch, readsLastEpoch) : readsThisEpoch;
    if (substitutionsThisEpoch + 1 > rules.maxFraction() * reads) {
      return Refusal.CAPPED;
    }
    return null;
  }

  private int neighbour(int missed, int c) {
    int[] ns = neighbours.get(missed);
    if (ns != null) {
      for (int n : ns) {
        boolean free = pool[n] == UNUSED || (rules.reuse() && pool[n] == USED);
        if (n != missed && free && classOf[n] == c && !importance.isHigh(n)) {
          return n;
        }
      }
    }
    return -1;
  }

  private void served(int s) {
    servedThisEpoch.set(s);
    if (pool[s] == UNUSED) {
      move(s, USED);
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

  /** A random eligible (not H, not the missed one) member of the pool, or -1 if none is. */
  private int pickFrom(Pool p, int missed) {
    return pickFrom(p, missed, false);
  }

  /**
   * A stand-in from {@code p}: not {@code missed}, not an H-sample unless {@code anyImportance}.
   */
  private int pickFrom(Pool p, int missed, boolean anyImportance) {
    for (int t = 0; t < MAX_TRIES && p.size > 0; t++) {
      int s = p.items[rnd.nextInt(p.size)];
      if (s != missed && (anyImportance || !importance.isHigh(s))) {
        return s;
      }
    }
    // Unlucky or a pool of mostly H-samples: scan, from a random start, so the answer is exact.
    int start = p.size == 0 ? 0 : rnd.nextInt(p.size);
    for (int k = 0; k < p.size; k++) {
      int s = p.items[(start + k) % p.size];
      if (s != missed && (anyImportance || !importance.isHigh(s))) {
        return s;
      }
    }
    return -1;
  }

  /** Whether {@link #pickFrom(Pool, int)} would find a stand-in; draws nothing. */
  private boolean anyIn(Pool p, int missed) {
    for (int k = 0; k < p.size; k++) {
      int s = p.items[k];
      if (s != missed && !importance.isHigh(s)) {
        return true;
      }
    }
    return false;
  }

  /** Substitutions made so far, all epochs. */
  public long substitutions() {
    return substitutions;
  }

  /** Substitutions of misses the source had not answered within its deadline (all epochs). */
  public long lateSubstitutions() {
    return lateSubstitutions;
  }

  /** Substitutions made this epoch. */
  public long substitutionsThisEpoch() {
    return substitutionsThisEpoch;
  }

  /** Why misses were not substituted, all epochs (read under the caller's lock). */
  public Refusals refusals() {
    return refusals;
  }

  /** True once the warm-up is over (or waived): misses may be substituted. */
  public boolean warm() {
    return rules.fromStart() || epochsEnded > 0;
  }

  /** Samples owed to the trainer this epoch that it has not read yet. */
  public int owedLeft() {
    return owed.cardinality();
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
