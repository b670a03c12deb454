package org.hintfs.fs.fuse;

import org.hintfs.fs.catalog.Owners;

/**
 * What the mount shows as each entry's mode, owner and group; with {@code default_permissions} (on
 * whenever others may enter: {@code allow_other}, {@code allow_root}) the kernel checks them.
 *
 * <p>In order: {@code --uid}, {@code --gid}, {@code --file-mode}, {@code --dir-mode} when given;
 * else what a local or NFS source keeps for the entry (its permission bits, setuid, setgid and
 * sticky dropped); else, for an object store, the mounting user and {@link #DEFAULT_FILE_MODE} /
 * {@link #DEFAULT_DIR_MODE}: only the user whose credentials read the bucket may read what the
 * mount shows. The files under {@code /.hintfs} belong to the mount's owner ({@code --uid}, else
 * the mounting user).
 *
 * @param uid {@code --uid}, or -1
 * @param gid {@code --gid}, or -1
 * @param fileMode {@code --file-mode}, or -1
 * @param dirMode {@code --dir-mode}, or -1
 * @param mountingUid the user the daemon runs as
 * @param mountingGid that user's group
 */
public record Ownership(
    int uid, int gid, int fileMode, int dirMode, long mountingUid, long mountingGid) {

  /** An object's mode when the source keeps none: read by its owner alone (mountpoint-s3: 0644). */
  public static final int DEFAULT_FILE_MODE = 0400;

  /** A directory's mode when the source keeps none: entered and listed by its owner alone. */
  public static final int DEFAULT_DIR_MODE = 0500;

  /** The mode bits an entry may show: read-only data never carries setuid, setgid or sticky. */
  private static final int PERMISSION_BITS = 0777;

  /** Nothing given: the source's own, else the mounting user's with the defaults. */
  public static Ownership ofMountingUser() {
    return of(-1, -1, -1, -1);
  }

  /** These options (-1: not given) for the user this process runs as. */
  public static Ownership of(int uid, int gid, int fileMode, int dirMode) {
    com.sun.security.auth.module.UnixSystem unix = new com.sun.security.auth.module.UnixSystem();
    return new Ownership(uid, gid, fileMode, dirMode, unix.getUid(), unix.getGid());
  }

  /** True if any of the four options was given. */
  public boolean anyGiven() {
    return uid >= 0 || gid >= 0 || fileMode >= 0 || dirMode >= 0;
  }

  /** The mount's owner: {@code --uid}, else the mounting user. */
  public long ownerUid() {
    return uid >= 0 ? uid : mountingUid;
  }

  /** The mount's group: {@code --gid}, else the mounting user's. */
  public long ownerGid() {
    return gid >= 0 ? gid : mountingGid;
  }

  /** The permission bits of catalog entry {@code id} ({@code owners} may be null). */
  public int mode(Owners owners, int id, boolean directory) {
    int given = directory ? dirMode : fileMode;
    if (given >= 0) {
      return given;
    }
    if (owners != null && owners.has(id)) {
      return owners.mode(id) & PERMISSION_BITS;
    }
    return directory ? defaultDirMode() : defaultFileMode();
  }

  /** A file's mode where neither the option nor the source gives one. */
  public int defaultFileMode() {
    return fileMode >= 0 ? fileMode : DEFAULT_FILE_MODE;
  }

  /**
   * A directory's mode where neither the option nor the source gives one: {@code --file-mode} with
   * x wherever it has r (0444 gives 0555, 0440 gives 0550), so a file mode given alone lets its
   * readers reach the files; else {@link #DEFAULT_DIR_MODE}.
   */
  public int defaultDirMode() {
    if (dirMode >= 0) {
      return dirMode;
    }
    return fileMode >= 0 ? fileMode | ((fileMode & 0444) >> 2) : DEFAULT_DIR_MODE;
  }

  /** The owner of catalog entry {@code id}. */
  public long uid(Owners owners, int id) {
    return uid >= 0 || owners == null || !owners.has(id) ? ownerUid() : owners.uid(id);
  }

  /** The group of catalog entry {@code id}. */
  public long gid(Owners owners, int id) {
    return gid >= 0 || owners == null || !owners.has(id) ? ownerGid() : owners.gid(id);
  }

  /** True if {@code caller} is the mount's owner, the mounting user or root. */
  public boolean isOwner(long caller) {
    return caller == 0 || caller == mountingUid || caller == ownerUid();
  }
}
