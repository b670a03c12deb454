package org.hintfs.fs.serve;

import io.prometheus.metrics.core.metrics.Histogram;
import java.util.concurrent.atomic.LongAdder;

/** Counters of one mount, cheap to bump from many FUSE threads. */
public final class MountStats {
  public final LongAdder opens = new LongAdder();
  public final LongAdder reads = new LongAdder();
  public final LongAdder bytesRead = new LongAdder();

  /** Seconds per read of a dataset file, by where its bytes came from (kernel request to reply). */
  public final Histogram readSeconds =
      Histogram.builder()
          .name("hintfs_read_duration_seconds")
          .help("time to answer one read of a dataset file")
          .classicOnly()
          .classicUpperBounds(org.hintfs.fs.store.CacheStats.LATENCY_BUCKETS)
          .build();
}
