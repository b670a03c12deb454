package org.hintfs.fs.store;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceUnavailableException;
import org.hintfs.fs.concurrent.Blocking;

/**
 * Reads from the source: one request per object however many callers race for it (singleflight), at
 * most {@code maxConcurrent} requests at once with readers' misses first ({@link FetchGate}), a few
 * retries with jittered backoff on transient failures.
 *
 * <p>The first caller for a key runs the load on its own thread; later callers for the same key
 * wait for that result instead of starting their own. A reader that joins a prefetch still waiting
 * for its turn promotes it to a reader's miss. A failed load fails every waiter, and the next
 * caller tries again.
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

  /** A load whose result is an array or {@link Landed} bytes in native memory. */
  interface AnyLoad {
    Object run() throws IOException;
  }

  /**
   * A unit a load fetched straight into native memory (the RAM tier keeps it too, if it would): the
   * load's own reference goes to the first caller to {@link #claim} it (the load's caller, as a
   * rule), the others take one of their own.
   */
  static final class Landed {
    private final NativeBytes bytes;
    private final java.util.concurrent.atomic.AtomicBoolean claimed =
        new java.util.concurrent.atomic.AtomicBoolean();

    Landed(NativeBytes bytes) {
      this.bytes = bytes;
    }

    /**
     * The bytes with one reference for the caller to release, or null if they were freed before
     * this caller (not the first) could take one.
     */
    NativeBytes claim() {
      if (claimed.compareAndSet(false, true)) {
        return bytes;
      }
      return bytes.acquire() ? bytes : null;
    }
  }

  /** One load under way: its result, and whether a reader waits for it. */
  private static final class Flight {
    final CompletableFuture<Object> result = new CompletableFuture<>();
    final long started = System.nanoTime();
    volatile boolean demanded;
  }

  /** When a far tier last answered a fetch with its bytes. */
  private volatile long lastAnswer = System.nanoTime();

  private final ConcurrentHashMap<Long, Flight> inflight = new ConcurrentHashMap<>();
  private final FetchGate gate;

  /**
   * The far tiers' recent answers: a fetch not answered within 4x their p90 (0.1-5 s; 1 s before 16
   * answers) is late enough for substitution to stand in for it ({@link #deadlineMillis}).
   */
  private final RecentLatency latency = new RecentLatency(1_000, 4, 100, 5_000);

  final LongAdder coalesced = new LongAdder();

  Fetcher(int maxConcurrent) {
    this.gate = new FetchGate(maxConcurrent);
  }

  /** Requests allowed at once. */
  int limit() {
    return gate.limit();
  }

  /** Requests that only readers' misses may take. */
  int reserve() {
    return gate.reserve();
  }

  /** The most requests that ran at once so far. */
  int peak() {
    return gate.peak();
  }

  /** Prefetches and admin fetches running now. */
  int speculativeRunning() {
    return gate.runningSpeculative();
  }

  /** Readers' misses waiting for their turn now. */
  int demandWaiting() {
    return gate.demandWaiting();
  }

  /** Requests in flight now. */
  int inFlight() {
    return inflight.size();
  }

  /** True while a load for {@code key} runs. */
  boolean isFetching(long key) {
    return inflight.containsKey(key);
  }

  /** A reader's miss: runs {@code load} unless a load for {@code key} runs, then waits for it. */
  byte[] fetch(long key, Load load) throws IOException {
    return fetch(key, load, FetchGate.Priority.DEMAND);
  }

  /**
   * Runs {@code load} with {@code priority} unless a load for {@code key} is already running, then
   * waits for it (a reader waiting for a prefetch promotes it).
   */
  byte[] fetch(long key, Load load, FetchGate.Priority priority) throws IOException {
    for (; ; ) {
      Object r = fetchAny(key, load::run, priority);
      if (r instanceof byte[] b) {
        return b;
      }
      // Joined a load that fetched into native memory: a copy of its own for this caller.
      NativeBytes n = ((Landed) r).claim();
      if (n != null) {
        try {
          byte[] b = n.copy();
          if (b != null) {
            return b;
          }
        } finally {
          n.release();
        }
      }
      // Freed before this caller got to it: again (the load looks in the near tiers first).
    }
  }

  /**
   * {@link #fetch(long, Load, FetchGate.Priority)} of a load that may land its unit in native
   * memory: the result is an array or {@link Landed}, which the caller must {@link Landed#claim}.
   */
  Object fetchAny(long key, AnyLoad load, FetchGate.Priority priority) throws IOException {
    // A request thread waits on the source from here: another takes its place reading requests.
    Blocking.begin();
    try {
      return fetchOrJoin(key, load, priority);
    } finally {
      Blocking.end();
    }
  }

  private Object fetchOrJoin(long key, AnyLoad load, FetchGate.Priority priority)
      throws IOException {
    Flight mine = new Flight();
    mine.demanded = priority == FetchGate.Priority.DEMAND;
    Flight running = inflight.putIfAbsent(key, mine);
    if (running != null) {
      coalesced.increment();
      if (priority == FetchGate.Priority.DEMAND && !running.demanded) {
        running.demanded = true;
        gate.promoted();
      }
      return await(running.result);
    }
    try {
      Object b = withRetries(load, priority, mine);
      mine.result.complete(b);
      return b;
    } catch (IOException | RuntimeException | Error e) {
      mine.result.completeExceptionally(e);
      throw e;
    } finally {
      inflight.remove(key, mine);
    }
  }

  /** A reader waits for the load of {@code key}, if one runs: it goes as a reader's miss. */
  void promote(long key) {
    Flight running = inflight.get(key);
    if (running != null && !running.demanded) {
      running.demanded = true;
      gate.promoted();
    }
  }

  private Object withRetries(AnyLoad load, FetchGate.Priority priority, Flight flight)
      throws IOException {
    for (int attempt = 0; ; attempt++) {
      FetchGate.Priority ran;
      try {
        ran = gate.acquire(priority, () -> flight.demanded);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted waiting for a fetch slot");
      }
      try {
        long t0 = System.nanoTime();
        Object b = load.run();
        long t1 = System.nanoTime();
        latency.answered(t1 - t0);
        lastAnswer = t1;
        return b;
      } catch (SourceUnavailableException e) {
        if (attempt >= RETRIES || e.retried()) {
          throw e;
        }
      } finally {
        gate.release(ran);
      }
      sleepBackoff(attempt);
    }
  }

  /** How long a reader waits for a fetch under way before substitution may stand in for it. */
  long deadlineMillis() {
    return latency.boundMillis();
  }

  /**
   * True if the far tiers have answered nothing for {@code millis} while a fetch has waited at
   * least that long: they are hung (or gone), not just slow on one request. O(fetches in flight).
   */
  boolean silentFor(long millis) {
    long now = System.nanoTime();
    long bound = TimeUnit.MILLISECONDS.toNanos(millis);
    if (now - lastAnswer < bound) {
      return false;
    }
    for (Flight f : inflight.values()) {
      if (now - f.started >= bound) {
        return true;
      }
    }
    return false;
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

  private static Object await(CompletableFuture<Object> f) throws IOException {
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
