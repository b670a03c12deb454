package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Reads {@code /proc/self/mountinfo}. */
final class Mounts {
  private Mounts() {}

  /** The filesystem type mounted exactly at {@code mountpoint}, if any (the last mount wins). */
  static Optional<String> typeAt(Path mountpoint) {
    String want = mountpoint.toAbsolutePath().normalize().toString();
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of("/proc/self/mountinfo"));
    } catch (IOException e) {
      return Optional.empty();
    }
    String type = null;
    for (String line : lines) {
      // id parent major:minor root mountpoint options [optional...] - fstype source superopts
      String[] f = line.split(" ");
      if (f.length < 7 || !unescape(f[4]).equals(want)) {
        continue;
      }
      for (int i = 6; i < f.length - 1; i++) {
        if (f[i].equals("-")) {
          type = f[i + 1];
          break;
        }
      }
    }
    return Optional.ofNullable(type);
  }

  /** The hintfs mountpoint that {@code path} is in (the deepest one), if any. */
  static Optional<Path> hintfsMountContaining(Path path) {
    Path want = path.toAbsolutePath().normalize();
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of("/proc/self/mountinfo"));
    } catch (IOException e) {
      return Optional.empty();
    }
    Path best = null;
    for (String line : lines) {
      String[] f = line.split(" ");
      if (f.length < 7) {
        continue;
      }
      Path mp = Path.of(unescape(f[4]));
      if (!want.startsWith(mp) || (best != null && best.getNameCount() >= mp.getNameCount())) {
        continue;
      }
      if (isHintfs(mp)) {
        best = mp;
      }
    }
    return Optional.ofNullable(best);
  }

  /** True if a hintfs filesystem is mounted at the path. */
  static boolean isHintfs(Path mountpoint) {
    return typeAt(mountpoint).map(t -> t.equals("fuse.hintfs")).orElse(false);
  }

  /** mountinfo escapes space, tab, newline and backslash as octal. */
  private static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length()) {
        sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
