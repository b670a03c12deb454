package org.hintfs.fs.prefetch;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.store.TieredCache;

/**
 * Fetches a randomly read large file whole, in the background, when the cache has room for all of
 * it, as s3fs fetches a file at its first open: its blocks not stored yet, {@link #PARALLEL} ranged
 * GETs of a block at once, each a prefetch (after every reader's miss, never in the reads kept for
 * them), landing in the cache as any block (the pages a random reader stored inside a block then
 * go: one copy of each byte). The reader's misses keep being served by pages meanwhile, and once a
 * block is stored its READs are served from it. A file is filled once per mount; one that would not
 * fit, or a packed file with a hinted order (its own prefetcher fetches what is needed soonest), is
 * not.
 */
public final class WholeFileFill implements AutoCloseable {
  /** Blocks fetched at once, across files: 8 GETs of 8 MiB, read-ahead's window for one reader. */
  static final int PARALLEL = 8;

  private final TieredCache cache;
  private final ExecutorService pool = DaemonThreads.pool("whole-file-fill", PARALLEL);
  private final Set<Integer> started = ConcurrentHashMap.newKeySet();

  /** Blocks fetched by fills; files whose fill started. */
  public final LongAdder blocks = new LongAdder();

  public final LongAdder files = new LongAdder();

  public WholeFileFill(TieredCache cache) {
    this.cache = cache;
  }

  /** File in blocks {@code id} is read at random: fetch it whole if the cache has room for it. */
  public void randomReader(int id) {
    if (!cache.hasRoomForWhole(id) || cache.packedOrder(id) != null || !started.add(id)) {
      return;
    }
    files.increment();
    for (int b = 0; b < cache.blockCount(id); b++) {
      int block = b;
      pool.execute(() -> fetch(id, block));
    }
  }

  private void fetch(int id, int block) {
    if (cache.nearAhead(id, block) || cache.packedOrder(id) != null) {
      return;
    }
    try {
      cache.readAhead(id, block).discard();
      blocks.increment();
    } catch (IOException | RuntimeException e) {
      // a reader's READ of it fetches its pages, as any miss
    }
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
