package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.hintfs.policy.sampler.ShuffleReplay;
import org.junit.jupiter.api.Test;

/** A packed file's samples and their seeded order: what is read, what comes next, and when. */
class PackedOrderTest {
  static final long BASE = 2048; // where h5py puts a small file's first contiguous dataset
  static final long STRIDE = 49152;
  static final int N = 100;

  @Test
  void positionsFollowTheDataLoadersShuffle_andReadSamplesLeaveTheWindow() {
    PackedOrder o = new PackedOrder(BASE, STRIDE, N, 1234, 0, false);
    int[] e0 = new ShuffleReplay(N, 1234, false).epoch(0);
    int[] e1 = new ShuffleReplay(N, 1234, false).epoch(1);
    assertThat(o.rangeAt(0)).containsExactly(BASE + e0[0] * STRIDE, STRIDE);
    assertThat(o.rangeAt(N + 3)).containsExactly(BASE + e1[3] * STRIDE, STRIDE);
    assertThat(o.rangeAt(2L * N)).isNull(); // two epochs ahead: not predicted yet
    // The sample at position 0 read (a READ of its pages, rounded to the kernel's 4 KiB).
    long at = BASE + e0[0] * STRIDE;
    assertThat(o.read(at & -4096, (int) STRIDE + 4096)).containsExactly(e0[0]);
    assertThat(o.rangeAt(0)).isNull();
    assertThat(o.lowMark()).isEqualTo(1);
    // Its next use is its place in the next epoch; the sample at position 1 is needed next.
    assertThat(o.nextUse(at, at + STRIDE)).isEqualTo(N + inverse(e1)[e0[0]]);
    long next = BASE + e0[1] * STRIDE;
    assertThat(o.nextUse(next, next + 10)).isEqualTo(1);
    // A page across two samples is needed when the sooner of them is.
    long edge = BASE + e0[1] * STRIDE - 100;
    assertThat(o.nextUse(edge, edge + 200)).isEqualTo(Math.min(1, o.nextUse(edge, edge + 1)));
    // The header (before the first sample) is always needed.
    assertThat(o.nextUse(0, 4096)).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void aReadOfANeighboursEdge_doesNotReadIt_andTheEpochEndsWhenEveryoneIsRead() {
    PackedOrder o = new PackedOrder(BASE, STRIDE, N, 7, 0, false);
    // The first 4 KiB of sample 5 and the last 4 KiB of sample 4: neither middle.
    assertThat(o.read(BASE + 5 * STRIDE - 4096, 8192)).isEmpty();
    for (int s = 0; s < N - 1; s++) {
      assertThat(o.read(BASE + s * STRIDE, (int) STRIDE)).containsExactly(s);
    }
    assertThat(o.epoch()).isZero();
    assertThat(o.read(BASE + (N - 1) * STRIDE, (int) STRIDE)).containsExactly(N - 1);
    assertThat(o.epoch()).isEqualTo(1);
    assertThat(o.lowMark()).isEqualTo(N); // epoch 1, position 0
    int[] e1 = new ShuffleReplay(N, 7, false).epoch(1);
    assertThat(o.rangeAt(N)).containsExactly(BASE + e1[0] * STRIDE, STRIDE);
  }

  static int[] inverse(int[] order) {
    int[] inv = new int[order.length];
    for (int p = 0; p < order.length; p++) {
      inv[order[p]] = p;
    }
    return inv;
  }
}
