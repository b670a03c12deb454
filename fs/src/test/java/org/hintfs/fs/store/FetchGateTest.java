package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.hintfs.fs.store.FetchGate.Priority;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Readers' misses before prefetches before admin fetches, through {@link Fetcher}. */
class FetchGateTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final CountDownLatch hang = new CountDownLatch(1);
  private final AtomicInteger running = new AtomicInteger();

  @AfterEach
  void stop() {
    hang.countDown();
    pool.shutdownNow();
  }

  /** A load that hangs like a source that stopped answering, until the test ends. */
  private byte[] hangingLoad() {
    running.incrementAndGet();
    try {
      hang.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    running.decrementAndGet();
    return new byte[1];
  }

  private Future<byte[]> start(Fetcher f, long key, Priority p, Fetcher.Load load) {
    return pool.submit(() -> f.fetch(key, load, p));
  }

  private void awaitRunning(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (running.get() < n && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    Thread.sleep(50); // room for one more to start, were the bound not kept
    assertThat(running.get()).isEqualTo(n);
  }

  @Test
  void prefetchesOnAHungSource_leaveTheReserveToReadersMisses() throws Exception {
    // limit 8: a quarter, 2, is kept for readers' misses, so 6 prefetches run and 4 wait.
    Fetcher f = new Fetcher(8);
    assertThat(f.reserve()).isEqualTo(2);
    for (long k = 0; k < 10; k++) {
      start(f, k, Priority.PREFETCH, this::hangingLoad);
    }
    awaitRunning(6);
    byte[] miss = start(f, 100, Priority.DEMAND, () -> new byte[] {7}).get(5, TimeUnit.SECONDS);
    assertThat(miss).containsExactly(7);
    assertThat(running.get()).isEqualTo(6);
  }

  @Test
  void aReaderWaitingForAPrefetchStillQueued_promotesItPastTheOtherPrefetches() throws Exception {
    // limit 4: 3 speculative reads at most; the 4th prefetch (key 3) waits for one of them.
    Fetcher f = new Fetcher(4);
    for (long k = 0; k < 3; k++) {
      start(f, k, Priority.PREFETCH, this::hangingLoad);
    }
    awaitRunning(3);
    Future<byte[]> late = start(f, 3, Priority.PREFETCH, () -> new byte[] {3});
    Thread.sleep(50);
    assertThat(late.isDone()).isFalse();
    // A reader opens file 3: it joins that prefetch (one GET), which now goes as its miss.
    byte[] b = start(f, 3, Priority.DEMAND, () -> new byte[] {-1}).get(5, TimeUnit.SECONDS);
    assertThat(b).containsExactly(3);
    assertThat(late.get(5, TimeUnit.SECONDS)).containsExactly(3);
    assertThat(f.coalesced.sum()).isEqualTo(1);
  }

  @Test
  void whenAReadFrees_aWaitingMissGoesFirst_thenAPrefetch_thenAnAdminFetch() throws Exception {
    // limit 1, no reserve: one read at a time, so the order of the waiters is the order they run.
    Fetcher f = new Fetcher(1);
    CountDownLatch first = new CountDownLatch(1);
    List<String> order = new CopyOnWriteArrayList<>();
    Future<byte[]> blocker =
        start(
            f,
            0,
            Priority.DEMAND,
            () -> {
              running.incrementAndGet();
              try {
                first.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return new byte[1];
            });
    awaitRunning(1);
    Future<byte[]> admin = start(f, 1, Priority.ADMIN, recording(order, "admin"));
    Thread.sleep(50);
    Future<byte[]> prefetch = start(f, 2, Priority.PREFETCH, recording(order, "prefetch"));
    Thread.sleep(50);
    Future<byte[]> miss = start(f, 3, Priority.DEMAND, recording(order, "miss"));
    Thread.sleep(50);
    assertThat(order).isEmpty();
    first.countDown();
    for (Future<byte[]> x : List.of(blocker, admin, prefetch, miss)) {
      x.get(5, TimeUnit.SECONDS);
    }
    assertThat(order).containsExactly("miss", "prefetch", "admin");
    assertThat(f.peak()).isEqualTo(1);
  }

  @Test
  void manyThreadsOfEveryPriority_neverPassTheBounds_andAllFinish() throws Exception {
    // limit 8, reserve 2: at most 8 loads at once, and at most 6 of them prefetches or admin's.
    Fetcher f = new Fetcher(8);
    AtomicInteger all = new AtomicInteger();
    AtomicInteger mostAll = new AtomicInteger();
    AtomicInteger mostSpeculative = new AtomicInteger();
    List<Future<?>> workers = new java.util.ArrayList<>();
    for (int t = 0; t < 32; t++) {
      java.util.Random rnd = new java.util.Random(t);
      workers.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 300; i++) {
                  Priority p = Priority.values()[rnd.nextInt(3)];
                  long key = rnd.nextInt(40); // shared keys: coalescing and promotions
                  byte[] b =
                      f.fetch(
                          key,
                          () -> {
                            mostAll.accumulateAndGet(all.incrementAndGet(), Math::max);
                            mostSpeculative.accumulateAndGet(f.speculativeRunning(), Math::max);
                            java.util.concurrent.locks.LockSupport.parkNanos(rnd.nextInt(200_000));
                            all.decrementAndGet();
                            return new byte[] {(byte) key};
                          },
                          p);
                  assertThat(b).containsExactly((byte) key);
                }
                return null;
              }));
    }
    for (Future<?> w : workers) {
      w.get(60, TimeUnit.SECONDS);
    }
    assertThat(mostAll.get()).isLessThanOrEqualTo(8);
    // A load promoted while it waited runs as a miss; the speculative ones never pass 8 - 2.
    assertThat(mostSpeculative.get()).isBetween(1, 6);
    assertThat(f.peak()).isLessThanOrEqualTo(8);
    assertThat(f.demandWaiting()).isZero();
  }

  private static Fetcher.Load recording(List<String> order, String name) {
    return () -> {
      order.add(name);
      return new byte[1];
    };
  }
}
