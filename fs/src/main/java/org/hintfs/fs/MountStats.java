package org.hintfs.fs;

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
          .classicUpperBounds(LATENCY_BUCKETS)
          .build();

  /** 50 us to 10 s. */
  public static final double[] LATENCY_BUCKETS = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    2.5, 5, 10
  };
}
