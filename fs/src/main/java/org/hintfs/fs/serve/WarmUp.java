package org.hintfs.fs.serve;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.hintfs.fs.concurrent.SchedStat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The warm-up at mount: before its first reader, the daemon reads up to {@link #FILES} of its
 * cached files through its own mount, from one thread whose opens the mount knows by the thread's
 * id ({@link HintFs#warmUpThread}) and counts nowhere: no counter, no policy access, no stream, no
 * page cache (direct I/O). The JIT then compiles the path every read takes (the FUSE callbacks, the
 * open, LMDB and CRC32C) before a reader waits on it; the AOT cache keeps classes and profiles, not
 * compiled code. Measured by hand: a fresh daemon's first pass 40% faster after 300 files
 * (BENCHMARKS.md). It stops at a reader's first open, after {@link #BUDGET_MILLIS}, or at {@link
 * #FILES}; a mount with nothing cached has nothing to warm.
 */
public final class WarmUp {
  private static final Logger log = LoggerFactory.getLogger(WarmUp.class);

  /** Files read at most. */
  public static final int FILES = 300;

  /** Time spent at most, from the mount's appearance. */
  public static final long BUDGET_MILLIS = 3_000;

  private WarmUp() {}

  /**
   * Starts the warm-up of {@code fs}, mounted (soon) at {@code mountpoint}, on a daemon thread;
   * {@code mounted} tells when the kernel lists the mount.
   */
  public static Thread start(HintFs fs, Path mountpoint, BooleanSupplier mounted) {
    Thread t =
        new Thread(
            () -> {
              try {
                run(fs, mountpoint, mounted);
              } catch (Exception e) {
                log.debug("warm-up ended early", e);
              } finally {
                fs.warmUpThread = 0;
              }
            },
            "warm-up");
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
    return t;
  }

  static void run(HintFs fs, Path mountpoint, BooleanSupplier mounted)
      throws IOException, InterruptedException {
    List<Integer> ids = new ArrayList<>();
    for (int id : fs.cache().index().cachedIds()) {
      if (!fs.catalog().isDirectory(id) && !fs.cache().isBlocked(id)) {
        ids.add(id);
      }
    }
    if (ids.isEmpty() || !awaitMounted(mounted)) {
      return;
    }
    Collections.shuffle(ids, new Random(ids.size()));
    long tid = SchedStat.currentTid();
    if (tid < 0) {
      return; // no /proc: its opens could not be told from a reader's
    }
    long opens = sampleOpens(fs);
    long t0 = System.nanoTime();
    long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
    ByteBuffer buf = ByteBuffer.allocate(256 * 1024);
    int read = 0;
    String stopped = "all read";
    fs.warmUpThread = tid;
    try {
      for (int id : ids.subList(0, Math.min(FILES, ids.size()))) {
        if (sampleOpens(fs) != opens) {
          stopped = "a reader came";
          break;
        }
        if (System.nanoTime() > deadline) {
          stopped = "out of time";
          break;
        }
        String p = fs.catalog().path(id);
        try (FileChannel ch = FileChannel.open(mountpoint.resolve(p.replaceFirst("^/+", "")))) {
          buf.clear();
          while (ch.read(buf) > 0) {
            if (!buf.hasRemaining()) {
              buf.clear();
            }
          }
          read++;
        } catch (IOException e) {
          log.debug("warm-up read of {} failed", p, e); // evicted meanwhile: the next one
        }
      }
    } finally {
      fs.warmUpThread = 0;
    }
    log.info(
        "warm-up: {} cached files read through the mount in {} ms ({})",
        read,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
        stopped);
  }

  /** Opens of samples by readers so far (the control and stats files do not stop the warm-up). */
  public static long sampleOpens(HintFs fs) {
    return fs.cache().stats().openHits.sum() + fs.cache().stats().openMisses.sum();
  }

  /**
   * Waits until {@code mounted} says the kernel lists the mount (libfuse mounts on its own thread),
   * at most 30 s.
   */
  private static boolean awaitMounted(BooleanSupplier mounted) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (mounted.getAsBoolean()) {
        return true;
      }
      Thread.sleep(10);
    }
    return false;
  }
}
