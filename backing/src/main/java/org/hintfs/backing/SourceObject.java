package org.hintfs.backing;

/**
 * One entry of a dataset listing.
 *
 * @param path relative, '/'-separated, no leading or trailing slash; "" is the root
 * @param size bytes (0 for directories)
 * @param versionTag changes whenever the content may have changed (ETag, or mtime and size)
 * @param mtimeMillis last modification time, milliseconds since the epoch
 * @param directory true for a directory (an explicit one; files imply their parents)
 * @param mode the permission bits the source keeps for it ({@code 0644}), or {@link #NO_OWNER} for
 *     a source that keeps none (an object store)
 * @param uid the owner's user id (meaningful only with a mode)
 * @param gid the owner's group id (meaningful only with a mode)
 */
public record SourceObject(
    String path,
    long size,
    String versionTag,
    long mtimeMillis,
    boolean directory,
    int mode,
    int uid,
    int gid) {

  /** {@link #mode} of an entry whose source keeps no modes or owners. */
  public static final int NO_OWNER = -1;

  /** A regular file. */
  public static SourceObject file(String path, long size, String versionTag, long mtimeMillis) {
    return new SourceObject(path, size, versionTag, mtimeMillis, false, NO_OWNER, 0, 0);
  }

  /** A directory. */
  public static SourceObject dir(String path, long mtimeMillis) {
    return new SourceObject(path, 0, "", mtimeMillis, true, NO_OWNER, 0, 0);
  }

  /** This entry with the permission bits and owner its source keeps for it. */
  public SourceObject withOwner(int mode, int uid, int gid) {
    return new SourceObject(path, size, versionTag, mtimeMillis, directory, mode & 07777, uid, gid);
  }

  /** True if the source keeps a mode and owner for this entry. */
  public boolean hasOwner() {
    return mode != NO_OWNER;
  }
}
