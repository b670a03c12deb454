package org.hintfs.fs.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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

  static void checkMountpoint(Path mp) {
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
