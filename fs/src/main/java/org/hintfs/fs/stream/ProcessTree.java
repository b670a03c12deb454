package org.hintfs.fs.stream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Parent pids and liveness from {@code /proc}: how an open is traced back to its stream. */
public interface ProcessTree {
  /** The parent of {@code pid}, or 0 if it is gone (or unknown). */
  long parent(long pid);

  /** True while {@code pid} runs. */
  boolean alive(long pid);

  /**
   * The process a thread belongs to (its thread group id). FUSE reports the calling thread's id:
   * the opens of a multi-threaded reader must count as its process's.
   */
  default long process(long tid) {
    return tid;
  }

  /**
   * True if both run the same command line: a DataLoader worker is a fork of its rank, so its opens
   * are the rank's reads.
   */
  default boolean sameProgram(long a, long b) {
    return false;
  }

  /** This machine's processes, read from {@code /proc/PID/stat}. */
  ProcessTree PROC =
      new ProcessTree() {
        @Override
        public long parent(long pid) {
          try {
            String stat =
                new String(
                    Files.readAllBytes(Path.of("/proc/" + pid + "/stat")), StandardCharsets.UTF_8);
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so look after
            // the last ')'.
            int close = stat.lastIndexOf(')');
            String[] f = stat.substring(close + 2).split(" ", 3);
            return Long.parseLong(f[1]);
          } catch (IOException | RuntimeException e) {
            return 0;
          }
        }

        @Override
        public boolean alive(long pid) {
          return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }

        @Override
        public long process(long tid) {
          try {
            for (String line : Files.readAllLines(Path.of("/proc/" + tid + "/status"))) {
              if (line.startsWith("Tgid:")) {
                return Long.parseLong(line.substring(5).strip());
              }
            }
          } catch (IOException | RuntimeException e) {
            // gone: the id as it was
          }
          return tid;
        }

        @Override
        public boolean sameProgram(long a, long b) {
          try {
            byte[] x = Files.readAllBytes(Path.of("/proc/" + a + "/cmdline"));
            return x.length > 0
                && java.util.Arrays.equals(
                    x, Files.readAllBytes(Path.of("/proc/" + b + "/cmdline")));
          } catch (IOException | RuntimeException e) {
            return false;
          }
        }
      };
}
