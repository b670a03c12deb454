package org.hintfs.fs.serve;

import java.io.IOException;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.admin.AdminOps;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.prefetch.OwedPrefetch;
import org.hintfs.fs.prefetch.Prefetcher;
import org.hintfs.fs.store.TieredCache;

/**
 * The mount's background fetchers, built from its configuration: the prefetcher that runs ahead of
 * every stream, the owed samples' prefetch (substitution), an admin's prefetch and pins. Each
 * records its failures in the mount's error table and never fails a read.
 */
public record Workers(Prefetcher prefetcher, OwedPrefetch owedPrefetch, AdminOps admin)
    implements AutoCloseable {
  /** Concurrent fetches of the samples substitution owes the trainer. */
  static final int OWED_PREFETCH_THREADS = 4;

  /** The most of the cache the owed samples may hold at once. */
  static final double OWED_SHARE = 0.25;

  /** Concurrent fetches of an admin's prefetch or pin. */
  static final int ADMIN_PREFETCH_THREADS = 16;

  public Workers(
      Catalog catalog,
      TieredCache cache,
      HintState hints,
      ErrorTable errors,
      MountConfig config,
      org.hintfs.fs.cluster.ClusterPeerTier cluster) {
    this(
        new Prefetcher(
            hints.streams()::active,
            config.prefetchWindow(),
            config.prefetchWindowBytes(),
            config.prefetchThreads(),
            cache::isNear,
            catalog::size,
            id -> {
              try {
                cache.prefetch(id);
              } catch (IOException | RuntimeException e) {
                errors.record("prefetch", catalog.path(id), e);
              }
            },
            cacheFiles(cache, catalog, cluster)),
        new OwedPrefetch(
            cache,
            catalog::size,
            (id, e) -> errors.record("owed prefetch", catalog.path(id), e),
            OWED_PREFETCH_THREADS,
            OWED_SHARE),
        new AdminOps(
            cache,
            catalog,
            (path, e) -> errors.record("prefetch", path, e),
            config.cacheDir(),
            ADMIN_PREFETCH_THREADS));
  }

  /**
   * How many files of the catalog's mean size the prefetch windows may stage into (the capacity can
   * drop): the cache; in a cluster, the room this node's homed samples leave, since what it stages
   * for its readers are guests and guests never take a homed sample's room (with the whole cache as
   * the budget, the windows of a node's ranks outgrew that room and evicted each other's staged
   * samples before they were read).
   */
  private static java.util.function.LongSupplier cacheFiles(
      TieredCache cache, Catalog catalog, org.hintfs.fs.cluster.ClusterPeerTier cluster) {
    long mean = Math.max(1, catalog.totalBytes() / Math.max(1, catalog.fileCount()));
    if (cluster == null) {
      return () -> cache.index().capacityBytes() / mean;
    }
    return () -> {
      long room = cache.index().capacityBytes() - cluster.homed(catalog)[1];
      return Math.max(1, room / mean); // 0 would mean no limit
    };
  }

  @Override
  public void close() {
    prefetcher.close();
    owedPrefetch.close();
    admin.close();
  }
}
