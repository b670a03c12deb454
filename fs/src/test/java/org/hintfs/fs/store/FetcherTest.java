package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FetcherTest {
  @Test
  void atMostTheLimitRunAtOnce_andThePeakSaysHowManyDid() throws Exception {
    Fetcher f = new Fetcher(3);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<byte[]>> done = new ArrayList<>();
      for (long key = 0; key < 8; key++) {
        long k = key;
        done.add(
            pool.submit(
                () ->
                    f.fetch(
                        k,
                        () -> {
                          most.accumulateAndGet(running.incrementAndGet(), Math::max);
                          try {
                            release.await(10, TimeUnit.SECONDS);
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                          running.decrementAndGet();
                          return new byte[] {(byte) k};
                        })));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (running.get() < 3 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      Thread.sleep(50); // room for a fourth to start, were the limit not kept
      assertThat(running.get()).isEqualTo(3);
      release.countDown();
      for (int i = 0; i < done.size(); i++) {
        assertThat(done.get(i).get(10, TimeUnit.SECONDS)).containsExactly((byte) i);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(most.get()).isEqualTo(3);
    assertThat(f.peak()).isEqualTo(3);
    assertThat(f.limit()).isEqualTo(3);
    assertThat(new Fetcher(256).peak()).isZero();
  }
}
