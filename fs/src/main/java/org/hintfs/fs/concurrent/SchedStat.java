package org.hintfs.fs.concurrent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux's scheduler says of this process's threads ({@code /proc}): a thread's id as the
 * kernel knows it, and how long it has waited on a run queue for a core. Where /proc does not have
 * them (not Linux, a kernel without scheduler statistics) each answers -1.
 */
public final class SchedStat {
  private SchedStat() {}

  /** The calling thread's id in the kernel (/proc/thread-self is PID/task/TID), or -1. */
  public static long currentTid() {
    try {
      Path self = Files.readSymbolicLink(Path.of("/proc/thread-self"));
      return Long.parseLong(self.getFileName().toString());
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * Nanoseconds thread {@code tid} of this process has spent runnable but waiting for a core (the
   * second figure of its {@code schedstat}), or -1 if not known. A few microseconds per call.
   */
  public static long runDelayNanos(long tid) {
    if (tid < 0) {
      return -1;
    }
    try {
      String s =
          new String(
              Files.readAllBytes(Path.of("/proc/self/task/" + tid + "/schedstat")),
              StandardCharsets.US_ASCII);
      int a = s.indexOf(' ');
      int b = a < 0 ? -1 : s.indexOf(' ', a + 1);
      return b < 0 ? -1 : Long.parseLong(s, a + 1, b, 10);
    } catch (IOException | RuntimeException e) {
      return -1; // the thread ended, or no such file
    }
  }

  /**
   * The calling thread's own figure, kept open: a seek and a read of its schedstat per look (no
   * open and close, as {@link #runDelayNanos} has), for a thread that looks at its waits each time
   * it starts or stops serving requests. A file, not an interruptible channel: an interrupt must
   * not close it. Only the thread that opened it may read it; {@link #close} when the thread ends.
   */
  public static final class Own implements AutoCloseable {
    private final RandomAccessFile file;
    private final byte[] buf = new byte[96];

    private Own(RandomAccessFile file) {
      this.file = file;
    }

    /** The calling thread's figure, or null where /proc does not have it. */
    public static Own open() {
      try {
        // /proc/thread-self names the caller's task when it is opened; the handle stays on it.
        return new Own(new RandomAccessFile("/proc/thread-self/schedstat", "r"));
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }

    /** Nanoseconds the owning thread has waited for a core, or -1 if the read failed. */
    public long runDelayNanos() {
      try {
        file.seek(0);
        int n = file.read(buf);
        int i = 0;
        while (i < n && buf[i] != ' ') {
          i++;
        }
        long v = 0;
        int digits = 0;
        for (i++; i < n; i++) {
          byte c = buf[i];
          if (c < '0' || c > '9') {
            break;
          }
          v = v * 10 + (c - '0');
          digits++;
        }
        return digits == 0 ? -1 : v;
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    @Override
    public void close() {
      try {
        file.close();
      } catch (IOException e) {
        // a /proc file: nothing to flush
      }
    }
  }
}
