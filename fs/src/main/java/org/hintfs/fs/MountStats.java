package org.hintfs.fs;

import java.util.concurrent.atomic.LongAdder;

/** Counters of one mount, cheap to bump from many FUSE threads. */
public final class MountStats {
  public final LongAdder opens = new LongAdder();
  public final LongAdder reads = new LongAdder();
  public final LongAdder bytesRead = new LongAdder();
}
