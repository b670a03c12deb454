package org.hintfs.fs.prefetch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.hintfs.fs.stream.ProcessTree;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.fs.stream.TestTrees;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The prefetcher over several streams, with a fetch that only records what it was asked. */
class PrefetcherTest {
  static final ProcessTree ALL_ALIVE = TestTrees.ALL_ALIVE;

  Streams streams;
  Set<Integer> cached;
  List<Integer> fetched;
  Prefetcher prefetcher;
  volatile long cacheFiles; // 0: no limit

  @BeforeEach
  void setUp() {
    streams = new Streams(ALL_ALIVE, 8, 0);
    cached = ConcurrentHashMap.newKeySet();
    fetched = new CopyOnWriteArrayList<>();
    prefetcher =
        new Prefetcher(
            streams::active,
            8,
            1 << 30,
            1,
            cached::contains,
            id -> 100,
            id -> { // as a real cache: a fetched file is then cached
              fetched.add(id);
              cached.add(id);
            },
            () -> cacheFiles);
  }

  @AfterEach
  void tearDown() {
    prefetcher.close();
  }

  static int[] range(int from, int to) {
    return IntStream.range(from, to).toArray();
  }

  void settle() throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (prefetcher.filesInFlight() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  @Test
  void eachStreamGetsItsOwnWindow_skippingWhatIsCached() throws Exception {
    Stream a = streams.forWriter(10, null, 0, true);
    Stream b = streams.forWriter(20, null, 0, true);
    cached.add(2);
    a.predict(null, range(0, 100), 1000);
    b.predict(null, range(500, 600), 1000);
    prefetcher.reset(a);
    prefetcher.reset(b);
    settle();
    // Window 8 each: a's 0..8 but the cached 2 (its window then reaches 8), b's 500..507.
    assertThat(fetched)
        .containsExactlyInAnyOrder(0, 1, 3, 4, 5, 6, 7, 500, 501, 502, 503, 504, 505, 506, 507);
    // a's reader moves on by 3 opens: its window slides by 3, b's stays.
    fetched.clear();
    for (int id : new int[] {0, 1, 2}) {
      prefetcher.opened(a, id);
    }
    settle();
    assertThat(fetched).containsExactlyInAnyOrder(8, 9, 10);
    assertThat(a.order().position()).isEqualTo(3);
    assertThat(b.order().position()).isZero();
  }

  @Test
  void largeFiles_twoAtOnce_besideTheSmallFilesOfAnotherStream() throws Exception {
    prefetcher.close();
    // Files 0-99 are shards of 1 GiB, 500+ small files; a budget of 256 MiB.
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger shardsAtOnce =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger most =
        new java.util.concurrent.atomic.AtomicInteger();
    prefetcher =
        new Prefetcher(
            streams::active,
            8,
            256L << 20,
            8,
            cached::contains,
            id -> id < 100 ? 1L << 30 : 100_000,
            id -> {
              if (id < 100) {
                most.accumulateAndGet(shardsAtOnce.incrementAndGet(), Math::max);
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                shardsAtOnce.decrementAndGet();
              }
              fetched.add(id);
              cached.add(id);
            },
            () -> cacheFiles);
    Stream shards = streams.forWriter(10, null, 0, true);
    Stream small = streams.forWriter(20, null, 0, true);
    shards.predict(null, range(0, 100), 1000);
    small.predict(null, range(500, 600), 1000);
    prefetcher.reset(shards);
    prefetcher.reset(small);
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (fetched.size() < 8 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // Two shards fetching (each charged an eighth of the budget), the small stream's window whole.
    assertThat(prefetcher.filesInFlight(shards)).isEqualTo(2);
    assertThat(fetched).containsExactlyInAnyOrder(500, 501, 502, 503, 504, 505, 506, 507);
    release.countDown();
    settle();
    assertThat(most.get()).isEqualTo(Prefetcher.MAX_LARGE_IN_FLIGHT);
    assertThat(fetched).contains(0, 1, 2, 3, 4, 5, 6, 7);
  }

  /**
   * A new order set while the prefetcher is scheduling the old one (the hint applier sets it under
   * the stream's lock, the prefetcher schedules under its own): the new order is scheduled from its
   * start. Before, the prefetcher wrote where it got to in the old order over the new order's 0,
   * and the new order's head was skipped until someone reset the stream.
   */
  @Test
  void aNewOrderSetWhileSchedulingTheOld_isScheduledFromItsStart() throws Exception {
    java.util.concurrent.CountDownLatch looking = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch predicted = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean armed =
        new java.util.concurrent.atomic.AtomicBoolean();
    prefetcher.close();
    prefetcher = blockingOnce(8, armed, looking, predicted);
    Stream a = streams.forWriter(10, null, 0, true);
    a.predict(null, range(0, 100), 1000);
    prefetcher.reset(a);
    settle();
    assertThat(fetched).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7);
    armed.set(true);
    Thread reader = new Thread(() -> prefetcher.opened(a, 0)); // schedules on from 8
    reader.start();
    assertThat(looking.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    a.predict(null, range(200, 300), 1000); // the applier: a new order, no reset yet
    predicted.countDown();
    reader.join(5_000);
    prefetcher.scheduleAhead();
    settle();
    assertThat(fetched).contains(200, 201, 202, 203, 204, 205, 206, 207);
  }

  @Test
  void aStreamWhoseReadsStopMatching_dropsOnlyItsOwnPrediction() {
    Stream a = streams.forWriter(10, null, 0, true);
    Stream b = streams.forWriter(20, null, 0, true);
    a.predict(null, range(0, 1000), 2000);
    b.predict(null, range(1000, 2000), 2000);
    for (int k = 0; k < Stream.JUDGE_OVER; k++) {
      prefetcher.opened(a, 1999 - k); // b's samples, far from a's reader: all off-order
      prefetcher.opened(b, 1000 + k);
    }
    assertThat(a.order().known()).isFalse();
    assertThat(a.staleDrops.sum()).isOne();
    assertThat(b.order().known()).isTrue();
    assertThat(b.order().position()).isEqualTo(1000 + Stream.JUDGE_OVER - 1000);
  }

  /**
   * A DataLoader with large batches: 4 workers (pids 101..104) read batches of 128 side by side,
   * worker w batches w, w + 4, ..., one open each in turn, so the slowest worker's file is 384
   * positions behind the furthest open, beyond the window around it (reach 64 here). Before each
   * worker was followed on from its own last open, three in four opens were off-order and the
   * prediction was dropped as stale (seed hints with batch 256 and 4 workers: 0.25 of opens local).
   */
  @Test
  void workersReadingLargeBatchesSideBySide_areFollowed_andTheSlowerWorkersFilesFetched()
      throws Exception {
    Stream a = streams.forWriter(10, null, 0, true);
    int batch = 128;
    int workers = 4;
    int batches = 32;
    a.predict(null, range(0, batch * batches), 8000);
    prefetcher.reset(a);
    settle();
    for (int round = 0; round < batches / workers; round++) {
      for (int j = 0; j < batch; j++) {
        for (int w = 0; w < workers; w++) {
          int id = (round * workers + w) * batch + j;
          prefetcher.follow(a, id, 101 + w);
          prefetcher.scheduleAhead();
        }
        if (round == 0 && j == 64) {
          settle();
          // The furthest open is 448: the slower workers' files, behind it, are fetched all the
          // same (worker 0 is at 64, worker 1 at 192, worker 2 at 320).
          assertThat(fetched).contains(100, 127, 228, 255, 356, 383);
        }
      }
    }
    assertThat(a.order().known()).isTrue();
    assertThat(a.staleDrops.sum()).isZero();
    // Off-order at most where a worker jumps to its next batch.
    assertThat(a.offOrder.sum()).isLessThanOrEqualTo(batches);
    assertThat(a.order().position()).isEqualTo(batch * batches);
    assertThat(a.readersFollowed()).isEqualTo(workers);
    assertThat(a.confirmed()).isTrue();
  }

  /** The same four workers reading an order other than the predicted one: it is dropped. */
  @Test
  void workersReadingSideBySide_inAnotherOrder_dropThePrediction() {
    Stream a = streams.forWriter(10, null, 0, true);
    java.util.List<Integer> shuffled = new java.util.ArrayList<>();
    for (int i = 0; i < 4096; i++) {
      shuffled.add(i);
    }
    java.util.Collections.shuffle(shuffled, new java.util.Random(7));
    a.predict(null, shuffled.stream().mapToInt(Integer::intValue).toArray(), 8000);
    for (int j = 0; j < 128 && a.order().known(); j++) {
      for (int w = 0; w < 4; w++) {
        prefetcher.follow(a, w * 128 + j, 101 + w); // each worker in sequence, the order random
      }
    }
    assertThat(a.order().known()).isFalse();
    assertThat(a.staleDrops.sum()).isOne();
    assertThat(a.confirmed()).isFalse();
  }

  @Test
  void theWindowRunsOnIntoTheNextEpochsHead() throws Exception {
    Stream a = streams.forWriter(10, null, 0, true);
    a.predict(null, range(0, 4), 1000);
    a.order().setNextHead(new int[] {40, 41, 42, 43, 44, 45});
    prefetcher.reset(a);
    settle();
    // Window 8: the epoch's 4 files, then the first 4 of the next epoch.
    assertThat(fetched).containsExactlyInAnyOrder(0, 1, 2, 3, 40, 41, 42, 43);
  }

  @Test
  void anEndedStreamsQueuedFetchesAreSkipped() throws Exception {
    Stream a = streams.forWriter(10, null, 0, true);
    a.predict(null, range(0, 100), 1000);
    streams.end(a);
    prefetcher.reset(a);
    settle();
    assertThat(fetched).isEmpty();
  }

  @Test
  void windowsThatWouldCrowdTheCache_shareHalfOfIt() throws Exception {
    prefetcher.close();
    prefetcher =
        new Prefetcher(
            streams::active,
            64,
            1 << 30,
            1,
            cached::contains,
            id -> 100,
            id -> {
              fetched.add(id);
              cached.add(id);
            },
            () -> cacheFiles);
    cacheFiles = 200; // half of it is 100 files: 50 each for two streams, 25 each for four
    Stream[] ss = new Stream[4];
    for (int k = 0; k < 4; k++) {
      ss[k] = streams.forWriter(10 + k, null, 0, true);
    }
    ss[0].predict(null, range(0, 1000), 4000);
    ss[1].predict(null, range(1000, 2000), 4000);
    prefetcher.reset(ss[0]);
    settle();
    assertThat(prefetcher.windowPerStream()).isEqualTo(50);
    assertThat(fetched).hasSize(100).allMatch(id -> id % 1000 < 50);
    // Two more readers: every window is cut to 25; the first two keep what they have.
    ss[2].predict(null, range(2000, 3000), 4000);
    ss[3].predict(null, range(3000, 4000), 4000);
    fetched.clear();
    prefetcher.reset(ss[2]);
    settle();
    assertThat(prefetcher.windowPerStream()).isEqualTo(25);
    assertThat(fetched).hasSize(50).allMatch(id -> id >= 2000 && id % 1000 < 25);
    // A cache that holds everything: the configured window.
    cacheFiles = 0;
    assertThat(prefetcher.windowPerStream()).isEqualTo(64);
    // A tiny one: never below the minimum.
    cacheFiles = 10;
    assertThat(prefetcher.windowPerStream()).isEqualTo(Prefetcher.MIN_WINDOW);
  }

  /**
   * A prefetcher over this test's cache whose question "is {@code at} cached?" blocks once, when
   * {@code armed}: it counts {@code reached} down and waits for {@code release} (at most 5 s).
   */
  Prefetcher blockingOnce(
      int at,
      java.util.concurrent.atomic.AtomicBoolean armed,
      java.util.concurrent.CountDownLatch reached,
      java.util.concurrent.CountDownLatch release) {
    return new Prefetcher(
        streams::active,
        8,
        1 << 30,
        1,
        id -> {
          if (id == at && armed.compareAndSet(true, false)) {
            reached.countDown();
            try {
              release.await(5, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return cached.contains(id);
        },
        id -> 100,
        id -> {
          fetched.add(id);
          cached.add(id);
        },
        () -> cacheFiles);
  }
}
