package org.hintfs.backing;

/**
 * One entry of a dataset listing.
 *
 * @param path relative, '/'-separated, no leading or trailing slash; "" is the root
 * @param size bytes (0 for directories)
 * @param versionTag changes whenever the content may have changed (ETag, or mtime and size)
 * @param mtimeMillis last modification time, milliseconds since the epoch
 * @param directory true for a directory (an explicit one; files imply their parents)
 */
public record SourceObject(
    String path, long size, String versionTag, long mtimeMillis, boolean directory) {

  /** A regular file. */
  public static SourceObject file(String path, long size, String versionTag, long mtimeMillis) {
    return new SourceObject(path, size, versionTag, mtimeMillis, false);
  }

  /** A directory. */
  public static SourceObject dir(String path, long mtimeMillis) {
    return new SourceObject(path, 0, "", mtimeMillis, true);
  }
}
