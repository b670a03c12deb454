package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.junit.jupiter.api.Test;

/** Hand-worked traces for each policy, and properties over random traces. */
class PoliciesTest {

  /** A trace of unit-size reads in one epoch, class = sample % 2. */
  static Trace unit(int... samples) {
    Trace t = new Trace();
    for (int s : samples) {
      t.read(0, s, 1, s % 2);
    }
    return t;
  }

  /** Runs with a capacity of exactly {@code slots} samples (sizes are 1). */
  static Simulator.Result run(Trace t, String policy, int slots) {
    int distinct = (int) t.datasetBytes();
    return Simulator.run(t, policy, (double) slots / distinct, Simulator.Options.PLAIN);
  }

  @Test
  void lru_onACycleLargerThanTheCache_neverHits() {
    // 0 1 2 0 1 2 with room for 2: each read evicts the sample needed next; 0 hits.
    assertThat(run(unit(0, 1, 2, 0, 1, 2), "lru", 2).hits()).isZero();
  }

  @Test
  void static_keepsWhatCameFirst() {
    // Room for 2: 0 and 1 stay forever. Reads 3-6 (0 1 2 0): hits on 0, 1, 0 = 3.
    assertThat(run(unit(0, 1, 2, 0, 1, 2, 0), "static", 2).hits()).isEqualTo(3);
  }

  @Test
  void lfu_keepsTheFrequentlyRead() {
    // Room for 2. 0 0 0 1 2 1 2 0: after 0x3 and 1, the read of 2 evicts 1 (freq 1 vs 0's 3);
    // 1 evicts 2; 2 evicts 1; 0 hits. Hits: 0, 0 (reads 2, 3) and the last 0 = 3.
    assertThat(run(unit(0, 0, 0, 1, 2, 1, 2, 0), "lfu", 2).hits()).isEqualTo(3);
  }

  @Test
  void clairvoyant_evictsTheFarthestFutureUse() {
    // Room for 2: 0 1 2 0 1 3 0. At "2" the cache holds {0,1}; 0 is next used at 3, 1 at 4, 2 at
    // 7 (never): bypass 2. Then 0, 1 hit. At "3" (never used again): bypass. 0 hits. Hits = 3.
    assertThat(run(unit(0, 1, 2, 0, 1, 3, 0), "clairvoyant", 2).hits()).isEqualTo(3);
    // LRU on the same trace: 2 evicts 0, 0 evicts 1, 1 evicts 2, 3 evicts 0, 0 evicts 1: 0 hits.
    assertThat(run(unit(0, 1, 2, 0, 1, 3, 0), "lru", 2).hits()).isZero();
  }

  @Test
  void shade_admitsByGhostScore_andSkipsUnscoredSamplesWhenFull() {
    Trace t = new Trace();
    t.scores(false, new int[] {0, 1, 2, 3}, new float[] {1f, 5f, 3f, 0.5f});
    // Room for 2. Reads 0 1 (fill), 2 (score 3 >= min 1: evict 0), 0 (1 < min 3: bypass),
    // 3 (0.5 < 3: bypass), 2 (hit), 1 (hit), 4 (no score: never admitted when full).
    for (int s : new int[] {0, 1, 2, 0, 3, 2, 1, 4, 4}) {
      t.read(0, s, 1, 0);
    }
    Simulator.Result r = run(t, "shade", 2);
    assertThat(r.hits()).isEqualTo(2);
  }

  @Test
  void shade_reordersItsHeapWhenAScoreChanges() {
    Trace t = new Trace();
    t.scores(false, new int[] {0, 1, 2}, new float[] {1f, 5f, 3f});
    t.read(0, 0, 1, 0).read(0, 1, 1, 0);
    // 1 becomes the least important: 2 (score 3) now evicts 1, not 0 (score raised to 4).
    t.scores(false, new int[] {1, 0}, new float[] {0.1f, 4f});
    t.read(0, 2, 1, 0).read(0, 0, 1, 0).read(0, 1, 1, 0);
    // Hits: 0 (still cached). 1 was evicted: miss.
    assertThat(run(t, "shade", 2).hits()).isEqualTo(1);
  }

  @Test
  void rankScore_isLogOfRankPlusB0() {
    Importance imp = new Importance(4);
    imp.recordBatch(new int[] {0, 1, 2, 3}, new float[] {0.3f, 2.0f, 0.1f, 0.3f});
    // Ranks (losses strictly below): 0.3 -> 1, 2.0 -> 3, 0.1 -> 0, 0.3 -> 1.
    assertThat(imp.score(2)).isEqualTo((float) Math.log(10));
    assertThat(imp.score(0)).isEqualTo((float) Math.log(11)).isEqualTo(imp.score(3));
    assertThat(imp.score(1)).isEqualTo((float) Math.log(13));
    assertThatThrownBy(() -> imp.recordBatch(new int[] {0}, new float[] {Float.NaN}))
        .isInstanceOf(IllegalArgumentException.class);
    // Top 20% of 4 scores: the highest only.
    assertThat(imp.isHigh(1)).isTrue();
    assertThat(imp.isHigh(0)).isFalse();
  }

  @Test
  void impactWithSubstitution_servesLowSamplesFromTheirClass() {
    // Samples 0..9, class = s % 2; all scored equal-low except 9, the one H-sample (top 20% of
    // 10 scores = the highest 2 by rank; 8 and 9 score highest).
    Trace t = new Trace();
    float[] scores = {1, 1, 1, 1, 1, 1, 1, 1, 9, 10};
    int[] ids = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    t.scores(false, ids, scores);
    for (int s : new int[] {0, 1, 2, 3}) {
      t.read(0, s, 1, s % 2);
    }
    t.read(1, 4, 1, 0).read(1, 5, 1, 1).read(1, 9, 1, 1);
    // Room for 4 (of 7 distinct). Epoch 1: 4 misses, substituted by a cached class-0 sample;
    // 5 by a class-1 one; 9 is an H-sample: never substituted.
    Simulator.Result r =
        Simulator.run(
            t,
            "impact",
            4.0 / 7,
            new Simulator.Options(true, new SubstitutionChooser.Rules(1.0, true, true), 3));
    assertThat(r.hits()).isZero();
    assertThat(r.substitutions()).isEqualTo(2 + 2); // epoch 0: 2 and 3 were substituted too
  }

  @Test
  void traceFormatRoundTrips_andNamesABadLine() throws Exception {
    Trace t = unit(3, 1, 2);
    t.scores(true, new int[] {1, 2}, new float[] {0.5f, 1.5f});
    t.read(1, 3, 7, 1);
    StringWriter w = new StringWriter();
    t.write(w);
    Trace back = Trace.read(new BufferedReader(new StringReader(w.toString())));
    StringWriter w2 = new StringWriter();
    back.write(w2);
    assertThat(w2.toString()).isEqualTo(w.toString());
    assertThat(back.size(3)).isEqualTo(7);
    assertThatThrownBy(
            () -> Trace.read(new BufferedReader(new StringReader("# x\n0 1 10\nloss 1:2\n"))))
        .hasMessageContaining("trace line 3");
  }

  /** The best hit count any policy could get: every choice of victim or bypass, tried. */
  static int optimum(int[] reads, int slots) {
    return best(reads, 0, new ArrayList<>(), slots);
  }

  private static int best(int[] reads, int i, List<Integer> cache, int slots) {
    if (i == reads.length) {
      return 0;
    }
    int s = reads[i];
    if (cache.contains(s)) {
      return 1 + best(reads, i + 1, cache, slots);
    }
    int b = best(reads, i + 1, cache, slots); // bypass
    if (cache.size() < slots) {
      List<Integer> c = new ArrayList<>(cache);
      c.add(s);
      b = Math.max(b, best(reads, i + 1, c, slots));
    } else {
      for (int v = 0; v < cache.size(); v++) {
        List<Integer> c = new ArrayList<>(cache);
        c.set(v, s);
        b = Math.max(b, best(reads, i + 1, c, slots));
      }
    }
    return b;
  }

  @Property(tries = 300)
  void clairvoyantEqualsTheOptimum(
      @ForAll @Size(min = 1, max = 11) List<@IntRange(min = 0, max = 4) Integer> reads,
      @ForAll @IntRange(min = 1, max = 3) int slots) {
    int[] r = reads.stream().mapToInt(Integer::intValue).toArray();
    int distinct = (int) java.util.Arrays.stream(r).distinct().count();
    if (slots > distinct) {
      slots = distinct;
    }
    assertThat(run(unit(r), "clairvoyant", slots).hits()).isEqualTo(optimum(r, slots));
  }

  @Property(tries = 150)
  void clairvoyantBeatsEveryPolicyThatDoesNotSubstitute_andCountsAddUp(
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 30) Integer> reads,
      @ForAll @IntRange(min = 1, max = 12) int slots,
      @ForAll @Size(max = 40) List<@IntRange(min = 0, max = 1000) Integer> scores) {
    Trace t = new Trace();
    int[] ids = new int[Math.min(scores.size(), 31)];
    float[] vs = new float[ids.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = i;
      vs[i] = scores.get(i) / 100f;
    }
    if (ids.length > 0) {
      t.scores(false, ids, vs);
    }
    for (int i = 0; i < reads.size(); i++) {
      t.read(i / 50, reads.get(i), 1, reads.get(i) % 3);
    }
    int distinct = (int) t.datasetBytes();
    int cap = Math.min(slots, distinct);
    long best = run(t, "clairvoyant", cap).hits();
    for (String p : Policies.names()) {
      Simulator.Result r = run(t, p, cap); // finish() checks capacity and invariants
      assertThat(r.hits()).as(p).isLessThanOrEqualTo(best);
      assertThat(r.reads()).isEqualTo(reads.size());
      // Every miss is fetched once (unit sizes): hits + fetched = reads.
      assertThat(r.hits() + r.bytesFetched()).as(p).isEqualTo(reads.size());
    }
  }

  @Property(tries = 300)
  void substitutionKeepsItsRules(
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 40) Integer> ops,
      @ForAll @IntRange(min = 0, max = 4) int maxTenths,
      @ForAll boolean reuse,
      @ForAll boolean fromStart) {
    int n = 40;
    int[] cls = new int[n];
    for (int i = 0; i < n; i++) {
      cls[i] = i % 4;
    }
    PolicyContext ctx = new PolicyContext(n, new Importance(n), null, cls);
    for (int i = 0; i < n - 8; i++) {
      ctx.importance().set(i, i % 7); // 5 and 6 mod 7 are the top scores; 32..39 have none
    }
    double max = maxTenths / 4.0;
    SubstitutionChooser ch =
        new SubstitutionChooser(ctx, new SubstitutionChooser.Rules(max, reuse, fromStart), 9);
    java.util.BitSet cached = new java.util.BitSet();
    java.util.BitSet served = new java.util.BitSet();
    java.util.BitSet stoodIn = new java.util.BitSet();
    java.util.BitSet away = new java.util.BitSet();
    java.util.BitSet owed = new java.util.BitSet();
    int epoch = 0;
    long reads = 0;
    long subs = 0;
    for (int op : ops) {
      if (op == 40) { // an epoch ends
        java.util.BitSet nextOwed = (java.util.BitSet) away.clone();
        nextOwed.andNot(served);
        assertThat(ch.newEpoch()).containsExactly(nextOwed.stream().toArray());
        owed = nextOwed;
        served.clear();
        stoodIn.clear();
        away.clear();
        epoch++;
        reads = subs = 0;
        continue;
      }
      if (op % 5 == 0) {
        ch.cached(op);
        cached.set(op);
        continue;
      }
      reads++;
      boolean hit = cached.get(op);
      boolean fetching = op % 11 == 1;
      int sub = ch.opened(op, hit, fetching);
      if (sub < 0) {
        served.set(op);
        owed.clear(op);
        continue;
      }
      subs++;
      assertThat(hit).as("a hit is never substituted").isFalse();
      assertThat(fetching).as("a fetch in flight is waited for").isFalse();
      assertThat(fromStart || (epoch > 0 && ctx.importance().known(op))).as("warm-up").isTrue();
      assertThat(owed.get(op)).as("owed from the last epoch").isFalse();
      assertThat(subs).as("cap").isLessThanOrEqualTo((long) Math.floor(max * reads + 1e-9));
      assertThat(cls[sub]).isEqualTo(cls[op]);
      assertThat(cached.get(sub)).isTrue();
      assertThat(ctx.importance().isHigh(sub)).isFalse();
      assertThat(ctx.importance().isHigh(op)).isFalse();
      if (!reuse) {
        assertThat(served.get(sub)).as("%d stands in once, unserved", sub).isFalse();
      } else if (served.get(sub)) {
        // Reused: then no unserved eligible sample of the class was cached.
        for (int c = cached.nextSetBit(0); c >= 0; c = cached.nextSetBit(c + 1)) {
          boolean eligible = cls[c] == cls[op] && c != op && !ctx.importance().isHigh(c);
          assertThat(eligible && !served.get(c)).as("unused %d left", c).isFalse();
        }
      }
      stoodIn.set(sub);
      served.set(sub);
      away.set(op);
    }
  }

  @Test
  void aSampleSubstitutedAwayIsOwed_andServedTheNextEpoch() {
    int n = 10;
    int[] cls = new int[n]; // one class
    PolicyContext ctx = new PolicyContext(n, new Importance(n), null, cls);
    for (int i = 0; i < n; i++) {
      ctx.importance().set(i, i); // 8 and 9 are the H-samples (top 20%)
    }
    assertThat(ctx.importance().isHigh(4)).isFalse();
    SubstitutionChooser ch =
        new SubstitutionChooser(ctx, new SubstitutionChooser.Rules(1.0, false, false), 1);
    ch.cached(0);
    ch.cached(1);
    // Epoch 0: warm-up, nothing is substituted.
    assertThat(ch.opened(2, false, false)).isEqualTo(-1);
    assertThat(ch.refusals().warmUp).isEqualTo(1);
    assertThat(ch.newEpoch()).isEmpty();
    // Epoch 1: 2 is substituted by 0 or 1; 3 by the other; 4 finds no unused stand-in; an
    // H-sample is never substituted.
    int a = ch.opened(2, false, false);
    int b = ch.opened(3, false, false);
    assertThat(List.of(a, b)).containsExactlyInAnyOrder(0, 1);
    assertThat(ch.opened(4, false, false)).isEqualTo(-1);
    assertThat(ch.refusals().noCandidate).isEqualTo(1);
    assertThat(ch.opened(9, false, false)).isEqualTo(-1);
    assertThat(ch.refusals().important).isEqualTo(1);
    // 3 is read later in the same epoch: it reached the trainer and is not owed.
    assertThat(ch.opened(3, false, false)).isEqualTo(-1);
    assertThat(ch.newEpoch()).containsExactly(2);
    // Epoch 2: 2 is owed: read, not substituted, though stand-ins are free again.
    assertThat(ch.opened(2, false, false)).isEqualTo(-1);
    assertThat(ch.refusals().owed).isEqualTo(1);
    assertThat(ch.owedLeft()).isZero();
    assertThat(ch.opened(3, false, false)).isIn(0, 1);
  }

  @Test
  void aLateMiss_waivesWarmUpImportanceOwedInFlightAndOncePerEpoch_butNeverTheCap() {
    int n = 10;
    int[] cls = new int[n];
    PolicyContext ctx = new PolicyContext(n, new Importance(n), null, cls);
    for (int i = 0; i < n; i++) {
      ctx.importance().set(i, i); // 8 and 9 are the H-samples
    }
    SubstitutionChooser ch =
        new SubstitutionChooser(ctx, new SubstitutionChooser.Rules(0.5, false, false), 1);
    ch.cached(0);
    ch.cached(1);
    ch.cached(5);
    // Epoch 0 (warm-up) and an in-flight fetch: refused on time, stood in for when late.
    ch.opened(0, true, false);
    assertThat(ch.rulesAllow(2, false)).isFalse();
    assertThat(ch.opened(2, false, true, true)).isIn(0, 1, 5);
    assertThat(ch.lateSubstitutions()).isEqualTo(1);
    // The cap (half of 3 reads) allows no second one, late or not.
    assertThat(ch.opened(3, false, false, true)).isEqualTo(-1);
    assertThat(ch.refusals().capped).isEqualTo(1);
    ch.newEpoch(); // 2 is owed now
    ch.opened(0, true, false);
    // An H-sample and an owed one: refused on time, stood in for when late, within the cap.
    assertThat(ch.rulesAllow(9, false)).isFalse();
    assertThat(ch.opened(9, false, false, false)).isEqualTo(-1);
    assertThat(ch.opened(9, false, false, true)).isIn(1, 5);
    assertThat(ch.rulesAllow(2, false)).isFalse();
    assertThat(ch.opened(2, false, false, true)).isIn(1, 5);
    assertThat(ch.lateSubstitutions()).isEqualTo(3);
    assertThat(ch.rulesAllow(4, false)).isFalse(); // a third this epoch: over half of 4 reads
    // Every stand-in served this epoch (0 read, 1 and 5 stood in): a late miss may reuse one.
    for (int i = 0; i < 4; i++) {
      ch.opened(0, true, false);
    }
    assertThat(ch.rulesAllow(6, false)).isFalse(); // allowed, but no stand-in is free
    assertThat(ch.opened(4, false, false, false)).isEqualTo(-1);
    assertThat(ch.opened(6, false, false, true)).isIn(0, 1, 5);
    // A new epoch's first reads: on time the running cap (half of 1 read) refuses a miss; late,
    // the last epoch's share (half of its 10 reads) is there from the start.
    ch.newEpoch();
    assertThat(ch.opened(7, false, false, false)).isEqualTo(-1);
    assertThat(ch.refusals().capped).isEqualTo(2);
    assertThat(ch.opened(4, false, false, true)).isIn(0, 1, 5);
    // A class whose only cached sample is an H-sample: an on-time miss waits; a late one gets it.
    int[] two = {0, 0, 1, 1};
    PolicyContext ctx2 = new PolicyContext(4, new Importance(4), null, two);
    for (int i = 0; i < 4; i++) {
      ctx2.importance().set(i, i); // 3 is the H-sample
    }
    SubstitutionChooser ch2 =
        new SubstitutionChooser(ctx2, new SubstitutionChooser.Rules(1.0, true, true), 1);
    ch2.cached(3);
    assertThat(ch2.rulesAllow(2, false)).isFalse();
    assertThat(ch2.opened(2, false, false, true)).isEqualTo(3);
  }
}
