package org.hintfs.fs.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.hintfs.policy.NextUse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Streams: which stream a hint and an open belong to, when a stream ends, next use over all. */
public class StreamsTest {
  /** A process tree the test draws: torchrun (100) with ranks 200 and 300 and their workers. */
  static final class FakeTree implements ProcessTree {
    final Map<Long, Long> parent = new HashMap<>();
    final Set<Long> alive = new HashSet<>();
    final Map<Long, Long> threadOf = new HashMap<>();

    @Override
    public long process(long tid) {
      return threadOf.getOrDefault(tid, tid);
    }

    void spawn(long pid, long ppid) {
      parent.put(pid, ppid);
      alive.add(pid);
    }

    @Override
    public long parent(long pid) {
      return parent.getOrDefault(pid, 0L);
    }

    @Override
    public boolean alive(long pid) {
      return alive.contains(pid);
    }
  }

  FakeTree tree;
  Streams streams;

  @BeforeEach
  void setUp() {
    tree = new FakeTree();
    tree.spawn(100, 1);
    tree.spawn(200, 100);
    tree.spawn(201, 200);
    tree.spawn(202, 200);
    tree.spawn(300, 100);
    tree.spawn(301, 300);
    tree.spawn(999, 1);
    streams = new Streams(tree, 16, 0);
  }

  static int[] range(int from, int to) {
    return IntStream.range(from, to).toArray();
  }

  @Test
  void aWorkersOpenBelongsToTheRankThatWroteTheHints() {
    Stream r0 = streams.forWriter(200, null, 0, true);
    Stream r1 = streams.forWriter(300, null, 0, true);
    assertThat(r0).isNotSameAs(r1);
    assertThat(streams.attribute(201, 5)).isEqualTo(new Streams.Attribution(r0, true));
    assertThat(streams.attribute(202, 5).stream()).isSameAs(r0);
    assertThat(streams.attribute(301, 5)).isEqualTo(new Streams.Attribution(r1, true));
    // The launcher and an unrelated process own nothing, and no window holds sample 5.
    assertThat(streams.attribute(100, 5)).isNull();
    assertThat(streams.attribute(999, 5)).isNull();
    // A worker's own later hint line joins its rank's stream; a line that describes no reader
    // from a process with none starts nothing.
    assertThat(streams.forWriter(201, null, 0, true)).isSameAs(r0);
    assertThat(streams.forWriter(999, null, 0, false)).isNull();
    assertThat(streams.active()).containsExactly(r0, r1);
  }

  /**
   * An open racing its owner's first hint: the open looks up its ancestry, finds no stream, and
   * only then caches that answer, after the stream started. The answer must not stick: the owner's
   * later opens are the stream's (before, they went to no stream until the cache was next cleared,
   * up to 10 s).
   */
  @Test
  void anOpenRacingItsOwnersStart_doesNotLeaveItsOwnerWithoutTheStream() throws Exception {
    tree.spawn(400, 100);
    java.util.concurrent.CountDownLatch looking = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    Thread[] opener = new Thread[1];
    ProcessTree racing =
        pausing(
            pid -> Thread.currentThread() == opener[0] && pid == 400, // no owner found: it climbs
            looking,
            started);
    Streams ss = new Streams(racing, 16, 0);
    ss.forWriter(200, null, 0, true); // some stream is live: opens are looked up
    java.util.concurrent.atomic.AtomicReference<Streams.Attribution> first =
        new java.util.concurrent.atomic.AtomicReference<>();
    opener[0] = new Thread(() -> first.set(ss.attribute(400, 5)));
    opener[0].start();
    assertThat(looking.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    Stream own = ss.forWriter(400, null, 0, true); // 400's first hint starts its stream
    started.countDown();
    opener[0].join(5_000);
    assertThat(first.get()).isNull(); // it looked before the stream was there: fair
    assertThat(ss.attribute(400, 5)).isEqualTo(new Streams.Attribution(own, true));
  }

  /** A writer whose /proc answers are slow holds up no other writer: /proc is read unlocked. */
  @Test
  void aSlowProcRead_holdsUpNoOtherWriter() throws Exception {
    tree.spawn(500, 100);
    java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    ProcessTree slow = pausing(pid -> pid == 500, reading, done);
    Streams ss = new Streams(slow, 16, 0);
    Thread writer = new Thread(() -> ss.forWriter(500, null, 0, true));
    writer.start();
    assertThat(reading.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    var other =
        java.util.concurrent.CompletableFuture.supplyAsync(() -> ss.forWriter(300, null, 0, true));
    try {
      assertThat(other.get(2, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
    } finally {
      done.countDown();
      writer.join(5_000);
    }
    assertThat(ss.active()).hasSize(2);
  }

  @Test
  void aThreadOfTheRank_isTheRank() {
    // FUSE reports the calling thread's id: thread 205 of rank 200 reads for rank 200.
    tree.threadOf.put(205L, 200L);
    Stream r0 = streams.forWriter(200, null, 0, true);
    assertThat(streams.attribute(205, 5)).isEqualTo(new Streams.Attribution(r0, true));
    // And a hint written from that thread goes to the same stream.
    assertThat(streams.forWriter(205, null, 0, true)).isSameAs(r0);
  }

  @Test
  void withNoOwningAncestor_theStreamWhoseWindowHoldsTheSampleTakesTheOpen() {
    Stream a = streams.forWriter(200, null, 0, true);
    Stream b = streams.forWriter(300, null, 0, true);
    a.predict(null, range(0, 100), 1000);
    b.predict(null, range(100, 500), 1000);
    assertThat(streams.attribute(999, 110)).isEqualTo(new Streams.Attribution(b, false));
    assertThat(streams.attribute(999, 3)).isEqualTo(new Streams.Attribution(a, false));
    // Position 0, window 16 (at least MIN_BEHIND = 64): up to 4 x 64 = 256 ahead count; 380 is
    // 280 ahead of b's reader, 700 in no order.
    assertThat(streams.attribute(999, 380)).isNull();
    assertThat(streams.attribute(999, 700)).isNull();
  }

  /**
   * A stream whose hint came from a shell (no owning ancestor), read with a large batch: a worker's
   * open far behind the furthest one still goes to the stream, just after that worker's last.
   */
  @Test
  void withNoOwningAncestor_aWorkersNextFile_farBehindTheFurthestOpen_takesTheOpen() {
    Stream a = streams.forWriter(200, null, 0, true);
    a.predict(null, range(0, 1000), 1000);
    a.order().moveTo(600); // other workers read on to 599
    assertThat(streams.attribute(999, 100)).isNull(); // 500 behind: beyond the window
    a.noteReader(999, 99, 99); // 999's last open was 99
    assertThat(streams.attribute(999, 100)).isEqualTo(new Streams.Attribution(a, false));
    assertThat(streams.attribute(999, 120)).isNull(); // not its next file
  }

  @Test
  void aConfirmedOrder_expectsAnUnreadFileBehindTheFurthestOpen_anUnconfirmedOneDoesNot() {
    Stream a = streams.forWriter(200, null, 0, true);
    a.predict(null, range(0, 10_000), 10_000);
    a.setBehind(256, 64);
    a.order().moveTo(3000); // the furthest open; 1,000 is unread, 2,000 behind it
    assertThat(a.expectedPosition(1000, 256, 64, 0)).isEqualTo(-1);
    for (int k = 0; k < 31; k++) {
      a.judge(true);
    }
    assertThat(a.confirmed()).isFalse(); // 31 verdicts: too few
    a.judge(true);
    assertThat(a.confirmed()).isTrue();
    assertThat(a.expectedPosition(1000, 256, 64, 0)).isEqualTo(1000);
    // Further back than 8 windows (3,000 - 2,048 = 952): not counted as a slower worker's.
    assertThat(a.expectedPosition(900, 256, 64, 0)).isEqualTo(-1);
    a.order().markRead(1000);
    a.order().markRead(1001);
    assertThat(a.expectedPosition(1001, 256, 64, 0)).isEqualTo(-1); // read already
    for (int k = 0; k < 4; k++) {
      a.judge(false); // 28 of 32... then of 36: under nine in ten
    }
    assertThat(a.confirmed()).isFalse();
    assertThat(a.expectedPosition(1002, 256, 64, 0)).isEqualTo(-1);
  }

  @Test
  void namedStreams_areKeyedByJobAndRank_whoeverWrites() {
    Stream s = streams.forWriter(999, "sweep", 1, true);
    assertThat(streams.forWriter(100, "sweep", 1, true)).isSameAs(s);
    assertThat(streams.forWriter(999, "sweep", 0, true)).isNotSameAs(s);
    assertThat(s.job(tree)).isEqualTo("sweep");
  }

  @Test
  void jobs_ranksOfOneLauncherShareOne_aSingleProcessIsItsOwn() {
    Stream r0 = streams.forWriter(200, null, 0, true);
    Stream r1 = streams.forWriter(300, null, 0, true);
    Stream solo = streams.forWriter(999, null, 0, true);
    r0.predict(new SamplerSpec(1, 2, 0, "distributed", false, false), range(0, 10), 400);
    r1.predict(new SamplerSpec(1, 2, 1, "distributed", false, false), range(10, 20), 400);
    solo.predict(new SamplerSpec(1, 1, 0, "distributed", false, false), range(0, 20), 400);
    assertThat(r0.job(tree)).isEqualTo("ppid:100").isEqualTo(r1.job(tree));
    assertThat(solo.job(tree)).isEqualTo("pid:999");
  }

  @Test
  void aStreamEndsWithItsOwner_ifItsOwnerRead_elseWhenIdle() {
    Stream reader = streams.forWriter(200, null, 0, true);
    reader.predict(null, range(0, 10), 400);
    streams.attribute(201, 0).stream().opened(true, true); // its worker read: adopted
    Stream echoed = streams.forWriter(300, null, 0, true); // hints from a shell's echo
    echoed.predict(null, range(10, 20), 400);
    Stream bare = streams.forWriter(999, null, 0, true); // a dataset line, nothing predicted
    Set<Stream> ended = new HashSet<>();
    streams.onEnd(ended::add);
    tree.alive.removeAll(Set.of(200L, 300L, 999L));
    streams.reap();
    assertThat(ended).containsExactlyInAnyOrder(reader, bare);
    assertThat(streams.active()).containsExactly(echoed);
    assertThat(reader.order().known()).isFalse();
    // Its old workers' opens no longer reach it.
    assertThat(streams.attribute(201, 50)).isNull();
  }

  @Test
  void nextUse_isTheSoonestOverAllStreams_inEstimatedTime() {
    Stream fast = streams.forWriter(200, null, 0, true);
    Stream slow = streams.forWriter(300, null, 0, true);
    // Sample 7 is 7th for a reader at 1 ms per open and 2nd for one at 100 ms per open.
    fast.order().set(range(0, 10), 400, 1e6);
    slow.order().set(new int[] {50, 51, 7}, 400, 1e8);
    long now = Streams.nowNs();
    assertThat(streams.after(7) - now).isBetween(6_000_000L, 8_000_000L);
    assertThat(streams.after(51) - now).isBetween(90_000_000L, 110_000_000L);
    assertThat(streams.after(300)).isEqualTo(NextUse.NEVER);
    assertThat(streams.known()).isTrue();
    // A read moves past: 3's next use is gone once the reader has read it.
    fast.order().markRead(3);
    fast.order().moveTo(4);
    assertThat(streams.after(3)).isEqualTo(NextUse.NEVER);
  }

  @Test
  void aSlowerWorkersUnreadFile_justBehindThePosition_keepsItsNextUse() {
    Stream s = streams.forWriter(200, null, 0, true);
    s.order().set(range(0, 100), 400, 1e6);
    // Worker 1 read positions 16..31 (batch 1) before worker 0 read 0..15 (batch 0).
    for (int p = 16; p < 32; p++) {
      s.order().markRead(p);
    }
    s.order().moveTo(32);
    s.order().markRead(0); // worker 0 has read the first file of its batch
    assertThat(s.order().nextUse(0)).isEqualTo(NextUse.NEVER);
    assertThat(s.order().nextUse(20)).isEqualTo(NextUse.NEVER);
    // 1..15 are still to be read, by the slower worker: needed now, not never.
    assertThat(s.order().nextUse(5)).isLessThanOrEqualTo(s.order().nextUse(40));
  }

  @Test
  void theNextEpochsHead_continuesPastTheEnd() {
    Stream s = streams.forWriter(200, null, 0, true);
    s.order().set(new int[] {1, 2, 3}, 400, 1e6);
    s.order().setNextHead(new int[] {3, 9});
    assertThat(s.order().extent()).isEqualTo(5);
    assertThat(s.order().at(4)).isEqualTo(9);
    for (int p = 0; p < 3; p++) {
      s.order().markRead(p);
    }
    s.order().moveTo(3); // the epoch is read: 3's next use is the next epoch's first read
    assertThat(s.order().nextUse(3)).isLessThan(s.order().nextUse(9));
    assertThat(s.order().nextUse(1)).isEqualTo(NextUse.NEVER);
  }

  @Test
  void atMostMaxStreams_areLive() {
    for (int i = 0; i < Streams.MAX_STREAMS; i++) {
      streams.forWriter(999, "j", i, true);
    }
    assertThatThrownBy(() -> streams.forWriter(999, "j", 10_000, true))
        .isInstanceOf(Streams.TooManyStreamsException.class)
        .hasMessageContaining("too many streams");
  }

  @Test
  void whatARecognisedReaderOpenedBeforeItsOrder_isReadInIt_notNeededNow() {
    Stream a = streams.forWriter(200, null, 0, true);
    int[] order = range(0, 1000);
    // The reader opened 0..129 while it had no order; its DataLoader's slower worker has not yet
    // opened 130..139, and the furthest open is 149 when the recognised order arrives.
    for (int id = 0; id < 130; id++) {
      a.recognition().noteOpen(id);
    }
    a.predict(null, order, 1000);
    a.setBehind(256, 64);
    a.markOpenedBeforeOrderRead();
    a.order().startAt(150);
    long now = a.order().timeAt(150);
    // Opened before the order: read, not needed again this epoch.
    assertThat(a.order().nextUse(5)).isEqualTo(NextUse.NEVER);
    assertThat(a.order().nextUse(129)).isEqualTo(NextUse.NEVER);
    // Just behind the reader and never opened: a slower worker's file, needed now.
    assertThat(a.order().nextUse(135)).isEqualTo(now);
    assertThat(a.order().nextUse(200)).isGreaterThan(now);
    // Taken once: a later recognition starts afresh.
    assertThat(a.recognition().takeOpened()).isEmpty();
  }

  @Test
  void theEpochBeforesUnreadTail_carriedOver_isExpectedThere_notInTheNewEpoch() {
    Stream a = streams.forWriter(200, null, 0, true);
    // A recognised stream moved on: in front, the old epoch's last 600 positions (ids 400-999),
    // two of them (ids 450 and 520) not yet opened by a slower worker; then the new epoch, the
    // same files in another order (p * 7 mod 1,000).
    int[] next = new int[1600];
    for (int p = 0; p < 600; p++) {
      next[p] = 400 + p;
    }
    for (int p = 0; p < 1000; p++) {
      next[600 + p] = p * 7 % 1000;
    }
    a.predict(null, next, 10_000);
    a.setBehind(100, 64);
    for (int p = 0; p < 600; p++) {
      if (p != 50 && p != 120) {
        a.order().markRead(p);
      }
    }
    a.setCarried(600);
    a.order().startAt(600);
    // Id 450 is also at 950 in the new epoch, within 4 windows of the furthest open: without the
    // carried tail it was taken for that, and the position jumped 350 places on.
    assertThat(a.order().positionOf(450)).isEqualTo(50);
    assertThat(a.expectedPosition(450, 100, 64, 0)).isEqualTo(50);
    assertThat(a.expectedPosition(520, 100, 64, 0)).isEqualTo(120);
    // Once read there, an open of it is the new epoch's.
    a.order().markRead(50);
    assertThat(a.expectedPosition(450, 100, 64, 0)).isEqualTo(950);
    // A new order of another kind carries nothing.
    a.predict(null, next, 10_000);
    a.order().startAt(600);
    assertThat(a.expectedPosition(520, 100, 64, 0)).isEqualTo(600 + 520 * 143 % 1000);
  }

  @Test
  void aSlowerWorkersFilesAreNeededNow_aFileNeverOpenedOnlyUntilTheReaderIsFarPast() {
    Stream a = streams.forWriter(200, null, 0, true);
    a.predict(null, range(0, 10_000), 10_000);
    a.setBehind(100, 64); // a window of 100: lag allowed up to 8 windows
    // The reader skipped 10 (never opened it); a slower worker has yet to open 500; the others
    // read on to 1,199.
    for (int p = 0; p < 1200; p++) {
      if (p != 10 && p != 500) {
        a.order().markRead(p);
      }
    }
    a.order().moveTo(1200);
    // 10 is unread 1,190 positions behind, further than 8 windows: no longer held as needed now.
    assertThat(a.order().lowMark()).isEqualTo(500);
    assertThat(a.order().nextUse(10)).isEqualTo(NextUse.NEVER);
    assertThat(a.order().nextUse(500)).isEqualTo(a.order().timeAt(1200));
    // Read positions are passed over; the first unread one is 10 while it is within the lag.
    PredictedOrder o = new PredictedOrder();
    o.set(range(0, 10_000), 10_000);
    o.setBehind(100);
    for (int p = 0; p < 700; p++) {
      if (p != 10 && p != 650) {
        o.markRead(p);
      }
    }
    o.moveTo(700);
    assertThat(o.lowMark()).isEqualTo(10);
    assertThat(o.nextUse(10)).isEqualTo(o.timeAt(700));
    assertThat(o.nextUse(650)).isEqualTo(o.timeAt(700));
    o.markRead(10);
    assertThat(o.lowMark()).isEqualTo(650);
  }

  /** root 0, classes 1 and 2, then {@code files} images alternating between them. */
  public static org.hintfs.policy.DirectoryTree imageFolder(int files) {
    return new org.hintfs.policy.DirectoryTree() {
      @Override
      public boolean isDirectory(int node) {
        return node <= 2;
      }

      @Override
      public int childCount(int dir) {
        return dir == 0 ? 2 : dir <= 2 ? (files + 2 - dir) / 2 : 0;
      }

      @Override
      public int child(int dir, int i) {
        return dir == 0 ? 1 + i : 3 + (dir - 1) + 2 * i;
      }

      @Override
      public String name(int node) {
        return node <= 2 ? "c" + node : String.format("f%04d.jpg", node);
      }
    };
  }

  @Test
  void inAClusterTheNextUseCountsTheOtherRanksOfTheJob_onTheRanksOwnClock() {
    int files = 200;
    var v = org.hintfs.policy.ImageFolderView.build(imageFolder(files), 0);
    assertThat(v.samples()).isEqualTo(files);
    int world = 4;
    SamplerSpec spec = new SamplerSpec(5, world, 0, "distributed", false, false);
    int[][] orders = new int[world][];
    for (int r = 0; r < world; r++) {
      int[] samples =
          org.hintfs.policy.sampler.TorchSamplers.distributed(files, world, r, true, 5, 0, false);
      orders[r] = new int[samples.length];
      for (int k = 0; k < samples.length; k++) {
        orders[r][k] = v.node(samples[k]);
      }
    }
    Stream r0 = streams.forWriter(200, null, 0, true);
    r0.setDataset("/ds", v, files + 3);
    r0.predict(spec, orders[0], files + 3);
    r0.order().startAt(0);
    int k = 17;
    int other = orders[2][k]; // rank 2 reads it at step 17; this node's rank never does
    assertThat(streams.after(other)).isEqualTo(NextUse.NEVER);
    streams.countWholeJobs(true);
    // Computed when the order is set (on the hint applier), not when the cache's lock asks.
    streams.warmJobClock(r0);
    assertThat(streams.jobClockEpochsReady()).isEqualTo(2);
    assertThat(streams.after(other)).isEqualTo(r0.order().timeAt(k));
    // This node's own rank: the same answer as its own order gives.
    assertThat(streams.after(orders[0][30])).isEqualTo(r0.order().nextUse(orders[0][30]));
    // Once the job is past step 17, rank 2's sample is next read in the next epoch.
    r0.order().moveTo(40);
    int[] next =
        org.hintfs.policy.sampler.TorchSamplers.distributedPositions(
            files, world, true, 5, 1, false);
    int sample = -1;
    for (int s = 0; s < files; s++) {
      if (v.node(s) == other) {
        sample = s;
      }
    }
    assertThat(streams.after(other)).isEqualTo(r0.order().timeAt(orders[0].length + next[sample]));
    streams.countWholeJobs(false);
    assertThat(streams.after(other)).isEqualTo(NextUse.NEVER);
  }

  /** Two streams set to the same order array share its lookup tables; an equal copy does not. */
  @Test
  void predictedOrdersOfOneOrderArray_shareTheirTables() {
    int[] ids = {4, 2, 7, 2, 0};
    PredictedOrder a = new PredictedOrder();
    PredictedOrder b = new PredictedOrder();
    PredictedOrder c = new PredictedOrder();
    a.set(ids, 10);
    b.set(ids, 10);
    c.set(ids.clone(), 10);
    assertThat(a.sharesTablesWith(b)).isTrue();
    assertThat(a.sharesTablesWith(c)).isFalse();
    assertThat(b.positionOf(2)).isEqualTo(1);
    assertThat(b.occurrenceFrom(2, 2)).isEqualTo(3);
    assertThat(c.occurrenceFrom(2, 2)).isEqualTo(3);
  }

  /**
   * Issue 39: the job's positions are computed only when the hint applier warms them, never by a
   * next-use question (asked under the cache's index lock): unwarmed, the job counts only this
   * node's own rank. And at most {@link JobOrders#KEPT} epochs are kept, the oldest dropped first,
   * not all of them cleared and recomputed.
   */
  @Test
  void theJobClock_isNeverComputedByANextUseQuestion_andKeepsItsLatestEpochs() {
    int files = 200;
    var v = org.hintfs.policy.ImageFolderView.build(imageFolder(files), 0);
    int world = 4;
    SamplerSpec spec = new SamplerSpec(5, world, 0, "distributed", false, false);
    int[] samples =
        org.hintfs.policy.sampler.TorchSamplers.distributed(files, world, 0, true, 5, 0, false);
    int[] mine = new int[samples.length];
    for (int k = 0; k < samples.length; k++) {
      mine[k] = v.node(samples[k]);
    }
    int[] rank2 =
        org.hintfs.policy.sampler.TorchSamplers.distributed(files, world, 2, true, 5, 0, false);
    Stream r0 = streams.forWriter(200, null, 0, true);
    r0.setDataset("/ds", v, files + 3);
    r0.predict(spec, mine, files + 3);
    r0.order().startAt(0);
    streams.countWholeJobs(true);
    int other = v.node(rank2[17]);
    assertThat(streams.after(other)).isEqualTo(NextUse.NEVER); // not warmed: own rank only
    assertThat(streams.jobClockEpochsReady()).isZero(); // and nothing computed by asking
    assertThat(streams.after(mine[30])).isEqualTo(r0.order().nextUse(mine[30]));
    streams.warmJobClock(r0);
    assertThat(streams.after(other)).isEqualTo(r0.order().timeAt(17));
    for (int e = 1; e <= 10; e++) {
      r0.setEpoch(e);
      streams.warmJobClock(r0); // epochs e and e + 1: one new each time
      assertThat(streams.jobClockEpochsReady()).isEqualTo(Math.min(e + 2, JobOrders.KEPT));
    }
    r0.setEpoch(0); // dropped long ago: not recomputed by a question
    assertThat(streams.after(other)).isEqualTo(NextUse.NEVER);
    assertThat(streams.jobClockEpochsReady()).isEqualTo(JobOrders.KEPT);
    streams.countWholeJobs(false);
  }

  /**
   * This test's process tree, whose {@code parent} question pauses when {@code when} holds: it
   * counts {@code reached} down and waits for {@code release} (at most 5 s).
   */
  ProcessTree pausing(
      java.util.function.LongPredicate when,
      java.util.concurrent.CountDownLatch reached,
      java.util.concurrent.CountDownLatch release) {
    return new ProcessTree() {
      @Override
      public long parent(long pid) {
        if (when.test(pid)) {
          reached.countDown();
          try {
            release.await(5, java.util.concurrent.TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return tree.parent(pid);
      }

      @Override
      public boolean alive(long pid) {
        return tree.alive(pid);
      }
    };
  }
}
