package org.hintfs.fs.concurrent;

import java.io.IOException;
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
}
