package org.hintfs.backing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Wraps a source and makes it slow or broken on purpose: latency per read, a failure switch, and
 * counters of reads and of reads in flight. A real implementation used as a test double.
 */
public final class FaultInjectingSource implements DatasetSource {
  private final DatasetSource inner;
  private volatile long latencyMillis;
  private volatile boolean down;
  private final AtomicLong reads = new AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();

  public FaultInjectingSource(DatasetSource inner) {
    this.inner = inner;
  }

  /** Every read waits this long before it starts. */
  public FaultInjectingSource latency(long millis) {
    this.latencyMillis = millis;
    return this;
  }

  /** While down, every call fails with {@link SourceUnavailableException}. */
  public FaultInjectingSource down(boolean down) {
    this.down = down;
    return this;
  }

  /** Reads started so far. */
  public long reads() {
    return reads.get();
  }

  /** The most reads that were in flight at once. */
  public int maxInFlight() {
    return maxInFlight.get();
  }

  @Override
  public String describe() {
    return inner.describe();
  }

  @Override
  public void list(Consumer<SourceObject> sink) throws IOException {
    check();
    inner.list(sink);
  }

  @Override
  public SourceObject stat(String path) throws IOException {
    check();
    return inner.stat(path);
  }

  @Override
  public int read(String path, String expectedVersion, long offset, ByteBuffer dst)
      throws IOException {
    reads.incrementAndGet();
    int now = inFlight.incrementAndGet();
    maxInFlight.accumulateAndGet(now, Math::max);
    try {
      if (latencyMillis > 0) {
        Thread.sleep(latencyMillis);
      }
      check();
      return inner.read(path, expectedVersion, offset, dst);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SourceUnavailableException("interrupted");
    } finally {
      inFlight.decrementAndGet();
    }
  }

  private void check() throws SourceUnavailableException {
    if (down) {
      throw new SourceUnavailableException("injected failure: source is down");
    }
  }

  @Override
  public java.util.Map<String, Long> counters() {
    return inner.counters();
  }

  @Override
  public void close() throws IOException {
    inner.close();
  }
}
