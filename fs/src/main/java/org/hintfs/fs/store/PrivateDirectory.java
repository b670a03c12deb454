package org.hintfs.fs.store;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a cache directory readable by its owner alone: the cache holds every cached byte of the
 * source in plain form ({@code data.mdb}), and the listing ({@code catalog.bin}), so a cache that
 * another local user can read hands them a private bucket without its credentials (rclone and
 * mountpoint-s3 keep theirs private to the mounting user too).
 *
 * <p>The directory is made 0700 and every entry directly in it loses its group and other bits (0600
 * for a file). A directory this process may not change (another user's, and this process not root)
 * that others can enter is refused with a line that says how to fix it. Files created later are
 * private through the daemon's umask (077, set by the mount command) and, for LMDB's own, the mode
 * the store opens them with ({@link #FILE_MODE}).
 */
public final class PrivateDirectory {
  private static final Logger log = LoggerFactory.getLogger(PrivateDirectory.class);

  /** The mode of the directory: its owner alone enters, lists and creates. */
  public static final int DIR_MODE = 0700;

  /** The mode of the files in it. */
  public static final int FILE_MODE = 0600;

  /** The bits that let anyone but the owner in. */
  private static final int OTHERS = 077;

  private PrivateDirectory() {}

  /**
   * Creates {@code dir} (and any missing parent) private, or makes an existing one private.
   *
   * @throws IOException with a one-line reason when another user's directory is open to others
   */
  public static void prepare(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
      return;
    }
    int mode = mode(dir);
    if ((mode & OTHERS) != 0) {
      int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
      long me = currentUid();
      String refusal = refusal(dir, mode, owner, me);
      if (refusal != null) {
        throw new IOException(refusal);
      }
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
      log.warn(
          "cache dir {} was open to other users (mode {}): made it private (0700)",
          dir,
          octal(mode));
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path p : entries) {
        if (Files.isSymbolicLink(p)) {
          continue; // chmod would follow it out of the cache dir
        }
        int m = mode(p);
        if ((m & OTHERS) != 0) {
          Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(rwx(m & ~OTHERS)));
        }
      }
    }
  }

  /**
   * Why a cache dir of mode {@code mode} owned by {@code owner} cannot be used by user {@code me},
   * or null when it can (after a chmod): only its owner or root may make it private.
   */
  static String refusal(Path dir, int mode, long owner, long me) {
    if ((mode & OTHERS) == 0 || me == 0 || me == owner) {
      return null;
    }
    return "cache dir "
        + dir
        + " (mode "
        + octal(mode)
        + ", owner uid "
        + owner
        + ") lets other users read the cache, and only its owner can change that: run"
        + " 'chmod 700 "
        + dir
        + "' as its owner, or give a --cache-dir of your own";
  }

  private static int mode(Path p) throws IOException {
    return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
  }

  private static long currentUid() {
    return new com.sun.security.auth.module.UnixSystem().getUid();
  }

  private static String octal(int mode) {
    return String.format("%04o", mode & 07777);
  }

  /** {@code rwxr-x---} for the low nine bits of {@code mode}. */
  private static String rwx(int mode) {
    StringBuilder sb = new StringBuilder(9);
    for (int shift = 6; shift >= 0; shift -= 3) {
      int b = mode >> shift;
      sb.append((b & 4) != 0 ? 'r' : '-');
      sb.append((b & 2) != 0 ? 'w' : '-');
      sb.append((b & 1) != 0 ? 'x' : '-');
    }
    return sb.toString();
  }
}
