package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import jnr.ffi.LibraryLoader;

/** What the background daemon needs: leave the terminal's session, report why it died. */
final class Daemon {
  private Daemon() {}

  /** libc's setsid(2). */
  public interface LibC {
    int setsid();

    int umask(int mask);
  }

  /**
   * Sets this process's umask to 077, so that whatever a mount writes (the cache's files, the saved
   * listing, pins, the daemon's log, a trace) is its user's alone whatever umask it was started
   * with; the daemon inherits it. The cache holds the source's bytes: see {@code PrivateDirectory}.
   */
  static void keepFilesPrivate() {
    LibraryLoader.create(LibC.class).load("c").umask(077);
  }

  /**
   * Starts a new session when running as a daemon, so the terminal's hang-up and Ctrl-C (which go
   * to the caller's process group) never reach the mount.
   */
  static void detachFromTerminal(boolean daemon) {
    if (daemon) {
      LibraryLoader.create(LibC.class).load("c").setsid();
    }
  }

  /** The last "hintfs: ..." line the daemon wrote to its log since {@code fromByte}, if any. */
  static Optional<String> lastError(Path log, long fromByte) {
    try {
      byte[] all = Files.readAllBytes(log);
      String tail =
          new String(
              all,
              (int) Math.min(fromByte, all.length),
              (int) (all.length - Math.min(fromByte, all.length)),
              StandardCharsets.UTF_8);
      List<String> lines = tail.lines().toList();
      for (int i = lines.size() - 1; i >= 0; i--) {
        String l = lines.get(i);
        int at = l.indexOf("hintfs: ");
        if (at >= 0) {
          return Optional.of(l.substring(at + "hintfs: ".length()));
        }
      }
      for (int i = lines.size() - 1; i >= 0; i--) {
        if (lines.get(i).startsWith("fuse:")) {
          return Optional.of(lines.get(i));
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
