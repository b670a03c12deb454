package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Optional;

/** Checks that a mount can work before anything starts, each failure one actionable line. */
final class Preflight {
  private static final List<String> LIB_DIRS =
      List.of(
          "/lib/x86_64-linux-gnu",
          "/usr/lib/x86_64-linux-gnu",
          "/lib/aarch64-linux-gnu",
          "/usr/lib/aarch64-linux-gnu",
          "/lib64",
          "/usr/lib64",
          "/lib",
          "/usr/lib",
          "/usr/local/lib");

  private Preflight() {}

  /**
   * Checks the mountpoint: an existing, empty directory with nothing mounted on it. A FUSE mount
   * whose daemon died (its endpoint answers ENOTCONN) is unmounted first, so that a mount after a
   * crash, by hand or from systemd's {@code Restart=}, takes its place.
   */
  static void checkMountpoint(Path mp, boolean allowNonEmpty) {
    Optional<String> type = Mounts.typeAt(mp);
    if (type.isPresent() && type.get().startsWith("fuse") && isDeadEndpoint(mp)) {
      try {
        UnmountCommand.detach(mp, true);
      } catch (IOException | InterruptedException | UserError e) {
        throw new UserError(
            "mountpoint "
                + mp
                + " holds a "
                + type.get()
                + " mount whose daemon has died (transport endpoint is not connected), and"
                + " unmounting it failed: "
                + e.getMessage());
      }
      System.err.println(
          "hintfs: "
              + mp
              + " held a "
              + type.get()
              + " mount whose daemon had died (transport endpoint is not connected);"
              + " unmounted it");
    }
    if (!Files.exists(mp)) {
      throw new UserError("mountpoint " + mp + " does not exist (create it: mkdir -p " + mp + ")");
    }
    if (!Files.isDirectory(mp)) {
      throw new UserError("mountpoint " + mp + " is not a directory");
    }
    Mounts.typeAt(mp)
        .ifPresent(
            t -> {
              throw new UserError(
                  mp
                      + " is already mounted ("
                      + t
                      + "); unmount it first"
                      + (t.equals("fuse.hintfs") ? ": hintfs unmount " + mp : ""));
            });
    if (!allowNonEmpty && !isEmptyDirectory(mp)) {
      throw new UserError(
          "mountpoint "
              + mp
              + " is not empty: the mount would hide its files; use an empty directory, or"
              + " --allow-nonempty (-o nonempty) to mount over them");
    }
  }

  /** True if stat on the path fails with ENOTCONN: a FUSE mount whose daemon is gone. */
  static boolean isDeadEndpoint(Path mp) {
    try {
      Files.readAttributes(mp, BasicFileAttributes.class);
      return false;
    } catch (IOException e) {
      return String.valueOf(e.getMessage()).contains("Transport endpoint is not connected");
    }
  }

  private static boolean isEmptyDirectory(Path dir) {
    try (DirectoryStream<Path> d = Files.newDirectoryStream(dir)) {
      return !d.iterator().hasNext();
    } catch (IOException e) {
      return true; // unreadable: the mount itself will say what is wrong
    }
  }

  static void checkFuse() {
    Path dev = Path.of("/dev/fuse");
    if (!Files.exists(dev)) {
      throw new UserError(
          "/dev/fuse is missing: load the module (modprobe fuse) or, in a container, "
              + "start it with --device /dev/fuse");
    }
    if (!Files.isReadable(dev) || !Files.isWritable(dev)) {
      throw new UserError("/dev/fuse is not readable and writable by this user");
    }
    if (findLibrary("libfuse.so.2") == null) {
      throw new UserError(
          "libfuse2 is not installed: apt-get install libfuse2 fuse3 (hintfs uses libfuse 2.9)");
    }
    if (!isRoot() && findOnPath("fusermount") == null && findOnPath("fusermount3") == null) {
      throw new UserError("fusermount is not installed: apt-get install fuse3");
    }
  }

  static boolean isRoot() {
    return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
  }

  static Path findLibrary(String name) {
    String ld = System.getenv("LD_LIBRARY_PATH");
    if (ld != null) {
      for (String d : ld.split(":")) {
        if (!d.isEmpty() && Files.exists(Path.of(d, name))) {
          return Path.of(d, name);
        }
      }
    }
    for (String d : LIB_DIRS) {
      if (Files.exists(Path.of(d, name))) {
        return Path.of(d, name);
      }
    }
    return null;
  }

  static Path findOnPath(String exe) {
    String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
    for (String d : (path + ":/usr/bin:/bin:/usr/sbin:/sbin").split(":")) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, exe))) {
        return Path.of(d, exe);
      }
    }
    return null;
  }
}
