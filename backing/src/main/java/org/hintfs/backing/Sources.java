package org.hintfs.backing;

import java.io.IOException;

/** Opens a source from what a user types: a path, {@code file://...}. */
public final class Sources {
  private Sources() {}

  /** Opens the source named by {@code spec}; throws with a message fit for one line of output. */
  public static DatasetSource open(String spec) throws IOException {
    if (spec.startsWith("s3://")) {
      throw new IllegalArgumentException(
          "s3:// sources are not supported by this build yet; mount a directory instead");
    }
    if (spec.contains("://") && !spec.startsWith("file://")) {
      throw new IllegalArgumentException(
          "unknown source scheme in '" + spec + "': use a directory path or file:///path");
    }
    return LocalDirSource.fromSpec(spec);
  }
}
