package org.hintfs.fs.serve;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Which files the kernel's page cache may still hold. A file the mount served as itself (with
 * {@code keep_cache}: its pages stay in the kernel across opens) is marked with the bytes served
 * through the mount so far; it may still be held while the bytes served since stay within the page
 * cache's reach: what the kernel could keep without evicting it, taken as the memory available
 * (MemAvailable, or the cgroup's limit if that is less), read at most once a second. A reopen of
 * such a file is answered by the kernel without a read reaching the mount, so a stand-in for it
 * changes what the trainer sees for no gain (issue 38).
 *
 * <p>An estimate, one way: the kernel may have dropped a file it says may be held (pressure from
 * other processes, {@code drop_caches}); then its reader waits on the source as without
 * substitution. 4 B per catalog file, allocated at the first open. {@code --page-cache-reach 0}
 * turns the estimate off.
 */
final class PageCacheWindow {
  /**
   * Marks count served bytes in units of 64 KiB, compared modulo 2^32 units: right while less than
   * 256 TiB was served since a mark (a mark older than that may look recent again: its file is then
   * taken to be held, and served as itself).
   */
  private static final int UNIT_SHIFT = 16;

  private static final long REFRESH_NANOS = 1_000_000_000L;

  private final int files;
  private final LongSupplier reach;
  private final AtomicLong served = new AtomicLong();
  private volatile int[] marks;
  private volatile long reachBytes;
  private final AtomicLong reachAt = new AtomicLong(System.nanoTime());

  /**
   * For a catalog of {@code files} entries; {@code reach} gives the page cache's reach in bytes
   * (read at most once a second; 0 turns the estimate off).
   */
  PageCacheWindow(int files, LongSupplier reach) {
    this.files = files;
    this.reach = reach;
    this.reachBytes = Math.max(0, reach.getAsLong());
  }

  /** The window a mount uses: {@code fixedReach} bytes, or with a negative one the memory's. */
  static PageCacheWindow forMount(int files, long fixedReach) {
    return new PageCacheWindow(
        files, fixedReach >= 0 ? () -> fixedReach : PageCacheWindow::memoryReach);
  }

  /**
   * File {@code id} of {@code size} bytes was served as itself with its pages kept ({@code id} -1:
   * bytes of a large file read into the page cache, counted but not marked).
   */
  void served(int id, long size) {
    if (id < 0) {
      served.addAndGet(size);
      return;
    }
    int[] m = marks;
    if (m == null) {
      synchronized (this) {
        m = marks;
        if (m == null) {
          marks = m = new int[files];
        }
      }
    }
    long before = served.getAndAdd(Math.max(size, 1));
    if (id < m.length) {
      int mark = (int) (before >>> UNIT_SHIFT) + 1;
      m[id] = mark == 0 ? 1 : mark; // 0: never served
    }
  }

  /** Whether the page cache may still hold file {@code id}'s pages. */
  boolean mayHold(int id) {
    int[] m = marks;
    if (m == null || id < 0 || id >= m.length || m[id] == 0) {
      return false;
    }
    // In units, modulo 2^32: right while less than 128 TiB was read since.
    int now = (int) (served.get() >>> UNIT_SHIFT) + 1;
    long since = Integer.toUnsignedLong(now - m[id]) << UNIT_SHIFT;
    return since < reachBytes();
  }

  private long reachBytes() {
    long now = System.nanoTime();
    long at = reachAt.get();
    if (now - at > REFRESH_NANOS && reachAt.compareAndSet(at, now)) {
      reachBytes = Math.max(0, reach.getAsLong());
    }
    return reachBytes;
  }

  /**
   * The memory the page cache could hold files in: MemAvailable (free memory and what the kernel
   * can reclaim, the page cache itself included), less if this process's cgroup (v2) has a lower
   * limit. 0 when neither can be read.
   */
  static long memoryReach() {
    return org.hintfs.fs.concurrent.MachineMemory.withinCgroup("MemAvailable");
  }
}
