package org.hintfs.fs.serve;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.concurrent.Blocking;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.store.TieredCache;

/**
 * Read-ahead for files cut into blocks (shards, arrays, videos): the blocks after a sequential
 * reader's are fetched before it asks, several at once, as mountpoint-s3's prefetcher does.
 *
 * <p>The window: a handle that reads block 0, or the block after the last one it read, is
 * sequential, and its window doubles with each new block (1, 2, 4 ... up to {@link #MAX_WINDOW}
 * bytes); the blocks of the window not yet asked for are fetched, each a ranged GET of its own, in
 * parallel. Any other block is a seek: the window drops to none and the blocks it had asked for and
 * not read are dropped, so a random reader fetches what it reads plus at most one window. The
 * kernel's READs of one handle may come a little out of order (libfuse serves them on several
 * threads): a block just behind the last one changes nothing. A new handle on a file whose last
 * reader stopped just before where it starts takes that reader's window over (a reader that reopens
 * a shard to read on).
 *
 * <p>A block already in the RAM tier or on disk is not read ahead: its READ copies it out as before
 * read-ahead, and nothing more is asked of the kernel for it.
 *
 * <p>The fetches are prefetches ({@link TieredCache#readAhead}: after readers' misses, never in the
 * reads kept for them) and land in the tiers as any fetch (checked, version-pinned); the bytes are
 * also held here until the reader takes them, so a block the cache did not admit is not fetched
 * twice: the RAM tier's native copy, with a reference, or an array when the RAM tier did not keep
 * it. A reader whose block is still on its way waits for that fetch (promoted to a reader's miss),
 * or runs it itself if no thread has started it; it never starts a second one.
 *
 * <p>Memory: the blocks fetched ahead and not yet read, with those in flight, hold at most {@link
 * #BUDGET} bytes in all; a window that finds the budget spent, or the disk writer's queue over half
 * full, asks for what fits and the rest on the reader's next block (a block fetched faster than the
 * disk stores it would be served unstored, and fetched again on the next pass). A file's blocks are
 * dropped when its last handle closes.
 */
final class ReadAhead implements AutoCloseable {
  /** 256 MiB in all: the prefetcher's window again, 32 blocks of the default 8 MiB. */
  static final long BUDGET = 256L << 20;

  /** 64 MiB ahead of one reader at most: 8 blocks of 8 MiB, 8 GETs in flight for one reader. */
  static final long MAX_WINDOW = 64L << 20;

  /** Threads that run the fetches: as many as the budget holds blocks of 4 MiB (32 of 8 MiB). */
  static final int THREADS = 64;

  /** Where a file's last reader stopped, kept for this many recently closed files. */
  private static final int RECENT = 1024;

  private final TieredCache cache;
  private final int maxWindow;
  private final Semaphore budget;
  private final ExecutorService pool = DaemonThreads.pool("read-ahead", THREADS);
  private final Map<Integer, FileAhead> files = new HashMap<>();
  private final Map<Integer, long[]> recent =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, long[]> e) {
          return size() > RECENT;
        }
      };

  /** Blocks fetched ahead; of them, read by a reader; dropped unread (a seek, a close). */
  final LongAdder fetched = new LongAdder();

  final LongAdder used = new LongAdder();
  final LongAdder dropped = new LongAdder();

  ReadAhead(TieredCache cache) {
    this.cache = cache;
    int bs = cache.blockSize();
    this.maxWindow = (int) Math.max(1, MAX_WINDOW / bs);
    this.budget = new Semaphore((int) Math.max(1, BUDGET / bs));
  }

  /** One block fetched ahead: its bytes once here, the budget it holds until read or dropped. */
  private final class Ahead {
    final int id;
    final int block;
    final AtomicBoolean claimed = new AtomicBoolean();
    final AtomicBoolean released = new AtomicBoolean();
    final CompletableFuture<TieredCache.Fetched> result = new CompletableFuture<>();
    volatile boolean abandoned;

    Ahead(int id, int block) {
      this.id = id;
      this.block = block;
    }

    /** On a read-ahead thread: fetches it unless the reader (or a drop) claimed it first. */
    void runAhead() {
      if (!claimed.compareAndSet(false, true)) {
        return;
      }
      try {
        result.complete(cache.readAhead(id, block));
      } catch (IOException | RuntimeException e) {
        result.completeExceptionally(e);
      }
      if (abandoned) {
        release();
        discard();
      }
    }

    /** No reader will take it: its budget comes back now, or when its fetch ends. */
    void drop() {
      abandoned = true;
      dropped.increment();
      if (claimed.compareAndSet(false, true) || result.isDone()) {
        release();
      }
      discard();
    }

    /**
     * Frees what was fetched, if it is here (a drop before the fetch ends leaves it to the fetch,
     * which sees {@link #abandoned}; both may get here, and a second discard does nothing).
     */
    void discard() {
      if (result.isDone() && !result.isCompletedExceptionally()) {
        TieredCache.Fetched f = result.getNow(null);
        if (f != null) {
          f.discard();
        }
      }
    }

    void release() {
      if (released.compareAndSet(false, true)) {
        budget.release();
      }
    }
  }

  /** A file's blocks fetched ahead, the handles open on it. Guarded by {@code ReadAhead.this}. */
  private static final class FileAhead {
    final Map<Integer, Ahead> blocks = new HashMap<>();
    int handles;
  }

  /** A handle on a file in blocks was opened. */
  synchronized void opened(int id) {
    files.computeIfAbsent(id, k -> new FileAhead()).handles++;
  }

  /** A handle on a file in blocks was closed: with its last, the file's unread blocks go. */
  void closed(SampleHandle h) {
    synchronized (this) {
      FileAhead f = files.get(h.id);
      if (f != null && --f.handles <= 0) {
        files.remove(h.id);
        f.blocks.values().forEach(Ahead::drop);
      }
      synchronized (h) {
        if (h.aheadLast >= 0) {
          recent.put(h.id, new long[] {h.aheadLast, h.aheadWindow});
        }
      }
    }
  }

  /**
   * Block {@code b} of {@code h}'s file for a READ: read ahead if it was (the caller then owns what
   * is held), else served from LMDB's map by {@code fromMap} (true: served there, null returned),
   * else read through the cache (the access recorded each way); moves the handle's window and asks
   * for what it adds.
   */
  TieredCache.Fetched block(SampleHandle h, int b, java.util.function.BooleanSupplier fromMap)
      throws IOException {
    return block(h, b, fromMap, true);
  }

  /**
   * {@link #block(SampleHandle, int, java.util.function.BooleanSupplier)}; with {@code ahead} false
   * (a random reader's READ of a block that is near: {@link ReadPattern}) the window is left as it
   * is and nothing is asked for ahead.
   */
  TieredCache.Fetched block(
      SampleHandle h, int b, java.util.function.BooleanSupplier fromMap, boolean ahead)
      throws IOException {
    Ahead mine = ahead ? advance(h, b) : null;
    if (mine == null) {
      return fromMap.getAsBoolean() ? null : cache.readBlock(h.id, b);
    }
    try {
      if (mine.claimed.compareAndSet(false, true)) {
        // no thread had started it: the reader's own miss
        return cache.readBlock(h.id, b);
      }
      boolean ready = mine.result.isDone();
      if (!ready) {
        cache.demand(h.id, b);
      }
      TieredCache.Fetched got = await(mine.result);
      if (got == null) {
        // the read ahead failed: one more try as a reader's miss
        return cache.readBlock(h.id, b);
      }
      used.increment();
      cache.servedBlock(h.id, ready);
      return got;
    } finally {
      mine.release();
    }
  }

  /**
   * Moves {@code h}'s window to block {@code b} and asks for the blocks it adds.
   *
   * @return the block read ahead for {@code b}, taken from the file's, or null if none was
   */
  private Ahead advance(SampleHandle h, int b) {
    int count = cache.blockCount(h.id);
    synchronized (this) {
      FileAhead f = files.get(h.id);
      if (f == null) {
        return null; // closed meanwhile
      }
      int from;
      int to;
      synchronized (h) {
        int last = h.aheadLast;
        if (last < 0) {
          long[] before = recent.remove(h.id);
          if (before != null && b == before[0] + 1) {
            last = (int) before[0];
            h.aheadWindow = (int) before[1];
          }
        }
        if (last >= 0 && b >= last - 1 && b <= last) {
          return f.blocks.remove(b); // the kernel's READs a little out of order: no change
        }
        if (b == last + 1 || (last < 0 && b == 0)) {
          h.aheadWindow = h.aheadWindow == 0 ? 1 : Math.min(maxWindow, h.aheadWindow * 2);
        } else {
          // A seek: what this handle asked for ahead and has not read is dropped.
          for (int k = last + 1; k <= last + h.aheadWindow; k++) {
            Ahead a = f.blocks.remove(k);
            if (a != null) {
              a.drop();
            }
          }
          h.aheadWindow = 0;
          h.aheadAsked = b;
        }
        h.aheadLast = b;
        from = Math.max(b, h.aheadAsked) + 1;
        to = Math.min(count - 1, b + h.aheadWindow);
      }
      int asked = from - 1;
      for (int k = from; k <= to; k++) {
        if (!f.blocks.containsKey(k) && !cache.nearAhead(h.id, k)) {
          if (!cache.diskKeepsUp() || !budget.tryAcquire()) {
            break; // the rest on the reader's next block
          }
          Ahead a = new Ahead(h.id, k);
          f.blocks.put(k, a);
          fetched.increment();
          pool.execute(a::runAhead);
        }
        asked = k;
      }
      synchronized (h) {
        h.aheadAsked = Math.max(h.aheadAsked, asked);
      }
      return f.blocks.remove(b);
    }
  }

  /** The block, or null if the fetch failed (the reader then tries once itself). */
  private static TieredCache.Fetched await(CompletableFuture<TieredCache.Fetched> f)
      throws IOException {
    if (f.isDone()) {
      return f.isCompletedExceptionally() ? null : f.getNow(null);
    }
    Blocking.begin();
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for a block read ahead");
    } catch (ExecutionException e) {
      return null;
    } finally {
      Blocking.end();
    }
  }

  /** Stops the fetches; the blocks fetched ahead and not read are freed. */
  @Override
  public void close() {
    pool.shutdownNow();
    synchronized (this) {
      files.values().forEach(f -> f.blocks.values().forEach(Ahead::drop));
      files.clear();
    }
  }
}
