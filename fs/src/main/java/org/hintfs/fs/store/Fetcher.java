package org.hintfs.fs.store;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceUnavailableException;

/**
 * Reads from the source: one request per object however many callers race for it (singleflight), at
 * most {@code maxConcurrent} requests at once, a few retries with jittered backoff on transient
 * failures.
 *
 * <p>The first caller for a key runs the load on its own thread; later callers for the same key
 * wait for that result instead of starting their own. A failed load fails every waiter, and the
 * next caller tries again.
 */
final class Fetcher {
  /** Extra attempts after the first, for {@link SourceUnavailableException} only. */
  private static final int RETRIES = 2;

  /** Backoff before retry n is 50 ms * 2^n, +-50% jitter: 25-75 ms, then 50-150 ms. */
  private static final long BACKOFF_MS = 50;

  /** A load that may throw. */
  interface Load {
    byte[] run() throws IOException;
  }

  private final ConcurrentHashMap<Long, CompletableFuture<byte[]>> inflight =
      new ConcurrentHashMap<>();
  private final Semaphore permits;
  private final int limit;
  private final AtomicInteger peak = new AtomicInteger();
  final LongAdder coalesced = new LongAdder();

  Fetcher(int maxConcurrent) {
    this.limit = maxConcurrent;
    this.permits = new Semaphore(maxConcurrent);
  }

  /** Requests allowed at once. */
  int limit() {
    return limit;
  }

  /** The most requests that ran at once so far. */
  int peak() {
    return peak.get();
  }

  /** Requests in flight now. */
  int inFlight() {
    return inflight.size();
  }

  /** True while a load for {@code key} runs. */
  boolean isFetching(long key) {
    return inflight.containsKey(key);
  }

  /** Runs {@code load} unless a load for {@code key} is already running, then waits for it. */
  byte[] fetch(long key, Load load) throws IOException {
    CompletableFuture<byte[]> mine = new CompletableFuture<>();
    CompletableFuture<byte[]> running = inflight.putIfAbsent(key, mine);
    if (running != null) {
      coalesced.increment();
      return await(running);
    }
    try {
      byte[] b = withRetries(load);
      mine.complete(b);
      return b;
    } catch (IOException | RuntimeException | Error e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      inflight.remove(key, mine);
    }
  }

  private byte[] withRetries(Load load) throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        permits.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted waiting for a fetch slot");
      }
      peak.accumulateAndGet(limit - permits.availablePermits(), Math::max);
      try {
        return load.run();
      } catch (SourceUnavailableException e) {
        if (attempt >= RETRIES || e.retried()) {
          throw e;
        }
      } finally {
        permits.release();
      }
      sleepBackoff(attempt);
    }
  }

  private static void sleepBackoff(int attempt) throws InterruptedIOException {
    long base = BACKOFF_MS << attempt;
    long ms = base / 2 + ThreadLocalRandom.current().nextLong(base + 1);
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted during backoff");
    }
  }

  private static byte[] await(CompletableFuture<byte[]> f) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for another fetch");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof NoSuchFileException n) {
        throw new NoSuchFileException(n.getFile());
      }
      if (c instanceof ObjectChangedException o) {
        throw o;
      }
      if (c instanceof IOException io) {
        throw new IOException(io.getMessage(), io);
      }
      throw new IOException(c);
    }
  }
}
