package org.hintfs.fs.store;

import java.util.concurrent.atomic.LongAdder;

/** Counters of the cache, cheap to bump from many threads. */
public final class CacheStats {
  /** Objects or blocks served from the RAM tier. */
  /** Latency histogram buckets, 50 us to 10 s (reads and source fetches alike). */
  public static final double[] LATENCY_BUCKETS = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    2.5, 5, 10
  };

  public final LongAdder ramHits = new LongAdder();

  /** Objects or blocks served from LMDB. */
  public final LongAdder diskHits = new LongAdder();

  /** Units read from the source. */
  public final LongAdder misses = new LongAdder();

  public final LongAdder bytesFromCache = new LongAdder();

  /** Opens of whole files that could be served without the source (what a trainer sees). */
  public final LongAdder openHits = new LongAdder();

  /** Opens of whole files that needed the source (or a substitute). */
  public final LongAdder openMisses = new LongAdder();

  public final LongAdder bytesFromSource = new LongAdder();
  public final LongAdder admitted = new LongAdder();

  /**
   * Fetched units not stored because the cache's disk was full (admission paused), or whose write
   * the disk refused for space; and their bytes.
   */
  public final LongAdder fullSkipped = new LongAdder();

  public final LongAdder fullSkippedBytes = new LongAdder();

  /** Fetched units not stored because the disk writer's queue was full (the disk is behind). */
  public final LongAdder writeQueueFull = new LongAdder();

  /**
   * Blocks of large files refused for a full queue and stored later: held outside the heap and
   * offered again once the writer had room ({@code TieredCache}), so that a read again does not
   * fetch them.
   */
  public final LongAdder writeQueueRepaid = new LongAdder();

  /** Files fetched ahead of their read by the prefetcher. */
  public final LongAdder prefetches = new LongAdder();

  /** Blocks of large files the prefetcher fetched ahead of their reader (a shard next in order). */
  public final LongAdder blocksPrefetched = new LongAdder();

  /** Files on disk read into the RAM tier ahead of their open (promote-ahead). */
  public final LongAdder promotions = new LongAdder();

  /**
   * Files on disk whose pages the kernel was asked to read ahead of their open (MADV_WILLNEED):
   * whole files up to {@link TieredCache#COPY_OUT_MAX}, served from the map by their reads.
   */
  public final LongAdder diskReadAhead = new LongAdder();

  public final LongAdder evictions = new LongAdder();

  /** Files removed by an admin's {@code evict} (also counted in {@link #evictions}). */
  public final LongAdder adminEvictions = new LongAdder();

  /** Entries whose header or checksum was wrong: dropped and refetched. */
  public final LongAdder corrupt = new LongAdder();

  /** Entries from an older version of the source object: dropped and refetched. */
  public final LongAdder stale = new LongAdder();

  /** READs of large files served by pages, a random reader's units ({@code ReadPattern}). */
  public final LongAdder pageReads = new LongAdder();

  /** Pages served from the disk tier to random readers. */
  public final LongAdder pageHits = new LongAdder();

  /** Pages fetched from the source for random readers' misses (several per ranged GET). */
  public final LongAdder pagesFetched = new LongAdder();

  /** Ranged GETs of pages for random readers' misses. */
  public final LongAdder pageGets = new LongAdder();

  /** Pages of packed files evicted for a page needed sooner ({@code packed} hints). */
  public final LongAdder pagesEvicted = new LongAdder();

  /** Samples of packed files read (a READ covered their middle); of them, by a READ all hits. */
  public final LongAdder packedSamples = new LongAdder();

  public final LongAdder packedSampleHits = new LongAdder();

  /** Random readers' READs served wholly from stored pages. */
  public final LongAdder pageReadHits = new LongAdder();

  /** Stored pages dropped because the block they lie in was stored (one copy of each byte). */
  public final LongAdder pagesMerged = new LongAdder();

  /** Seconds per source request of one file or block. */
  public final io.prometheus.metrics.core.metrics.Histogram sourceSeconds =
      io.prometheus.metrics.core.metrics.Histogram.builder()
          .name("hintfs_source_fetch_duration_seconds")
          .help("time to fetch one file or block from the source, retries included")
          .classicOnly()
          .classicUpperBounds(LATENCY_BUCKETS)
          .build();

  /** Hits of either tier. */
  public long hits() {
    return ramHits.sum() + diskHits.sum();
  }
}
