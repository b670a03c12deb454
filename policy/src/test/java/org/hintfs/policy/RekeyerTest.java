package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Re-keys merged (at most one more run for any number of requests) and applied in slices. */
class RekeyerTest {
  /** A policy that keys nothing but counts its re-key runs; run k waits at {@code gates[k]}. */
  static final class CountingPolicy implements CachePolicy {
    final AtomicInteger runs = new AtomicInteger();
    final List<CountDownLatch> started = new ArrayList<>();
    final List<CountDownLatch> gates = new ArrayList<>();

    CountingPolicy(int gated) {
      for (int i = 0; i <= gated; i++) {
        started.add(new CountDownLatch(1));
        gates.add(new CountDownLatch(1));
      }
    }

    @Override
    public Reorder beginReorder(int[] cached) {
      int run = runs.incrementAndGet();
      return max -> {
        if (run < gates.size()) {
          started.get(run).countDown();
          await(gates.get(run));
        }
        return false;
      };
    }

    @Override
    public String name() {
      return "counting";
    }

    @Override
    public void recordAccess(int sample, boolean hit) {}

    @Override
    public boolean admit(int sample) {
      return true;
    }

    @Override
    public void added(int sample) {}

    @Override
    public void removed(int sample) {}

    @Override
    public int victim() {
      return -1;
    }

    @Override
    public int size() {
      return 0;
    }

    @Override
    public boolean contains(int sample) {
      return false;
    }

    @Override
    public void checkInvariants() {}
  }

  static final Residency.Events NO_EVENTS =
      new Residency.Events() {
        @Override
        public void added(int sample) {}

        @Override
        public void evicting(int sample) {}
      };

  static void await(CountDownLatch l) {
    try {
      assertThat(l.await(30, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  static Rekeyer rekeyer(CachePolicy p) {
    return new Rekeyer(new Object(), new Residency(8, p, 1 << 20, NO_EVENTS));
  }

  @Test
  void aThousandRequestsWhileARunIsBlocked_causeOneMoreRun() throws Exception {
    CountingPolicy p = new CountingPolicy(1);
    Rekeyer rk = rekeyer(p);
    Thread first = new Thread(rk::request);
    first.start();
    await(p.started.get(1));
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      // Each returns at once: the blocked run's thread owes one more run.
      other
          .submit(
              () -> {
                for (int i = 0; i < 1_000; i++) {
                  rk.request();
                }
              })
          .get(30, TimeUnit.SECONDS);
    } finally {
      other.shutdownNow();
    }
    assertThat(p.runs.get()).isEqualTo(1);
    p.gates.get(1).countDown();
    first.join(30_000);
    assertThat(first.isAlive()).isFalse();
    assertThat(p.runs.get()).isEqualTo(2);
  }

  @Test
  void aRequestAfterTheLastRunBegan_isNotLost() throws Exception {
    CountingPolicy p = new CountingPolicy(2);
    Rekeyer rk = rekeyer(p);
    Thread first = new Thread(rk::request);
    first.start();
    await(p.started.get(1));
    rk.request(); // queued behind run 1
    p.gates.get(1).countDown();
    await(p.started.get(2)); // run 2 began: the queued request is taken
    rk.request(); // came after run 2 began: run 2 may have read the old order
    p.gates.get(2).countDown();
    first.join(30_000);
    assertThat(first.isAlive()).isFalse();
    assertThat(p.runs.get()).isEqualTo(3);
  }

  /** Next uses the test sets; the re-keying thread's lookup {@code stopAt} waits at a gate. */
  static final class GatedOracle implements NextUse {
    final long[] at;
    final Thread rekeying;
    final long stopAt;
    final CountDownLatch stopped = new CountDownLatch(1);
    final CountDownLatch go = new CountDownLatch(1);
    long calls;

    GatedOracle(long[] at, Thread rekeying, long stopAt) {
      this.at = at;
      this.rekeying = rekeying;
      this.stopAt = stopAt;
    }

    @Override
    public long after(int sample) {
      if (Thread.currentThread() == rekeying && ++calls == stopAt) {
        stopped.countDown();
        await(go);
      }
      return at[sample];
    }

    @Override
    public long now() {
      return 0;
    }
  }

  @Test
  void theLockIsFreeBetweenSlices_andTheOrderAfterIsTheOneShotReKeys() throws Exception {
    int n = 100_000;
    long[] at = new long[n];
    Object lock = new Object();
    Rekeyer[] rk = new Rekeyer[1];
    Thread rekeying = new Thread(() -> rk[0].request());
    // Stops at the first lookup of the second slice: the first slice is applied by then.
    GatedOracle oracle = new GatedOracle(at, rekeying, Rekeyer.SLICE + 1);
    ClairvoyantPolicy p = new ClairvoyantPolicy(new PolicyContext(n, null, oracle, null));
    ClairvoyantPolicy oneShot = new ClairvoyantPolicy(new PolicyContext(n, null, oracle, null));
    Residency res = new Residency(n, p, n, NO_EVENTS);
    for (int s = 0; s < n; s++) {
      at[s] = s;
      res.accessed(s, false);
      assertThat(res.admit(s, 1)).isTrue();
      oneShot.recordAccess(s, false);
      oneShot.added(s);
    }
    rk[0] = new Rekeyer(lock, res);
    for (int s = 0; s < n; s++) {
      at[s] = n - s; // reversed: 0 is now used last
    }
    rekeying.start();
    await(oracle.stopped);
    ExecutorService other = Executors.newSingleThreadExecutor();
    int victim;
    try {
      // An open's hit check under the lock, while the re-key is between its slices.
      victim =
          other
              .submit(
                  () -> {
                    synchronized (lock) {
                      res.accessed(5, true);
                      return p.victim();
                    }
                  })
              .get(30, TimeUnit.SECONDS);
    } finally {
      other.shutdownNow();
      oracle.go.countDown();
    }
    // The first slice's new keys are in force (0 is the farthest now); the rest are the old ones.
    assertThat(victim).isZero();
    rekeying.join(30_000);
    assertThat(rekeying.isAlive()).isFalse();
    oneShot.recordAccess(5, true);
    oneShot.orderChanged(res.residents());
    p.checkInvariants();
    for (int i = 0; i < n; i++) {
      int v = oneShot.victim();
      assertThat(p.victim()).isEqualTo(v);
      p.removed(v);
      oneShot.removed(v);
    }
  }
}
