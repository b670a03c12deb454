package org.hintfs.fs.virtual;

/**
 * The files under the reserved {@code /.hintfs} directory: reachable by name, never listed.
 *
 * <p>Their ids are negative so they never collide with catalog ids.
 */
public enum VirtualFile {
  /** The {@code /.hintfs} directory itself. */
  DIR(-2, ".hintfs"),
  /** Mount statistics as JSON, generated at open. */
  STATS(-3, "stats"),
  /** Hint lines are written here. */
  CONTROL(-4, "control"),
  /** The last rejected control lines and why, generated at open. */
  ERRORS(-5, "errors"),
  /** The #index of every dataset sample held locally now, generated at open. */
  CACHED(-6, "cached");

  /** Name of the reserved directory at the mount root. */
  public static final String DIR_NAME = ".hintfs";

  private final int id;
  private final String fileName;

  VirtualFile(int id, String fileName) {
    this.id = id;
    this.fileName = fileName;
  }

  /** The negative id. */
  public int id() {
    return id;
  }

  /** The file's name inside {@code /.hintfs}. */
  public String fileName() {
    return fileName;
  }

  /** The virtual file with this id, or null. */
  public static VirtualFile byId(int id) {
    for (VirtualFile v : values()) {
      if (v.id == id) {
        return v;
      }
    }
    return null;
  }

  /** True for {@code .hintfs} at the root and anything below it. */
  public static boolean isReservedPath(String path) {
    String p = path.startsWith("/") ? path.substring(1) : path;
    return p.equals(DIR_NAME) || p.startsWith(DIR_NAME + "/");
  }

  /** The virtual file at a mount-relative path such as {@code /.hintfs/stats}, or null. */
  public static VirtualFile byPath(String path) {
    String p = path.startsWith("/") ? path.substring(1) : path;
    if (p.equals(DIR_NAME) || p.equals(DIR_NAME + "/")) {
      return DIR;
    }
    if (!p.startsWith(DIR_NAME + "/")) {
      return null;
    }
    String name = p.substring(DIR_NAME.length() + 1);
    for (VirtualFile v : values()) {
      if (v != DIR && v.fileName.equals(name)) {
        return v;
      }
    }
    return null;
  }
}
