package org.hintfs.fs;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything a mount is configured with, in one immutable record; every default is here.
 *
 * @param source what the user named: a directory, {@code file://...}
 * @param mountpoint where the dataset appears
 * @param cacheDir the LMDB cache directory, or null for no disk cache
 * @param cacheSize the disk cache's capacity: bytes with a unit ({@code 20G}) or a share of the
 *     dataset ({@code 10%}); clamped to 90% of what the cache directory's disk can hold
 * @param ramCacheBytes the RAM tier's capacity in bytes
 * @param policy the cache policy's registered name
 * @param wholeObjectLimit files up to this size are fetched and cached whole; larger ones (tar
 *     shards, videos) in blocks of {@code blockSize}
 * @param blockSize the unit of caching for large files
 * @param maxFetches source requests in flight at most
 * @param metadataTimeout how long the kernel may cache entries and attributes
 * @param fuseDebug run libfuse with -d (every request logged)
 * @param extraFuseOptions further -o options passed through to libfuse
 * @param tracePath where {@code --trace} and {@code trace on} record opens, or null
 * @param prefetchWindow files fetched ahead of the reader when the order is known
 * @param prefetchWindowBytes at most this many bytes fetched ahead
 * @param detectOrder recognise PyTorch samplers' orders from the reads of streams with no hint
 * @param writeQueueBytes the most fetched bytes waiting for the disk writer
 * @param cluster the job's cluster this mount is a member of, or null for a mount of its own
 * @param pageCacheReach the bytes read through the mount within which a file it served may still be
 *     in the kernel's page cache (not substituted for); negative: the memory available
 * @param cacheMinFree the free-space floor of the cache directory's disk ({@code --cache-min-free})
 */
public record MountConfig(
    String source,
    Path mountpoint,
    Path cacheDir,
    String cacheSize,
    long ramCacheBytes,
    String policy,
    int wholeObjectLimit,
    int blockSize,
    int maxFetches,
    Duration metadataTimeout,
    boolean fuseDebug,
    List<String> extraFuseOptions,
    Path tracePath,
    int prefetchWindow,
    long prefetchWindowBytes,
    boolean detectOrder,
    long writeQueueBytes,
    org.hintfs.fs.cluster.ClusterConfig cluster,
    long pageCacheReach,
    org.hintfs.fs.store.MinFree cacheMinFree) {

  /**
   * 256 files ahead: at 1,000 files/s per rank, a quarter of a second of reading, enough to hide
   * tens of milliseconds of latency with room for workers reading out of order.
   */
  public static final int DEFAULT_PREFETCH_WINDOW = 256;

  /**
   * True for a read-only mount ({@code --read-only}, {@code -o ro}): the superblock is read-only,
   * so the kernel does not mark a file's atime stale after a READ and ask GETATTR on its next stat;
   * the control file refuses writes.
   */
  public boolean readOnly() {
    return extraFuseOptions.contains("ro");
  }

  /** 256 MiB: the window's bytes, small beside the page cache and the disk cache. */
  public static final long DEFAULT_PREFETCH_WINDOW_BYTES = 256L << 20;

  /** Prefetch threads: one per source read in flight, so as many as {@link #maxFetches}. */
  public int prefetchThreads() {
    return maxFetches;
  }

  /** The whole dataset: cache everything the disk allows. */
  public static final String DEFAULT_CACHE_SIZE = "100%";

  /** 512 MiB: room for ~4,700 ImageNet JPEGs just fetched, small beside a trainer's memory. */
  public static final long DEFAULT_RAM_CACHE = 512L << 20;

  /** {@link #DEFAULT_RAM_CACHE} as the option takes it. */
  public static final String DEFAULT_RAM_CACHE_TEXT = "512M";

  /**
   * {@code --write-queue auto}: a thirty-second of the machine's memory (or of the daemon's cgroup
   * limit, if lower) and at most an eighth of the heap (small payloads wait on it), between 128 MiB
   * and 512 MiB. 512 MiB from 16 GiB of memory: there 8 readers of 8 shards on 2 cores had every
   * block stored once, where 128 MiB fetched 8-17% of them twice (BENCHMARKS.md, issue 38).
   */
  public static long autoWriteQueueBytes() {
    return autoWriteQueueBytes(machineMemory(), Runtime.getRuntime().maxMemory());
  }

  /** {@link #autoWriteQueueBytes()} for this much memory and heap (0: memory unknown). */
  public static long autoWriteQueueBytes(long memory, long maxHeap) {
    long min = org.hintfs.fs.store.LmdbStore.DEFAULT_QUEUE_LIMIT;
    long max = 512L << 20;
    long q = Math.min(memory > 0 ? memory / 32 : min, maxHeap / 8);
    return Math.max(min, Math.min(max, q));
  }

  /** MemTotal, or the cgroup's (v2) memory limit if lower; 0 if neither can be read. */
  static long machineMemory() {
    return org.hintfs.fs.concurrent.MachineMemory.withinCgroup("MemTotal");
  }

  /** Uses what the hints allow: clairvoyant, importance, or frequency. */
  public static final String DEFAULT_POLICY = "auto";

  /** 8 MiB: 70x an ImageNet JPEG, small enough that 64 concurrent opens stay under 512 MiB. */
  public static final int DEFAULT_WHOLE_OBJECT_LIMIT = 8 << 20;

  /**
   * 8 MiB: one source request per block, as mountpoint-s3's parts (8 MiB) and s3fs's (10 MB); 64
   * kernel reads of 128 KiB. 4 MiB blocks (the default before) cost S3Proxy a third more CPU per
   * GiB on a first read and read it at 0.8x (BENCHMARKS.md, issue 38); a random reader fetches a
   * whole block per read it lands in ({@code --block-size 1M} for HDF5-like lookups).
   */
  public static final int DEFAULT_BLOCK_SIZE = 8 << 20;

  /** The smallest {@code --block-size}. */
  public static final int MIN_BLOCK_SIZE = 1 << 20;

  /**
   * The largest {@code --block-size}: under glibc's mmap threshold as hintfs sets it (32 MiB), so
   * that the LMDB writer's buffer for a block is reused, not mapped afresh.
   */
  public static final int MAX_BLOCK_SIZE = 16 << 20;

  /**
   * {@code --block-size}: a power of two from {@link #MIN_BLOCK_SIZE} to {@link #MAX_BLOCK_SIZE}.
   *
   * @throws IllegalArgumentException with the line to show the user
   */
  public static int parseBlockSize(String text) {
    long b;
    try {
      b = Sizes.parse(text, 1);
    } catch (IllegalArgumentException e) {
      b = 0;
    }
    if (b < MIN_BLOCK_SIZE || b > MAX_BLOCK_SIZE || Long.bitCount(b) != 1 || text.endsWith("%")) {
      throw new IllegalArgumentException(
          "--block-size must be a power of two from 1M to 16M (e.g. 8M), not '" + text + "'");
    }
    return (int) b;
  }

  /**
   * 64 source reads in flight (the readers' misses and the prefetcher's together; each prefetch
   * thread holds one): 10 ms of latency at 6,400 files/s, 50 ms at 1,280. {@code --max-fetches 256}
   * serves a source 50 ms away 2.5-3x faster; it is not the default before more runs than this
   * stop's stand behind it (BENCHMARKS.md, "Source reads in flight").
   */
  public static final int DEFAULT_MAX_FETCHES = 64;

  /** One hour: the dataset is immutable while mounted; {@code hintfs refresh} re-lists. */
  public static final Duration DEFAULT_METADATA_TIMEOUT = Duration.ofHours(1);

  /** The defaults for a source and a mountpoint, with no disk cache. */
  public static MountConfig defaults(String source, Path mountpoint) {
    return builder(source, mountpoint).build();
  }

  /** A builder holding every default, for a source and a mountpoint. */
  public static Builder builder(String source, Path mountpoint) {
    return new Builder(source, mountpoint);
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    Builder b = new Builder(source, mountpoint);
    b.cacheDir = cacheDir;
    b.cacheSize = cacheSize;
    b.ramCacheBytes = ramCacheBytes;
    b.pageCacheReach = pageCacheReach;
    b.policy = policy;
    b.wholeObjectLimit = wholeObjectLimit;
    b.blockSize = blockSize;
    b.maxFetches = maxFetches;
    b.metadataTimeout = metadataTimeout;
    b.fuseDebug = fuseDebug;
    b.extraFuseOptions = extraFuseOptions;
    b.tracePath = tracePath;
    b.prefetchWindow = prefetchWindow;
    b.prefetchWindowBytes = prefetchWindowBytes;
    b.detectOrder = detectOrder;
    b.writeQueueBytes = writeQueueBytes;
    b.cluster = cluster;
    b.cacheMinFree = cacheMinFree;
    return b;
  }

  /** A copy with another cache directory and capacity. */
  public MountConfig withCache(Path dir, String size) {
    return toBuilder().cache(dir, size).build();
  }

  /** A copy with other object and block sizes. */
  public MountConfig withUnits(int wholeObjectLimit, int blockSize) {
    return toBuilder().units(wholeObjectLimit, blockSize).build();
  }

  /** A copy with another RAM tier capacity (0: none). */
  public MountConfig withRamCache(long bytes) {
    return toBuilder().ramCacheBytes(bytes).build();
  }

  /** Builds a {@link MountConfig}; every field starts at its default. */
  public static final class Builder {
    private final String source;
    private final Path mountpoint;
    private Path cacheDir;
    private String cacheSize = DEFAULT_CACHE_SIZE;
    private long ramCacheBytes = DEFAULT_RAM_CACHE;
    private long pageCacheReach = -1;
    private String policy = DEFAULT_POLICY;
    private int wholeObjectLimit = DEFAULT_WHOLE_OBJECT_LIMIT;
    private int blockSize = DEFAULT_BLOCK_SIZE;
    private int maxFetches = DEFAULT_MAX_FETCHES;
    private Duration metadataTimeout = DEFAULT_METADATA_TIMEOUT;
    private boolean fuseDebug;
    private List<String> extraFuseOptions = List.of();
    private Path tracePath;
    private int prefetchWindow = DEFAULT_PREFETCH_WINDOW;
    private long prefetchWindowBytes = DEFAULT_PREFETCH_WINDOW_BYTES;
    private boolean detectOrder = true;
    private long writeQueueBytes = org.hintfs.fs.store.LmdbStore.DEFAULT_QUEUE_LIMIT;
    private org.hintfs.fs.cluster.ClusterConfig cluster;
    private org.hintfs.fs.store.MinFree cacheMinFree = org.hintfs.fs.store.MinFree.DEFAULT;

    private Builder(String source, Path mountpoint) {
      this.source = source;
      this.mountpoint = mountpoint;
    }

    /** The disk tier's directory (null: none) and capacity. */
    public Builder cache(Path dir, String size) {
      this.cacheDir = dir;
      this.cacheSize = size;
      return this;
    }

    public Builder ramCacheBytes(long bytes) {
      this.ramCacheBytes = bytes;
      return this;
    }

    public Builder policy(String name) {
      this.policy = name;
      return this;
    }

    /** {@code --block-size}: large files are cached in blocks of this many bytes. */
    public Builder blockSize(int bytes) {
      this.blockSize = bytes;
      return this;
    }

    /** Files up to {@code wholeObjectLimit} are cached whole, larger ones in blocks. */
    public Builder units(int wholeObjectLimit, int blockSize) {
      this.wholeObjectLimit = wholeObjectLimit;
      this.blockSize = blockSize;
      return this;
    }

    public Builder fuse(boolean debug, List<String> extraOptions) {
      this.fuseDebug = debug;
      this.extraFuseOptions = List.copyOf(extraOptions);
      return this;
    }

    public Builder tracePath(Path p) {
      this.tracePath = p;
      return this;
    }

    public Builder prefetchWindow(int files) {
      this.prefetchWindow = files;
      return this;
    }

    /**
     * Source requests in flight at most, for the readers' misses and the prefetcher together
     * ({@code --max-fetches}): both the fetch permits and the prefetch threads.
     */
    public Builder fetches(int n) {
      this.maxFetches = n;
      return this;
    }

    public Builder detectOrder(boolean on) {
      this.detectOrder = on;
      return this;
    }

    /** The most fetched bytes waiting for the disk writer ({@code --write-queue}). */
    public Builder writeQueueBytes(long bytes) {
      this.writeQueueBytes = bytes;
      return this;
    }

    /**
     * The page cache's reach in bytes ({@code --page-cache-reach}); negative: the memory available.
     */
    public Builder pageCacheReach(long bytes) {
      this.pageCacheReach = bytes;
      return this;
    }

    /** The free-space floor of the cache directory's disk ({@code --cache-min-free}). */
    public Builder cacheMinFree(org.hintfs.fs.store.MinFree floor) {
      this.cacheMinFree = floor;
      return this;
    }

    /** Join this cluster (null: none). */
    public Builder cluster(org.hintfs.fs.cluster.ClusterConfig c) {
      this.cluster = c;
      return this;
    }

    public MountConfig build() {
      return new MountConfig(
          source,
          mountpoint,
          cacheDir,
          cacheSize,
          ramCacheBytes,
          policy,
          wholeObjectLimit,
          blockSize,
          maxFetches,
          metadataTimeout,
          fuseDebug,
          extraFuseOptions,
          tracePath,
          prefetchWindow,
          prefetchWindowBytes,
          detectOrder,
          writeQueueBytes,
          cluster,
          pageCacheReach,
          cacheMinFree);
    }
  }
}
