package org.hintfs.policy.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.hintfs.policy.sampler.TorchSamplers;
import org.hintfs.policy.sim.ClusterSimulator.Job;
import org.hintfs.policy.sim.ClusterSimulator.Mode;
import org.hintfs.policy.sim.ClusterSimulator.Result;
import org.junit.jupiter.api.Test;

class ClusterSimulatorTest {
  private static final int[] EIGHT_OF_100 = {100, 100, 100, 100, 100, 100, 100, 100};

  /**
   * 2 nodes (ranks 0-1 on node 0, 2-3 on node 1), 8 samples of 100 bytes, node 0 home to 0-3 and
   * node 1 to 4-7, caches of 2 samples (0.25 each, 0.5 together). Epoch 0 each node reads its own
   * homed samples, epoch 1 the other node's. Positions (the job clock) in brackets.
   */
  private static Job swapJob() {
    int[] home = {0, 0, 0, 0, 1, 1, 1, 1};
    int[][] orders = {
      {0, 1, 4, 5, /* step 1 */ 2, 3, 6, 7}, // [0-3] then [4-7]
      {4, 5, 0, 1, /* step 1 */ 6, 7, 2, 3} // [8-11] then [12-15]
    };
    return Job.of(2, EIGHT_OF_100, home, orders);
  }

  @Test
  void swapJob_beladyHomesMeetTheBound_lruAndIndependentRefetchEverything() {
    Job job = swapJob();
    // Belady: epoch 0, each home keeps the two of its samples read first (next uses 10, 11 at node
    // 0; 8, 9 at node 1) and bypasses the two read later (next uses 14, 15 and 12, 13 are
    // further): 8 GETs. Epoch 1: every read goes to the other node, its home; the 4 kept hit
    // there, the 4 others are GETs: 12 = 8 x (1 + (1 - 0.5)), the bound.
    Result belady = ClusterSimulator.run(job, Mode.CLUSTER_BELADY, 0.25);
    assertThat(belady.gets()).isEqualTo(12);
    assertThat(belady.getsPerKey()).isEqualTo(belady.boundPerKey()).isEqualTo(1.5);
    assertThat(belady.peerReads()).isEqualTo(8); // all of epoch 1
    assertThat(belady.bytesBetweenNodes()).isEqualTo(800);
    assertThat(belady.localHits()).isZero(); // homes are full of homed samples: no guests
    // LRU: each home ends epoch 0 with the two it read last (2, 3 and 6, 7) and epoch 1 asks for
    // the two it read first, then the two it just evicted: 8 + 8 GETs.
    Result lru = ClusterSimulator.run(job, Mode.CLUSTER_LRU, 0.25);
    assertThat(lru.gets()).isEqualTo(16);
    assertThat(lru.peerReads()).isEqualTo(8);
    // Alone: each node reads 8 distinct samples, each once: 16 GETs and never a hit.
    Result alone = ClusterSimulator.run(job, Mode.INDEPENDENT, 0.25);
    assertThat(alone.gets()).isEqualTo(16);
    assertThat(alone.peerReads()).isZero();
    assertThat(alone.localHits()).isZero();
  }

  /**
   * 2 nodes, 4 samples of 100 bytes, node 0 home to 0-2 and node 1 to 3, caches of 2 samples (0.5
   * each), 3 epochs of one step [rank 0, rank 1 | rank 2, rank 3].
   */
  private static Job guestJob() {
    int[] sizes = {100, 100, 100, 100};
    int[] home = {0, 0, 0, 1};
    int[][] orders = {
      {1, 2, 0, 3}, // [0-3]
      {2, 3, 0, 1}, // [4-7]
      {1, 2, 3, 0} // [8-11]
    };
    return Job.of(2, sizes, home, orders);
  }

  @Test
  void beladyHome_rekeysASampleOnlyAGuestCopyServed() {
    // Next uses: 0 at [2] [6] [11], 1 at [0] [7] [8], 2 at [1] [4] [9], 3 at [3] [5] [10].
    // [0] [1] GETs, node 0 holds 1 (next 7) and 2 (4). [2] node 1 asks node 0 for 0: GET, next 6
    // is sooner than 1's 7, so 1 goes; node 1 keeps 0 as a guest. [3] node 1 GETs 3, its own.
    // [4] hit, 2 now 9. [5] node 0 asks node 1 for 3: served, no room for a guest at node 0.
    // [6] node 1's guest copy of 0 serves it: node 0 re-keys 0 to 11 without hearing a request.
    // [7] node 1 asks for 1: GET at node 0, next 8 beats 0's 11, so 0 goes (with 0's key left at
    // 6, 2 would go instead and [9] would miss); node 1's guest 0 gives its room to guest 1.
    // [8] [9] [10] hit; [11] node 1 asks node 0 for 0: GET. 6 GETs, hits 0 + 2 + 3, 4 peer reads.
    Result r = ClusterSimulator.run(guestJob(), Mode.CLUSTER_BELADY, 0.5);
    assertThat(r.gets()).isEqualTo(6);
    assertThat(r.epochLocalHits()).containsExactly(0, 2, 3);
    assertThat(r.peerReads()).isEqualTo(4);
    assertThat(r.bytesBetweenNodes()).isEqualTo(400);
  }

  @Test
  void guestJob_lruAndIndependent() {
    // LRU: [2] evicts 1 (least recent) for 0; [6] is the guest hit, unheard by node 0, so [7]
    // evicts 0 (older than 2's [4] hit) for 1; [8] [9] [10] hit, [11] GETs 0: 6 GETs, 5 hits.
    Result lru = ClusterSimulator.run(guestJob(), Mode.CLUSTER_LRU, 0.5);
    assertThat(lru.gets()).isEqualTo(6);
    assertThat(lru.epochLocalHits()).containsExactly(0, 2, 3);
    // Alone: node 0 reads 1 2 | 2 3 | 1 2 and keeps 1 and 2 (3 is never read again: bypassed);
    // node 1 reads 0 3 | 0 1 | 3 0 and keeps 0 and 3: 3 GETs and 3 hits each, no peer.
    Result alone = ClusterSimulator.run(guestJob(), Mode.INDEPENDENT, 0.5);
    assertThat(alone.gets()).isEqualTo(6);
    assertThat(alone.epochLocalHits()).containsExactly(0, 2, 4);
    assertThat(alone.peerReads()).isZero();
  }

  @Test
  void torchJob_eachRankReadsItsDistributedSamplerShard() {
    // 1,000 samples over 3 nodes = 6 ranks: 167 each, the last 2 slots padded from the start.
    Job job = Job.torch(3, 1_000, 2, 7);
    assertThat(job.readsPerEpoch()).isEqualTo(167 * 6);
    for (int e = 0; e < 2; e++) {
      for (int r = 0; r < 6; r++) {
        assertThat(job.rankOrder(e, r))
            .isEqualTo(TorchSamplers.distributed(1_000, 6, r, true, 7, e, false));
      }
    }
  }

  @Test
  void torchJob_padsTheLastStepWithTheEpochsFirstReads() {
    // torch: indices += indices[:padding_size]; 1,002 slots for 1,000 samples, so the last step's
    // ranks 4 and 5 read again what ranks 0 and 1 read first.
    Job job = Job.torch(3, 1_000, 1, 7);
    assertThat(job.rankOrder(0, 4)[166]).isEqualTo(job.rankOrder(0, 0)[0]);
    assertThat(job.rankOrder(0, 5)[166]).isEqualTo(job.rankOrder(0, 1)[0]);
  }

  @Test
  void independent_isEachNodeReplayedAloneByTheTraceSimulator() {
    // A node alone sees only its two ranks' reads: the single-cache simulator (the mount's cache,
    // clairvoyant over that node's trace) must count what the cluster simulator counts for it.
    Job job = Job.torch(4, 3_000, 3, 13);
    for (double fraction : new double[] {0.03, 0.1}) {
      long capacity = (long) (job.datasetBytes() * fraction);
      long hits = 0;
      long misses = 0;
      for (int n = 0; n < 4; n++) {
        Trace t = new Trace();
        for (int e = 0; e < 3; e++) {
          int[] a = job.rankOrder(e, 2 * n);
          int[] b = job.rankOrder(e, 2 * n + 1);
          for (int k = 0; k < a.length; k++) {
            t.read(e, a[k], ClusterSimulator.SAMPLE_BYTES, -1);
            t.read(e, b[k], ClusterSimulator.SAMPLE_BYTES, -1);
          }
        }
        Simulator.Result alone =
            new Simulator.Run(
                    t.samples(),
                    null,
                    t.nextPositions(),
                    "clairvoyant",
                    capacity,
                    Simulator.Options.PLAIN)
                .replay(t, fraction);
        hits += alone.hits();
        misses += alone.reads() - alone.hits();
      }
      Result r = ClusterSimulator.run(job, Mode.INDEPENDENT, fraction);
      assertThat(r.localHits()).as("at " + fraction).isEqualTo(hits);
      assertThat(r.gets()).as("at " + fraction).isEqualTo(misses);
    }
  }

  @Test
  void homes_areAUniformDraw() {
    Job job = Job.torch(8, 80_000, 1, 3);
    int[] homed = new int[8];
    for (int s = 0; s < 80_000; s++) {
      homed[job.home(s)]++;
    }
    // 10,000 expected per node, standard deviation sqrt(80,000 x 1/8 x 7/8) = 94: 5 sigma.
    for (int h : homed) {
      assertThat(h).isBetween(9_530, 10_470);
    }
  }

  @Test
  void getsNeverBeatTheAggregateBound() {
    Job job = Job.torch(8, 4_000, 3, 11);
    for (double fraction : new double[] {0.02, 0.06, 0.125, 0.2}) {
      for (Mode m : Mode.values()) {
        Result r = ClusterSimulator.run(job, m, fraction);
        // Samples are 110 KB each, so the bound counts samples: a true lower bound.
        assertThat(r.gets()).as(m + " at " + fraction).isGreaterThanOrEqualTo(bound(r));
        assertThat(r.reads()).isEqualTo(3L * job.readsPerEpoch());
      }
    }
  }

  @Test
  void clusterBelady_makesNoMoreGetsThanClusterLru() {
    Job job = Job.torch(8, 4_000, 3, 5);
    for (double fraction : new double[] {0.03, 0.06, 0.1, 0.15}) {
      Result belady = ClusterSimulator.run(job, Mode.CLUSTER_BELADY, fraction);
      Result lru = ClusterSimulator.run(job, Mode.CLUSTER_LRU, fraction);
      assertThat(belady.gets()).as("at " + fraction).isLessThanOrEqualTo(lru.gets());
    }
  }

  @Test
  void cachesThatHoldEveryHome_readEachSampleFromTheSourceOnce() {
    // 4 nodes, 2,000 samples: about 500 homed per node (sd 19), and caches of 800 (0.4 each, 1.6
    // together) hold every home's samples with room for guests, which never take a homed one's.
    Job job = Job.torch(4, 2_000, 3, 9);
    for (int n = 0; n < 4; n++) {
      int node = n;
      assertThat(java.util.stream.IntStream.range(0, 2_000).filter(s -> job.home(s) == node))
          .hasSizeLessThan(800);
    }
    for (Mode m : new Mode[] {Mode.CLUSTER_BELADY, Mode.CLUSTER_LRU}) {
      Result r = ClusterSimulator.run(job, m, 0.4);
      assertThat(r.gets()).as(m.label()).isEqualTo(2_000);
      assertThat(r.getsPerKey()).isEqualTo(r.boundPerKey());
    }
    // Alone, the same caches hold 0.4 of the dataset each: every node refetches.
    assertThat(ClusterSimulator.run(job, Mode.INDEPENDENT, 0.4).gets()).isGreaterThan(2_000);
  }

  @Test
  void oneNode_theClusterIsTheNodeAlone() {
    Job job = Job.torch(1, 1_000, 3, 2);
    for (double fraction : new double[] {0.1, 0.3, 0.7}) {
      Result alone = ClusterSimulator.run(job, Mode.INDEPENDENT, fraction);
      Result cluster = ClusterSimulator.run(job, Mode.CLUSTER_BELADY, fraction);
      assertThat(cluster.gets()).isEqualTo(alone.gets());
      assertThat(cluster.epochLocalHits()).containsExactly(alone.epochLocalHits());
      assertThat(cluster.peerReads()).isZero();
      assertThat(alone.localHits()).isPositive();
    }
  }

  @Test
  void aJobWhoseEpochIsNotWholeSteps_isRefused() {
    int[] home = new int[8];
    int[][] orders = {{0, 1, 2, 3, 4, 5}}; // 6 reads, steps of 4
    assertThatThrownBy(() -> Job.of(2, EIGHT_OF_100, home, orders))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole steps of 4");
    int[] away = new int[8];
    Arrays.fill(away, 2);
    assertThatThrownBy(() -> Job.of(2, EIGHT_OF_100, away, new int[][] {{0, 1, 2, 3}}))
        .hasMessageContaining("sample 0 has home 2");
    assertThatThrownBy(() -> Job.of(2, EIGHT_OF_100, home, new int[][] {{0, 1, 2, 9}}))
        .hasMessageContaining("reads sample 9 of 8");
  }

  private static long bound(Result r) {
    return (long) Math.ceil(r.samples() * r.boundPerKey() - 1e-9);
  }
}
