package org.hintfs.fs;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything a mount is configured with, in one immutable record; every default is here.
 *
 * @param source what the user named: a directory, {@code file://...}
 * @param mountpoint where the dataset appears
 * @param wholeObjectLimit files up to this size are fetched whole on their first read and served
 *     from memory for the life of the handle; larger ones (tar shards, videos) are read in ranges.
 *     8 MiB: 70x an ImageNet JPEG, small enough that 64 concurrent opens stay under 512 MiB.
 * @param metadataTimeout how long the kernel may cache entries and attributes: the dataset is
 *     immutable while mounted, so an hour; {@code hintfs refresh} re-lists
 * @param fuseDebug run libfuse with -d (every request logged)
 * @param extraFuseOptions further -o options passed through to libfuse
 */
public record MountConfig(
    String source,
    Path mountpoint,
    int wholeObjectLimit,
    Duration metadataTimeout,
    boolean fuseDebug,
    List<String> extraFuseOptions) {

  /** 8 MiB; see {@link #wholeObjectLimit()}. */
  public static final int DEFAULT_WHOLE_OBJECT_LIMIT = 8 << 20;

  /** One hour; see {@link #metadataTimeout()}. */
  public static final Duration DEFAULT_METADATA_TIMEOUT = Duration.ofHours(1);

  /** The defaults for a source and a mountpoint. */
  public static MountConfig defaults(String source, Path mountpoint) {
    return new MountConfig(
        source, mountpoint, DEFAULT_WHOLE_OBJECT_LIMIT, DEFAULT_METADATA_TIMEOUT, false, List.of());
  }
}
