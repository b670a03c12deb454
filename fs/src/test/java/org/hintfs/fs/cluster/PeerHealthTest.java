package org.hintfs.fs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PeerHealthTest {
  private static final long MS = 1_000_000;

  @Test
  void theBound_isOneSecondCold_thenFourTimesTheP90_withinHalfASecondAndFive() {
    PeerHealth h = new PeerHealth();
    assertThat(h.hedgeMillis()).isEqualTo(1_000);
    // 64 answers: 57 of 2 ms and 7 of 300 ms. The p90 is the 58th time (ceil(0.9 x 64)), 300 ms:
    // the bound is 4 x 300 = 1,200 ms.
    for (int i = 0; i < 64; i++) {
      h.answered((i < 57 ? 2 : 300) * MS);
    }
    assertThat(h.hedgeMillis()).isEqualTo(1_200);
    // A fast home: 4 x 2 ms is under the least bound.
    for (int i = 0; i < 64; i++) {
      h.answered(2 * MS);
    }
    assertThat(h.hedgeMillis()).isEqualTo(500);
    for (int i = 0; i < 64; i++) {
      h.answered(3_000 * MS);
    }
    assertThat(h.hedgeMillis()).isEqualTo(5_000);
  }

  @Test
  void threeBadAsksInARow_skipTheHome_for1sThen2s_withOneProbeAtATime_andOneGoodAnswerEndsIt() {
    PeerHealth h = new PeerHealth();
    long t = 0;
    assertThat(h.failed(t)).isFalse();
    assertThat(h.failed(t)).isFalse();
    assertThat(h.skipped(t)).isFalse();
    assertThat(h.failed(t)).isTrue(); // the third: skipped for 1 s
    assertThat(h.skipped(t + 999 * MS)).isTrue();
    t += 1_000 * MS;
    assertThat(h.skipped(t)).isFalse(); // the probe goes out
    assertThat(h.skipped(t)).isTrue(); // the others wait for its answer
    assertThat(h.failed(t)).isFalse(); // the probe failed: skipped for 2 s (not the first skip)
    assertThat(h.skipped(t + 1_999 * MS)).isTrue();
    t += 2_000 * MS;
    assertThat(h.skipped(t)).isFalse(); // the next probe
    h.answered(5 * MS); // it answered in time: a home like any other
    assertThat(h.skipped(t)).isFalse();
    assertThat(h.skipped(t)).isFalse();
    assertThat(h.failed(t)).isFalse(); // one bad ask after a good one: no skip
  }

  @Test
  void skipsDoubleUpTo8s() {
    PeerHealth h = new PeerHealth();
    long t = 0;
    for (int i = 0; i < 3; i++) {
      h.failed(t);
    }
    long[] expected = {1_000, 2_000, 4_000, 8_000, 8_000};
    for (long ms : expected) {
      assertThat(h.skipped(t + (ms - 1) * MS)).isTrue();
      t += ms * MS;
      assertThat(h.skipped(t)).as("the probe after %d ms", ms).isFalse();
      h.failed(t);
    }
  }
}
