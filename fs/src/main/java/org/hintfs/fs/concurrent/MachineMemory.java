package org.hintfs.fs.concurrent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux says of this machine's memory ({@code /proc/meminfo}), within this cgroup's limit. */
public final class MachineMemory {
  private MachineMemory() {}

  /**
   * A {@code /proc/meminfo} figure in bytes ({@code "MemTotal"}, {@code "MemAvailable"}), less if
   * this process's cgroup (v2) has a lower memory limit; 0 if /proc/meminfo cannot be read or has
   * no such figure.
   */
  public static long withinCgroup(String field) {
    long bytes = 0;
    String prefix = field + ":";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith(prefix)) {
          bytes = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      return 0;
    }
    try {
      String max = Files.readString(Path.of("/sys/fs/cgroup/memory.max")).strip();
      if (!max.equals("max")) {
        bytes = Math.min(bytes, Long.parseLong(max));
      }
    } catch (IOException | RuntimeException e) {
      // no cgroup v2 limit here
    }
    return bytes;
  }
}
