package org.hintfs.fs.cli;

import java.util.List;
import org.hintfs.fs.fuse.Ownership;
import picocli.CommandLine.Option;

/**
 * {@code --uid}, {@code --gid}, {@code --file-mode}, {@code --dir-mode} (and their {@code -o uid=,
 * gid=, file_mode=, dir_mode=} forms, for fstab): what the mount shows as owners and modes, as
 * mountpoint-s3's options of the same names. Which one wins where: {@link Ownership}.
 */
final class OwnershipOptions {
  @Option(
      names = "--uid",
      paramLabel = "UID",
      description =
          "the owner every file and directory shows (default: the source's own for a directory"
              + " source, else the mounting user); the owner also writes hints and reads"
              + " .hintfs/stats")
  String uid;

  @Option(
      names = "--gid",
      paramLabel = "GID",
      description =
          "the group every file and directory shows (default: the source's own for a directory"
              + " source, else the mounting user's)")
  String gid;

  @Option(
      names = "--file-mode",
      paramLabel = "MODE",
      description =
          "every file's permission bits, in octal, e.g. 0444 for every user of the node (default:"
              + " the source's own for a directory source, else 0400: the mounting user's alone)")
  String fileMode;

  @Option(
      names = "--dir-mode",
      paramLabel = "MODE",
      description =
          "every directory's permission bits, in octal, e.g. 0555 (default: the source's own for a"
              + " directory source, else --file-mode with x wherever it has r: 0500 by default)")
  String dirMode;

  /** The -o names of the four options. */
  private static final List<String> O_NAMES = List.of("uid", "gid", "file_mode", "dir_mode");

  /**
   * Moves {@code uid=}, {@code gid=}, {@code file_mode=}, {@code dir_mode=} out of the libfuse
   * options into these fields (libfuse's own {@code uid=} would override every entry's owner behind
   * the daemon's back), and adds {@code default_permissions} where others may enter the mount.
   */
  void takeFrom(List<String> fuseOptions) {
    for (var it = fuseOptions.iterator(); it.hasNext(); ) {
      String o = it.next();
      int eq = o.indexOf('=');
      String key = eq < 0 ? o : o.substring(0, eq);
      if (!O_NAMES.contains(key)) {
        continue;
      }
      if (eq < 0 || eq == o.length() - 1) {
        throw new UserError("-o " + key + " needs a value (" + key + "=...)");
      }
      String value = o.substring(eq + 1);
      String flag = "--" + key.replace('_', '-');
      String given =
          switch (key) {
            case "uid" -> uid;
            case "gid" -> gid;
            case "file_mode" -> fileMode;
            default -> dirMode;
          };
      if (given != null && !given.equals(value)) {
        throw new UserError(flag + " " + given + " and -o " + o + " disagree: give one of them");
      }
      switch (key) {
        case "uid" -> uid = value;
        case "gid" -> gid = value;
        case "file_mode" -> fileMode = value;
        default -> dirMode = value;
      }
      it.remove();
    }
    if (othersMayEnter(fuseOptions) && !fuseOptions.contains("default_permissions")) {
      fuseOptions.add("default_permissions");
    }
  }

  /** True with {@code allow_other} or {@code allow_root}: users other than the mounting one. */
  static boolean othersMayEnter(List<String> fuseOptions) {
    return fuseOptions.contains("allow_other") || fuseOptions.contains("allow_root");
  }

  /** The options, checked, for the user this process runs as. */
  Ownership ownership() {
    return Ownership.of(
        id("--uid", uid),
        id("--gid", gid),
        mode("--file-mode", fileMode),
        mode("--dir-mode", dirMode));
  }

  private static int id(String flag, String v) {
    if (v == null) {
      return -1;
    }
    try {
      int n = Integer.parseInt(v.strip());
      if (n >= 0 && n < Integer.MAX_VALUE) {
        return n;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new UserError(
        flag + " takes a numeric id (e.g. 1000; see `id -u NAME`), not '" + v + "'");
  }

  private static int mode(String flag, String v) {
    if (v == null) {
      return -1;
    }
    try {
      int m = Integer.parseInt(v.strip(), 8);
      if (m >= 0 && m <= 0777) {
        return m;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new UserError(
        flag + " takes permission bits in octal from 0000 to 0777 (e.g. 0444), not '" + v + "'");
  }

  /**
   * The one line a mount with {@code allow_other} prints: what every user of the node can now read
   * through it. {@code sourceKeepsOwners}: a directory source, whose own modes apply where no
   * option sets them.
   */
  static String allowOtherNotice(Ownership o, boolean sourceKeepsOwners, String source) {
    if (sourceKeepsOwners && !o.anyGiven()) {
      return "allow_other: every user of this node may read what the source's own modes and"
          + " owners let them read (the kernel checks them: default_permissions)";
    }
    String theSource = sourceKeepsOwners ? "the source's" : null;
    String fm = o.fileMode() >= 0 || theSource == null ? octal(o.defaultFileMode()) : theSource;
    String dm = o.dirMode() >= 0 || theSource == null ? octal(o.defaultDirMode()) : theSource;
    String owner =
        (o.uid() >= 0 || !sourceKeepsOwners ? "uid " + o.ownerUid() : "the source's owners")
            + ", "
            + (o.gid() >= 0 || !sourceKeepsOwners ? "gid " + o.ownerGid() : "the source's groups");
    String what = "allow_other: files " + fm + ", directories " + dm + ", " + owner + ": ";
    if (sourceKeepsOwners) {
      return what + "every user of this node may read what these let them read";
    }
    int f = o.defaultFileMode();
    int d = o.defaultDirMode();
    if ((f & 04) != 0 && (d & 05) == 05) {
      return what + "every user of this node may read all of " + source;
    }
    if ((f & 040) != 0 && (d & 050) == 050) {
      return what
          + "the users of group "
          + o.ownerGid()
          + " (and uid "
          + o.ownerUid()
          + ", and root) may read all of "
          + source
          + "; nobody else may";
    }
    return what
        + "only uid "
        + o.ownerUid()
        + " and root may read "
        + source
        + "; --file-mode 0444 --dir-mode 0555 lets every user of the node read it, --gid GID"
        + " --file-mode 0440 --dir-mode 0550 a group";
  }

  private static String octal(int m) {
    return String.format("%04o", m);
  }
}
