package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Re-keying in steps: begun under the caller's lock, computed outside it and applied under it a
 * slice at a time.
 */
class ClairvoyantReorderTest {
  /** A next-use oracle the test moves by hand: sample s is next used at {@code at[s]}. */
  static final class Oracle implements NextUse {
    final long[] at;

    Oracle(int n) {
      at = new long[n];
    }

    @Override
    public long after(int sample) {
      return at[sample];
    }

    @Override
    public long now() {
      return 0;
    }
  }

  static ClairvoyantPolicy cached(Oracle o, int... samples) {
    ClairvoyantPolicy p = new ClairvoyantPolicy(new PolicyContext(o.at.length, null, o, null));
    for (int s : samples) {
      p.recordAccess(s, false);
      p.added(s);
    }
    return p;
  }

  @Test
  void theComputedKeysTakeEffect_exceptForASampleReadMeanwhile() {
    Oracle o = new Oracle(4);
    o.at[0] = 10;
    o.at[1] = 20;
    o.at[2] = 30;
    ClairvoyantPolicy p = cached(o, 0, 1, 2);
    assertThat(p.victim()).isEqualTo(2); // used last
    // The order changes: 0 is now used last, 2 first.
    o.at[0] = 100;
    o.at[2] = 5;
    CachePolicy.Reorder r = p.beginReorder(new int[] {0, 1, 2});
    r.compute(Integer.MAX_VALUE);
    // Before the keys are applied, 0 is read and its read re-keys it (next used at 7).
    o.at[0] = 7;
    p.recordAccess(0, true);
    p.applyReorder(r);
    p.endReorder(r);
    // 0 keeps the key its read gave it (7), not the computed one (100): 1 (20) is the farthest.
    assertThat(p.victim()).isEqualTo(1);
    p.checkInvariants();
  }

  @Test
  void aReorderWhoseComputeNeverFinished_appliesNothing_andAnEvictedSampleIsSkipped() {
    Oracle o = new Oracle(3);
    o.at[0] = 10;
    o.at[1] = 20;
    ClairvoyantPolicy p = cached(o, 0, 1);
    o.at[0] = 50;
    CachePolicy.Reorder unfinished = p.beginReorder(new int[] {0, 1});
    p.endReorder(unfinished); // compute threw, say
    assertThat(p.victim()).isEqualTo(1); // keys as they were
    CachePolicy.Reorder r = p.beginReorder(new int[] {0, 1});
    r.compute(Integer.MAX_VALUE);
    p.removed(1); // evicted between compute and apply
    p.applyReorder(r);
    p.endReorder(r);
    assertThat(p.contains(1)).isFalse();
    assertThat(p.victim()).isEqualTo(0);
    p.checkInvariants();
  }

  @Test
  void theOneStepReorder_andAutoPolicy_agreeWithTheThreeSteps() {
    Oracle o = new Oracle(5);
    for (int s = 0; s < 5; s++) {
      o.at[s] = 10 * (s + 1);
    }
    ClairvoyantPolicy one = cached(o, 0, 1, 2, 3, 4);
    AutoPolicy auto = new AutoPolicy(new PolicyContext(5, new Importance(5), o, null));
    for (int s = 0; s < 5; s++) {
      auto.recordAccess(s, false);
      auto.added(s);
    }
    for (int s = 0; s < 5; s++) {
      o.at[s] = 100 - 10 * s; // reversed
    }
    one.orderChanged(new int[] {0, 1, 2, 3, 4});
    CachePolicy.Reorder r = auto.beginReorder(new int[] {0, 1, 2, 3, 4});
    assertThat(r).isNotNull();
    while (r.compute(2)) {
      auto.applyReorder(r);
    }
    auto.endReorder(r);
    assertThat(one.victim()).isEqualTo(0);
    assertThat(auto.victim()).isEqualTo(one.victim());
  }
}
