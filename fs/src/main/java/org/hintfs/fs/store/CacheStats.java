package org.hintfs.fs.store;

import java.util.concurrent.atomic.LongAdder;

/** Counters of the cache, cheap to bump from many threads. */
public final class CacheStats {
  /** Objects or blocks served from the RAM tier. */
  public final LongAdder ramHits = new LongAdder();

  /** Objects or blocks served from LMDB. */
  public final LongAdder diskHits = new LongAdder();

  public final LongAdder bytesFromCache = new LongAdder();
  public final LongAdder bytesFromSource = new LongAdder();
  public final LongAdder admitted = new LongAdder();
  public final LongAdder evictions = new LongAdder();

  /** Entries whose header or checksum was wrong: dropped and refetched. */
  public final LongAdder corrupt = new LongAdder();

  /** Entries from an older version of the source object: dropped and refetched. */
  public final LongAdder stale = new LongAdder();

  /** Hits of either tier. */
  public long hits() {
    return ramHits.sum() + diskHits.sum();
  }
}
