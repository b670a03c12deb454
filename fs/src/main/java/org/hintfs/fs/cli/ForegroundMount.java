package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.hintfs.backing.DatasetSource;
import org.hintfs.backing.InMemorySource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.Sizes;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.fuse.HintFuse;
import org.hintfs.fs.mount.Mount;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.store.CacheDirectory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code hintfs mount --foreground}: opens the source, the cache and the catalog, builds the mount
 * and serves it until it is unmounted (the daemon runs this too).
 */
final class ForegroundMount {
  private static final Logger log = LoggerFactory.getLogger(ForegroundMount.class);

  private ForegroundMount() {}

  static int run(MountCommand c, Path mp) throws IOException {
    Daemon.detachFromTerminal(c.daemonized);
    DatasetSource src = c.openSource();
    if (src instanceof org.hintfs.backing.s3.S3Source s3) {
      log.info("source: {}", s3.summary());
    }
    if (c.preloadIntoHeap) {
      src = InMemorySource.copyOf(src);
    }
    if (c.sourceLatencyMs > 0) {
      src = new org.hintfs.backing.FaultInjectingSource(src).latency(c.sourceLatencyMs);
    }
    Path dir = c.noDiskCache || c.preloadIntoHeap ? null : c.resolvedCacheDir(src);
    CacheDirectory claimed = null;
    if (dir != null) {
      try {
        claimed = CacheDirectory.claim(dir, src.describe(), mp);
      } catch (IOException e) {
        throw new UserError(e.getMessage());
      }
    }
    MountConfig config =
        MountConfig.builder(c.source, mp)
            .cache(dir, c.cacheSize)
            .ramCacheBytes(Sizes.parse(c.ramCache, 0))
            .pageCacheReach(c.pageCacheReachBytes())
            .writeQueueBytes(c.writeQueueBytes())
            .cacheMinFree(org.hintfs.fs.store.MinFree.parse(c.cacheMinFree))
            .blockSize(MountConfig.parseBlockSize(c.blockSize))
            .policy(c.policy)
            .fuse(c.debugFuse, c.fuseOptions)
            .tracePath(c.trace == null ? null : c.trace.toAbsolutePath())
            .prefetchWindow(c.prefetchWindow)
            .fetches(c.maxFetches)
            .detectOrder(!c.noDetectOrder)
            .cluster(c.clusterConfig())
            .build();
    Catalog catalog = catalogFor(src, dir, c.reuseListing);
    HintFs fs;
    try {
      fs = Mount.create(src, catalog, config);
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    log.info(
        "cache: {} at {}, capacity {} bytes, policy {}",
        fs.cache().storeHealth(),
        dir,
        fs.cache().index().capacityBytes(),
        fs.cache().index().policyName());
    org.hintfs.fs.metrics.MetricsServer metrics = null;
    if (c.metricsPort != null) {
      Object[] a = c.metricsAddress();
      try {
        metrics = org.hintfs.fs.metrics.MetricsServer.start(fs, (String) a[0], (Integer) a[1]);
      } catch (IOException e) {
        throw new UserError("cannot serve metrics on " + a[0] + ":" + a[1] + ": " + e.getMessage());
      }
      log.info("metrics at http://{}:{}/metrics", a[0], metrics.port());
    }
    HintFuse fuse = new HintFuse(fs, c.owners.ownership());
    String[] opts = fuseArgs(config, src.describe(), c.fuseMaxThreads());
    log.info("mounting at {} with {}", mp, String.join(" ", opts));
    try {
      if (!c.noWarmUp) {
        org.hintfs.fs.serve.WarmUp.start(
            fs, mp, () -> Mounts.typeAt(mp).filter("fuse.hintfs"::equals).isPresent());
      }
      fuse.serve(mp, opts, c.fuseThreads, c.fuseMaxThreads());
    } catch (IllegalStateException e) {
      throw new UserError("mount at " + mp + " failed: " + e.getMessage() + " (see above)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (metrics != null) {
        metrics.close();
      }
      try {
        fs.close();
        fs.cache().close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      src.close();
      if (claimed != null) {
        claimed.close();
      }
    }
    log.info("unmounted {}", mp);
    return 0;
  }

  /**
   * The catalog to serve: the persisted one with {@code --reuse-listing}, else a fresh listing
   * (saved beside the cache for next time); if listing fails, the persisted one with a warning.
   */
  private static Catalog catalogFor(DatasetSource src, Path dir, boolean reuseListing)
      throws IOException {
    Path saved = dir == null ? null : dir.resolve("catalog.bin");
    if (reuseListing && saved != null && Files.exists(saved)) {
      try {
        Catalog c = Catalog.load(saved, src.describe());
        log.info("using the saved listing {} ({} files); not re-listing", saved, c.fileCount());
        return c;
      } catch (IOException e) {
        log.warn("cannot use the saved listing, listing the source: {}", e.getMessage());
      }
    }
    long t0 = System.nanoTime();
    Catalog catalog;
    try {
      catalog = Mount.listCatalog(src);
    } catch (IOException e) {
      if (saved != null && Files.exists(saved)) {
        log.warn(
            "listing {} failed ({}); serving the listing saved at the last mount",
            src.describe(),
            e);
        return Catalog.load(saved, src.describe());
      }
      throw new UserError("listing " + src.describe() + " failed: " + e.getMessage());
    }
    log.info(
        "listed {}: {} files, {} bytes, {} directories in {} ms (catalog {} bytes of heap)",
        src.describe(),
        catalog.fileCount(),
        catalog.totalBytes(),
        catalog.directoryCount(),
        (System.nanoTime() - t0) / 1_000_000,
        catalog.heapBytes());
    if (saved != null) {
      try {
        catalog.save(saved, src.describe());
      } catch (IOException e) {
        log.warn("cannot save the listing to {}: {}", saved, e.getMessage());
      }
    }
    return catalog;
  }

  /**
   * libfuse's options for a mount served by up to {@code maxThreads} request threads.
   *
   * <p>{@code max_background}: the kernel sends at most this many asynchronous requests at once
   * (default 12), and a page-cache read of a FUSE file is one (libfuse's {@code async_read}, on by
   * default). With the default, 12 reads of uncached files waiting on a hung source held every slot
   * and the reads of cached files queued in the kernel behind them (hung-source-bench: 0.1 files/s
   * with the source hung against 6,300 answering, slowest 79 s). As many slots as request threads
   * let every read reach a thread; the congestion threshold (when the kernel stops reading ahead)
   * stays at its usual three quarters of it. An {@code -o max_background=} of the user's comes
   * later and wins.
   */
  static String[] fuseArgs(MountConfig config, String description, int maxThreads) {
    long ttl = config.metadataTimeout().toSeconds();
    List<String> o = new ArrayList<>();
    // A comma would end the option: libfuse reads "\," as a literal one.
    o.add("fsname=hintfs:" + description.replace("\\", "\\\\").replace(",", "\\,"));
    o.add("subtype=hintfs");
    o.add("entry_timeout=" + ttl);
    o.add("attr_timeout=" + ttl);
    o.add("negative_timeout=" + ttl);
    o.add("kernel_cache");
    o.add("max_read=131072");
    o.add("max_background=" + maxThreads);
    o.add("congestion_threshold=" + Math.max(1, maxThreads * 3 / 4));
    if (Preflight.isRoot()) {
      // Root mounts directly; for others fusermount3 mounts and rejects this libfuse2 option.
      o.add("nonempty");
    }
    o.addAll(config.extraFuseOptions());
    return config.fuseDebug()
        ? new String[] {"-d", "-o", String.join(",", o)}
        : new String[] {"-o", String.join(",", o)};
  }
}
