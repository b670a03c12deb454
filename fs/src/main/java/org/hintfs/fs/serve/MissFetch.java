package org.hintfs.fs.serve;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hintfs.fs.concurrent.Blocking;
import org.hintfs.fs.store.TieredCache;

/**
 * The one source fetch of a missed file, shared by the open that missed and the kernel's read of
 * that handle. The open queues it on a background thread when the cache would keep the file, so the
 * cache fills even when the kernel's page cache answers every read; the read runs it itself if no
 * background thread has claimed it yet (the fetch then runs on the FUSE thread: no pool caps how
 * many misses fetch at once), else waits for it. Whoever claims it fetches; the other takes the
 * bytes: one request, whether or not the cache keeps them.
 */
final class MissFetch {
  private final TieredCache cache;
  private final int id;
  private final AtomicBoolean claimed = new AtomicBoolean();
  private final CompletableFuture<byte[]> result = new CompletableFuture<>();
  private volatile Throwable failure;

  MissFetch(TieredCache cache, int id) {
    this.cache = cache;
    this.id = id;
  }

  /** Fetches, unless another caller claimed the fetch first. Never throws. */
  void run() {
    if (!claimed.compareAndSet(false, true)) {
      return;
    }
    try {
      result.complete(cache.read(id, 0, false)); // the access was recorded at open, as a miss
    } catch (IOException | RuntimeException e) {
      failure = e;
      result.completeExceptionally(e);
    }
  }

  /**
   * Waits up to {@code millis} for the fetch to end, without starting it here.
   *
   * @return true if it ended in time, with its bytes or a failure; false if it is still to come
   */
  boolean awaitWithin(long millis) {
    Blocking.begin();
    try {
      result.get(millis, TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException e) {
      return true; // the read reports the failure
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      Blocking.end();
    }
  }

  /** The bytes: fetched here if nobody has started, else those of the fetch under way. */
  byte[] bytes() throws IOException {
    run();
    Blocking.begin();
    try {
      return result.get();
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException io) {
        throw io;
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      throw new IOException(c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for the fetch of a missed file");
    } finally {
      Blocking.end();
    }
  }

  /** The failure, once the fetch failed; null while it runs or after it succeeded. */
  Throwable failure() {
    return failure;
  }
}
