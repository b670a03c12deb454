package org.hintfs.fs.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.fs.stream.TestTrees;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HintState without a mount: hints applied in order on the applier thread, importance per job,
 * stream lifetimes, epochs, and what reaches the mount through {@link HintState.Effects}.
 */
class HintStateTest {
  private static final int ENTRIES = 64;

  /** Records what applying hints asked of the mount, and whether each ran under the lock. */
  static class Recording implements HintState.Effects {
    final Object lock = new Object();
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    volatile int underLock;
    volatile boolean inLock;

    @Override
    public void underPolicyLock(Runnable r) {
      synchronized (lock) {
        inLock = true;
        try {
          r.run();
        } finally {
          inLock = false;
        }
        underLock++;
      }
    }

    @Override
    public void switchPolicy(String name) {
      calls.add("policy " + name);
    }

    @Override
    public void trace(boolean on) {
      calls.add("trace " + on);
    }

    @Override
    public int[] cachedIds() {
      return new int[0];
    }

    @Override
    public void recordScores(boolean losses, int[] ids, float[] values) {
      calls.add((losses ? "losses " : "scores ") + ids.length);
    }

    @Override
    public void orderChanged(Stream s) {
      calls.add("order " + s.id());
    }

    @Override
    public void admin(Hint.Admin a) {
      calls.add("admin " + a.verb());
    }

    @Override
    public void epochStarted(int epoch) {
      calls.add("epoch " + epoch);
    }
  }

  private Streams streams;
  private HintState state;
  private Recording effects;

  @BeforeEach
  void setUp() {
    streams = new Streams(TestTrees.ALL_ALIVE, 16, 0);
    state = new HintState(ENTRIES, streams);
    effects = new Recording();
    state.connect(effects);
  }

  private Stream job(String name) {
    return streams.forWriter(100, name, 0, true);
  }

  private void apply(Stream writer, Hint h, String verb) {
    state.accept(h, verb, writer);
    assertThat(state.awaitApplied(5_000)).isTrue();
  }

  private static Hint scores(int[] ids, float... values) {
    return new Hint.Scores(ids, values);
  }

  /**
   * A stats read waits for the lines written before it, not for a queue that never empties: while
   * loss lines keep arriving (one always pending), it returns once its own are applied.
   */
  @Test
  void awaitingApplied_waitsForTheLinesBeforeIt_notForThoseThatKeepArriving() throws Exception {
    java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(0);
    state.connect(
        new Recording() {
          @Override
          public void recordScores(boolean losses, int[] ids, float[] values) {
            permits.acquireUninterruptibly(); // each line applies when the test lets it
          }
        });
    Stream a = job("a");
    Hint loss = new Hint.Losses(new int[] {1}, new float[] {1f});
    state.accept(loss, "loss", a); // the reader's own line
    var waited =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              long t0 = System.nanoTime();
              boolean ok = state.awaitApplied(1_500);
              return ok ? (System.nanoTime() - t0) / 1_000_000 : -1L;
            });
    try {
      long deadline = System.nanoTime() + 3_000_000_000L;
      while (!waited.isDone() && System.nanoTime() < deadline) {
        state.accept(loss, "loss", a); // another line arrives before each one applies
        permits.release();
        Thread.sleep(2);
      }
      assertThat(waited.get()).as("ms waited (-1: timed out)").isBetween(0L, 1_000L);
    } finally {
      permits.release(100_000);
    }
    assertThat(state.awaitApplied(5_000)).isTrue();
  }

  /**
   * A write of an {@code epoch} line returns only once the line is applied, so the reader's next
   * opens count in the epoch it announced (applied late, a stand-in served twice in one of the
   * reader's epochs: SubstitutionIT failed so in CI). Other lines (here a policy switch) return at
   * once.
   */
  @Test
  void aWriteOfAnEpochLine_returnsOnceItIsApplied_otherLinesDoNotWait() throws Exception {
    java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(0);
    state.connect(
        new Recording() {
          @Override
          public void switchPolicy(String name) {
            permits.acquireUninterruptibly(); // the applier stalls on each policy line
          }
        });
    ControlInput input = new ControlInput(new ControlParser(null, state), state);
    long pid = 100;
    var policy =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> input.write(new java.io.ByteArrayOutputStream(), "policy lru\n".getBytes(), pid));
    try {
      assertThat(policy.get(5, java.util.concurrent.TimeUnit.SECONDS).error()).isNull(); // no wait
      var epoch =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> input.write(new java.io.ByteArrayOutputStream(), "epoch 3\n".getBytes(), pid));
      Thread.sleep(300);
      assertThat(epoch.isDone()).as("returned before the applier reached it").isFalse();
      assertThat(state.epoch()).isNotEqualTo(3);
      permits.release(); // the policy line applies, then the epoch line
      assertThat(epoch.get(5, java.util.concurrent.TimeUnit.SECONDS))
          .isEqualTo(new ControlInput.Written(null, false));
      assertThat(state.epoch()).isEqualTo(3); // already applied when the write returned
    } finally {
      permits.release(100);
    }
  }

  /**
   * Issue 39: a write of a reader line that the applier cannot reach within the write's bound says
   * so (the writer sees EINPROGRESS), never returns as if applied; the line stays queued, counted
   * in {@code pending}, and is applied in order once the applier gets there.
   */
  @Test
  void aReaderLineNotAppliedWithinTheBound_isAnsweredStillApplying_andAppliedLater()
      throws Exception {
    java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(0);
    state.connect(
        new Recording() {
          @Override
          public void switchPolicy(String name) {
            permits.acquireUninterruptibly(); // the applier stalls on the policy line
          }
        });
    ControlInput input = new ControlInput(new ControlParser(null, state), state, 200);
    long pid = 100;
    try {
      ControlInput.Written policy =
          input.write(new java.io.ByteArrayOutputStream(), "policy lru\n".getBytes(), pid);
      assertThat(policy).isEqualTo(new ControlInput.Written(null, false)); // not waited for
      long t0 = System.nanoTime();
      ControlInput.Written epoch =
          input.write(new java.io.ByteArrayOutputStream(), "epoch 3\n".getBytes(), pid);
      assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(200);
      assertThat(epoch).isEqualTo(new ControlInput.Written(null, true));
      assertThat(state.epoch()).isNotEqualTo(3); // truly not applied: the answer says so
      assertThat(state.pending()).isEqualTo(2);
      assertThat(state.stillApplying.sum()).isEqualTo(1);
      permits.release(); // the policy line applies, then the epoch line
      assertThat(state.awaitApplied(5_000)).isTrue();
      assertThat(state.epoch()).isEqualTo(3);
      assertThat(state.pending()).isZero();
      // Applied within the bound: a plain success.
      assertThat(input.write(new java.io.ByteArrayOutputStream(), "epoch 4\n".getBytes(), pid))
          .isEqualTo(new ControlInput.Written(null, false));
      assertThat(state.epoch()).isEqualTo(4);
    } finally {
      permits.release(100);
    }
    assertThat(org.hintfs.fs.serve.ErrorTable.errnoFor(new StillApplyingException(200)))
        .isEqualTo(org.hintfs.fs.Errno.EINPROGRESS);
  }

  /**
   * Issue 39: a seed hint at epoch 89 replays one permutation of n, not the 2 x 90 its loader drew
   * (the old replay built them all, and the next epoch's head again: 362 here), and the next epoch
   * one more; the orders are the naive replay's. Counted in permutations built, not timed.
   */
  @Test
  void aSeedHintAtEpoch89_buildsOnePermutation_andEachNextEpochOneMore() {
    int files = 2_000;
    org.hintfs.policy.ImageFolderView v =
        org.hintfs.policy.ImageFolderView.build(
            org.hintfs.fs.stream.StreamsTest.imageFolder(files), 0);
    for (boolean persistent : new boolean[] {false, true}) {
      HintState s = new HintState(files + 3, streams);
      s.connect(new Recording());
      Stream a = streams.forWriter(300 + (persistent ? 1 : 0), "e89-" + persistent, 0, true);
      a.setDataset("/ds", v, files + 3);
      var spec = new org.hintfs.fs.stream.SamplerSpec(7, 1, 0, "random", false, persistent);
      int[][] naive =
          org.hintfs.policy.sampler.TorchSamplers.dataLoaderShuffle(files, 7, 91, persistent);
      long built = org.hintfs.policy.sampler.TorchGenerator.permutationsBuilt();
      s.accept(new Hint.Seed(spec, 89), "seed", a);
      assertThat(s.awaitApplied(5_000)).isTrue();
      assertThat(org.hintfs.policy.sampler.TorchGenerator.permutationsBuilt() - built)
          .as("permutations of n built for epoch 89, persistent_workers %s", persistent)
          .isEqualTo(1);
      assertThat(a.order().order()).containsExactly(nodes(v, naive[89]));
      assertThat(a.order().at(files)).isEqualTo(v.node(naive[90][0])); // the next epoch's head
      long skipped = org.hintfs.policy.sampler.TorchGenerator.outputsSkipped();
      s.accept(new Hint.Epoch(90), "epoch", a);
      assertThat(s.awaitApplied(5_000)).isTrue();
      assertThat(org.hintfs.policy.sampler.TorchGenerator.permutationsBuilt() - built).isEqualTo(2);
      // From the generator kept at epoch 90's start: the tail's draws and the base seeds skipped.
      assertThat(org.hintfs.policy.sampler.TorchGenerator.outputsSkipped() - skipped)
          .isLessThan(files + 8);
      assertThat(a.order().order()).containsExactly(nodes(v, naive[90]));
    }
  }

  /**
   * Issue 39: two jobs reading with one seed get one order, not a replay and a copy each (and so
   * share its lookup tables); a third with another seed gets its own.
   */
  @Test
  void streamsOfOneSeedAndEpoch_shareOneOrder() {
    int files = 2_000;
    org.hintfs.policy.ImageFolderView v =
        org.hintfs.policy.ImageFolderView.build(
            org.hintfs.fs.stream.StreamsTest.imageFolder(files), 0);
    HintState s = new HintState(files + 3, streams);
    s.connect(new Recording());
    Stream[] st = new Stream[3];
    for (int i = 0; i < st.length; i++) {
      st[i] = streams.forWriter(400 + i, "share-" + i, 0, true);
      st[i].setDataset("/ds", v, files + 3);
    }
    long built = org.hintfs.policy.sampler.TorchGenerator.permutationsBuilt();
    for (int i = 0; i < st.length; i++) {
      var spec = new org.hintfs.fs.stream.SamplerSpec(i < 2 ? 1 : 2, 1, 0, "random", false, false);
      s.accept(new Hint.Seed(spec, 5), "seed", st[i]);
    }
    assertThat(s.awaitApplied(5_000)).isTrue();
    assertThat(st[1].order().order()).isSameAs(st[0].order().order());
    assertThat(st[2].order().order()).isNotSameAs(st[0].order().order());
    assertThat(org.hintfs.policy.sampler.TorchGenerator.permutationsBuilt() - built).isEqualTo(2);
    int[][] naive = org.hintfs.policy.sampler.TorchSamplers.dataLoaderShuffle(files, 1, 6, false);
    assertThat(st[1].order().order()).containsExactly(nodes(v, naive[5]));
  }

  private static int[] nodes(org.hintfs.policy.ImageFolderView v, int[] samples) {
    int[] ids = new int[samples.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = v.node(samples[i]);
    }
    return ids;
  }

  @Test
  void twoJobsScores_thePoliciesSeeTheHighestAnyJobGave() {
    Stream a = job("a");
    Stream b = job("b");
    apply(a, scores(new int[] {1, 2}, 1.0f, 5.0f), "importance");
    var seen = state.context().importance();
    assertThat(seen.score(1)).isEqualTo(1.0f); // one job: its scores are the policies' own
    apply(b, scores(new int[] {1}, 3.0f), "importance");
    assertThat(seen.score(1)).isEqualTo(3.0f);
    assertThat(seen.score(2)).isEqualTo(5.0f); // a's score survives b's arrival
    apply(a, scores(new int[] {1}, 4.0f), "importance");
    assertThat(seen.score(1)).isEqualTo(4.0f);
    apply(a, scores(new int[] {1}, 0.5f), "importance");
    assertThat(seen.score(1)).isEqualTo(3.0f); // b's 3.0 is now the highest
    assertThat(state.jobs()).containsExactly("a", "b");
    // Every score change ran under the policy lock, and each was handed to the trace.
    assertThat(effects.underLock).isEqualTo(4);
    assertThat(effects.calls).containsExactly("scores 2", "scores 1", "scores 1", "scores 1");
  }

  @Test
  void lossesBecomeRankScores_higherLossHigherScore() {
    Stream a = job("a");
    apply(a, new Hint.Losses(new int[] {3, 4, 5}, new float[] {0.1f, 2.0f, 0.7f}), "loss");
    var imp = state.context().importance();
    assertThat(imp.known(3) && imp.known(4) && imp.known(5)).isTrue();
    assertThat(imp.score(4)).isGreaterThan(imp.score(5));
    assertThat(imp.score(5)).isGreaterThan(imp.score(3));
    assertThat(imp.known(6)).isFalse();
  }

  @Test
  void linesApplyInTheOrderTheyArrived() {
    Stream a = job("a");
    state.accept(new Hint.Policy("lru"), "policy", a);
    state.accept(new Hint.Trace(true), "trace", a);
    state.accept(new Hint.Policy("shade"), "policy", null); // a writer with no stream
    assertThat(state.awaitApplied(5_000)).isTrue();
    assertThat(effects.calls).containsExactly("policy lru", "trace true", "policy shade");
    assertThat(state.accepted.sum()).isEqualTo(3);
    assertThat(state.acceptedByVerb()).containsEntry("policy", 2L).containsEntry("trace", 1L);
  }

  @Test
  void aStreamThatEnded_steersNothingAnyMore() {
    Stream a = job("a");
    streams.end(a);
    apply(a, scores(new int[] {7}, 9.0f), "importance");
    apply(a, new Hint.Policy("lru"), "policy");
    assertThat(state.context().importance().known(7)).isFalse();
    assertThat(effects.calls).isEmpty();
  }

  @Test
  void anExplicitOrder_isTheStreamsPrediction_andAppendsKeepThePosition() {
    Stream a = job("a");
    apply(a, new Hint.Order(new int[] {9, 8, 7}, false), "order");
    assertThat(a.order().order()).containsExactly(9, 8, 7);
    a.order().moveTo(2);
    apply(a, new Hint.Order(new int[] {6, 5}, true), "order+");
    assertThat(a.order().order()).containsExactly(9, 8, 7, 6, 5);
    assertThat(a.order().position()).isEqualTo(2);
    assertThat(a.recognition().hinted()).isTrue(); // an explicit order wins over recognition
    assertThat(effects.calls).containsExactly("order " + a.id(), "order " + a.id());
  }

  @Test
  void anAppendedOrder_keepsTheReaderWhereItIs_inTimeToo() {
    // 600 opens, the reader at 500 when `order+` arrives: its next file is needed now, not 500
    // opens from now. Eviction compares streams by these times: a map that put this reader 500
    // opens in the future would make its files the first to go.
    Stream a = job("a");
    int[] ids = java.util.stream.IntStream.range(0, 600).map(i -> i % ENTRIES).toArray();
    apply(a, new Hint.Order(ids, false), "order");
    a.order().moveTo(500);
    apply(a, new Hint.Order(new int[] {1, 2}, true), "order+");
    assertThat(a.order().position()).isEqualTo(500);
    long late = a.order().timeAt(500) - org.hintfs.fs.stream.Streams.nowNs();
    assertThat(late).isLessThan(50_000_000L); // the default pace is 1 ms per open: 500 ms before
  }

  @Test
  void theFirstRankToAnnounceAnEpochStartsIt_theOthersChangeOnlyTheirOwnStream() {
    Stream r0 = streams.forWriter(100, "ddp", 0, true);
    Stream r1 = streams.forWriter(100, "ddp", 1, true);
    apply(r0, new Hint.Epoch(0), "epoch");
    apply(r1, new Hint.Epoch(0), "epoch");
    apply(r0, new Hint.Epoch(1), "epoch");
    apply(r1, new Hint.Epoch(1), "epoch");
    assertThat(effects.calls).containsExactly("epoch 0", "epoch 1");
    assertThat(state.epoch()).isEqualTo(1);
    assertThat(r0.epoch()).isEqualTo(1);
    assertThat(r1.epoch()).isEqualTo(1);
  }
}
