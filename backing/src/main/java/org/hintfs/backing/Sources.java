package org.hintfs.backing;

import java.io.IOException;
import org.hintfs.backing.s3.S3Options;
import org.hintfs.backing.s3.S3Source;

/**
 * Opens a source from what a user types: a path, {@code file://...}, {@code s3://bucket/prefix}.
 */
public final class Sources {
  private Sources() {}

  /** Opens the source named by {@code spec} with default S3 options. */
  public static DatasetSource open(String spec) throws IOException {
    return open(spec, S3Options.defaults());
  }

  /** Opens the source named by {@code spec}; throws with a message fit for one line of output. */
  public static DatasetSource open(String spec, S3Options s3) throws IOException {
    if (spec.startsWith("s3://")) {
      return S3Source.open(spec, s3);
    }
    if (spec.contains("://") && !spec.startsWith("file://")) {
      throw new IllegalArgumentException(
          "unknown source scheme in '"
              + spec
              + "': use a directory, file:///path or s3://bucket/prefix");
    }
    return LocalDirSource.fromSpec(spec);
  }
}
