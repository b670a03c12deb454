package org.hintfs.fs.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.PointerByReference;
import org.hintfs.fs.concurrent.Blocking;
import org.hintfs.fs.concurrent.SchedStat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The request threads' pool ({@link JavaThreadLoop.Pool}) driven by a queue in place of /dev/fuse:
 * each "request" is a Runnable that {@code fuse_process_cmd} runs. The real loop over a real mount
 * is covered by the mount tests (HungSourceIT: cached reads served while more readers than threads
 * wait on a stopped S3); here each rule of the pool is checked on its own.
 */
class RequestPoolTest {
  /** /dev/fuse as a queue: a read takes the next request, blocking; exit wakes every reader. */
  static final class QueueLoop implements JavaThreadLoop.LibFuseLoop {
    private static final Runnable EXIT = () -> {};
    final LinkedBlockingQueue<Runnable> requests = new LinkedBlockingQueue<>();
    private final ConcurrentHashMap<Long, Runnable> taken = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(4096);
    private volatile boolean exited;

    @Override
    public Pointer fuse_read_cmd(Pointer fuse) {
      try {
        Runnable r = requests.take();
        if (r == EXIT) {
          exited = true;
          requests.add(EXIT); // the next reader sees it too, as each sees ENODEV
          return null;
        }
        long id = ids.getAndIncrement();
        taken.put(id, r);
        return Pointer.wrap(jnr.ffi.Runtime.getSystemRuntime(), id);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }

    @Override
    public void fuse_process_cmd(Pointer fuse, Pointer cmd) {
      taken.remove(cmd.address()).run();
    }

    @Override
    public int fuse_exited(Pointer fuse) {
      return exited ? 1 : 0;
    }

    void exit() {
      requests.add(EXIT);
    }

    @Override
    public Pointer fuse_setup(
        int argc,
        String[] argv,
        Pointer op,
        long opSize,
        PointerByReference mountpoint,
        IntByReference multithreaded,
        Pointer userData) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void fuse_teardown(Pointer fuse, Pointer mountpoint) {
      throw new UnsupportedOperationException();
    }
  }

  final QueueLoop loop = new QueueLoop();
  JavaThreadLoop.Pool pool;

  JavaThreadLoop.Pool start(int idle, int max) {
    return start(idle, max, JavaThreadLoop.Pool.STALL_NANOS);
  }

  JavaThreadLoop.Pool start(int idle, int max, long stallNanos) {
    pool = new JavaThreadLoop.Pool(loop, null, idle, max, stallNanos);
    pool.start();
    return pool;
  }

  @AfterEach
  void exit() throws InterruptedException {
    loop.exit();
    Thread joiner =
        new Thread(
            () -> {
              try {
                pool.joinAll();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    joiner.start();
    // Parked spares end at exit, not after their 30 s of idleness.
    joiner.join(5_000);
    assertThat(joiner.isAlive()).as("every request thread ended at exit").isFalse();
    assertThat(pool.alive()).isZero();
  }

  /** Submits {@code n} requests that count down {@code done}. */
  void quick(int n, CountDownLatch done) {
    for (int i = 0; i < n; i++) {
      loop.requests.add(done::countDown);
    }
  }

  static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(5);
    }
  }

  @Test
  void aMarkedWait_handsItsPlaceToAnotherThreadAtOnce_withoutTheWatchdog() throws Exception {
    // A watchdog that would take a minute to act: only the hand-off can serve what follows.
    start(1, 16, TimeUnit.MINUTES.toNanos(1));
    CountDownLatch source = new CountDownLatch(1);
    CountDownLatch waiting = new CountDownLatch(1);
    loop.requests.add(
        () -> {
          Blocking.begin();
          try {
            waiting.countDown();
            source.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            Blocking.end();
          }
        });
    assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
    CountDownLatch served = new CountDownLatch(100);
    quick(100, served);
    assertThat(served.await(5, TimeUnit.SECONDS))
        .as("requests behind a marked wait are served while it waits")
        .isTrue();
    assertThat(pool.stalls()).isZero();
    assertThat(pool.alive()).isEqualTo(2);
    source.countDown();
  }

  @Test
  void anUnmarkedWait_isFoundByTheWatchdog_andTheRequestsBehindItAreServed() throws Exception {
    start(1, 16);
    CountDownLatch disk = holdUnmarked();
    assertServedBehindAndStallFound(disk);
  }

  /**
   * Queues a request that waits, unmarked (a page of the map read from a slow disk), until the
   * returned latch opens; returns once it holds its thread.
   */
  CountDownLatch holdUnmarked() throws InterruptedException {
    CountDownLatch disk = new CountDownLatch(1);
    CountDownLatch holding = new CountDownLatch(1);
    loop.requests.add(
        () -> {
          holding.countDown();
          try {
            disk.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue();
    return disk;
  }

  /** 100 requests queued behind the unmarked wait are served while it waits; then it ends. */
  void assertServedBehindAndStallFound(CountDownLatch disk) throws InterruptedException {
    CountDownLatch served = new CountDownLatch(100);
    quick(100, served);
    assertThat(served.await(5, TimeUnit.SECONDS))
        .as("requests behind an unmarked wait are served while it waits")
        .isTrue();
    assertThat(pool.stalls()).isPositive();
    disk.countDown();
  }

  /**
   * An idle mount's watchdog sleeps (it ticked every 5 ms, 2% of a core, through hours of nothing),
   * and the first request after it wakes it: an unmarked wait is still found.
   */
  @Test
  void anIdlePoolsWatchdogSleeps_andTheNextRequestWakesIt_toFindAnUnmarkedWait() throws Exception {
    start(1, 16);
    CountDownLatch one = new CountDownLatch(1);
    quick(1, one);
    assertThat(one.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(JavaThreadLoop.Pool.IDLE_NANOS) + 500);
    long before = pool.looks();
    Thread.sleep(2_000);
    // Ticking, it would have looked ~400 times; asleep, once a second.
    assertThat(pool.looks() - before).as("the watchdog's looks in 2 s of idleness").isLessThan(5);
    CountDownLatch disk = holdUnmarked(); // the first request after the idle time
    assertServedBehindAndStallFound(disk);
  }

  @Test
  void afterABurstOfWaits_oneThreadReadsAgain_andTheOthersPark() throws Exception {
    start(1, 64);
    CountDownLatch source = new CountDownLatch(1);
    CountDownLatch allWaiting = new CountDownLatch(20);
    for (int i = 0; i < 20; i++) {
      loop.requests.add(
          () -> {
            Blocking.begin();
            try {
              allWaiting.countDown();
              source.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              Blocking.end();
            }
          });
    }
    assertThat(allWaiting.await(5, TimeUnit.SECONDS)).isTrue();
    // 20 waiting, each handed its place on: 21 threads, one of them reading.
    assertThat(pool.alive()).isEqualTo(21);
    waitFor(() -> pool.reading() == 1, "one thread reads while 20 wait");
    source.countDown();
    // Back from their waits, the 20 finish their requests and park: one reads again.
    waitFor(() -> pool.reading() == 1 && pool.readers() == 1, "one reader after the burst");
    Thread.sleep(50);
    assertThat(pool.reading()).isEqualTo(1);
    assertThat(pool.alive()).isEqualTo(21); // the spares stay parked (30 s) for the next burst
    // The next burst takes the parked spares: no thread started.
    CountDownLatch again = new CountDownLatch(1);
    CountDownLatch waitingAgain = new CountDownLatch(10);
    for (int i = 0; i < 10; i++) {
      loop.requests.add(
          () -> {
            Blocking.begin();
            try {
              waitingAgain.countDown();
              again.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              Blocking.end();
            }
          });
    }
    assertThat(waitingAgain.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.peak()).isEqualTo(21);
    again.countDown();
  }

  @Test
  void atMaxThreads_theRestWaitInTheQueue_andAreServedWhenAThreadIsFree() throws Exception {
    start(1, 4);
    CountDownLatch source = new CountDownLatch(1);
    CountDownLatch waiting = new CountDownLatch(4);
    for (int i = 0; i < 6; i++) {
      loop.requests.add(
          () -> {
            Blocking.begin();
            try {
              waiting.countDown();
              source.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              Blocking.end();
            }
          });
    }
    assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(50);
    // 4 threads hold 4 waits; 2 requests wait in the queue for one of them.
    assertThat(pool.alive()).isEqualTo(4);
    assertThat(pool.atMax()).isPositive();
    assertThat(loop.requests).hasSize(2);
    source.countDown();
    waitFor(() -> loop.requests.isEmpty(), "the queued requests served once threads are free");
    CountDownLatch served = new CountDownLatch(10);
    quick(10, served);
    assertThat(served.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.alive()).isLessThanOrEqualTo(4);
  }

  /** Stays inside a request for {@code d}, asleep (an unmarked wait: no core needed). */
  static void sleepInside(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    for (long left; (left = end - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
    }
  }

  /** Stays inside the request for {@code d} of wall time, on a core or waiting for one. */
  static void spin(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }

  @Test
  void busyReaders_raiseTheTarget_andIdleOnesLowerItAgain() throws Exception {
    start(1, 16);
    // Requests that keep one reader inside a request all the time (5 ms each, back to back) for
    // 0.6 s, held as by a page of the map read from disk: asleep, needing no core, so what else
    // runs on this machine does not change it. Its busy share is near 1, over 0.75, so the target
    // rises within a few 100 ms windows. (Spinning instead, the reader's share is its share of a
    // core: under two other busy processes on 2 cores the target stayed at 1, as it should.)
    CountDownLatch served = new CountDownLatch(120);
    for (int i = 0; i < 120; i++) {
      loop.requests.add(
          () -> {
            sleepInside(Duration.ofMillis(5));
            served.countDown();
          });
    }
    waitFor(() -> pool.readers() > 1, "the target rises while its readers are busy");
    assertThat(served.await(10, TimeUnit.SECONDS)).isTrue();
    // Idle, the readers are busy 0% of each window: one fewer per window, back to 1.
    waitFor(() -> pool.readers() == 1, "the target falls back when idle");
  }

  @Test
  void aReaderWaitingForACore_doesNotRaiseTheTarget() throws Exception {
    start(1, 16);
    assertShareAtOneWhileStarved();
  }

  @Test
  void runnersWokenForStalls_countTheirWaitsForACoreToo() throws Exception {
    // A stall taken at 1 ms: the reader, waiting for a core for longer than that, looks held, and
    // the watchdog wakes a spare nearly every tick; each runs a request or two and parks again,
    // between two looks. Their busy time counts, and so must their waits for a core (when only
    // the runners found at a look were read, theirs were lost and the target rose).
    start(1, 16, TimeUnit.MILLISECONDS.toNanos(1));
    assertShareAtOneWhileStarved();
    assertThat(pool.stalls()).as("spares woken for stalls").isGreaterThan(10);
  }

  private void assertShareAtOneWhileStarved() throws Exception {
    assertThat(SchedStat.runDelayNanos(SchedStat.currentTid()))
        .as("this kernel reports a thread's run-queue wait (/proc/self/task/TID/schedstat)")
        .isNotNegative();
    // Requests that keep the reader inside a request all the time, as in the test above (each 200
    // us of wall time, back to back, 2 s in all), while eight spinning threads per core keep every
    // core taken: the reader spends most of each request waiting for a core. Its busy share is near
    // 1, as above, and the target rose with it when that was all it looked at; another reader would
    // only queue for the same cores.
    for (int i = 0; i < 10_000; i++) {
      loop.requests.add(() -> spin(Duration.ofNanos(200_000)));
    }
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> spinners = new ArrayList<>();
    for (int i = 0; i < 8 * Runtime.getRuntime().availableProcessors(); i++) {
      Thread t =
          new Thread(
              () -> {
                while (!stop.get()) {
                  Thread.onSpinWait();
                }
              });
      t.setDaemon(true);
      t.start();
      spinners.add(t);
    }
    int looks = 0;
    int atOne = 0;
    try {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1200);
      while (System.nanoTime() < end) {
        looks++;
        atOne += pool.readers() == 1 ? 1 : 0;
        Thread.sleep(2);
      }
    } finally {
      stop.set(true);
      for (Thread t : spinners) {
        t.join();
      }
    }
    assertThat(loop.requests).as("the reader was still busy when the look ended").isNotEmpty();
    // Counting those waits, the target rose within 300 ms and stayed up (1 at under a third of the
    // looks); a window that sees a wait begun before it may still lift it for a moment.
    assertThat((double) atOne / looks)
        .as("share of looks with one reader while it waited for a core")
        .isGreaterThan(0.8);
    loop.requests.clear();
  }
}
