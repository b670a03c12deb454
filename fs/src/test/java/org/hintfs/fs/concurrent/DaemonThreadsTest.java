package org.hintfs.fs.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
  /** The calling thread's nice value, from /proc/thread-self/stat (field 19). */
  private static int nice() throws Exception {
    String stat = Files.readString(Path.of("/proc/thread-self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Integer.parseInt(f[16]);
  }

  @Test
  void aLowPriorityPoolRunsNiced() throws Exception {
    int base = nice();
    ExecutorService low = DaemonThreads.pool("low", 1, Thread.MIN_PRIORITY);
    ExecutorService normal = DaemonThreads.pool("normal", 1);
    try {
      assertEquals(
          Math.min(19, base + DaemonThreads.LOW_NICE), (int) low.submit(() -> nice()).get());
      assertEquals(base, (int) normal.submit(() -> nice()).get());
    } finally {
      low.shutdownNow();
      normal.shutdownNow();
    }
  }
}
