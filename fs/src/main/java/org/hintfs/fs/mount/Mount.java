package org.hintfs.fs.mount;

import java.io.IOException;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.Sizes;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.catalog.CatalogBuilder;
import org.hintfs.fs.cluster.ClusterMember;
import org.hintfs.fs.cluster.ClusterPeerTier;
import org.hintfs.fs.cluster.ClusterRefusedException;
import org.hintfs.fs.cluster.HomeServer;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.metrics.StatsReport;
import org.hintfs.fs.serve.ErrorTable;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.serve.Workers;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.fs.virtual.VirtualFile;
import org.hintfs.policy.Policies;

/**
 * The composition root: builds a mount's parts from its configuration (the catalog of a source, the
 * cache sized against the dataset and the disk, the hint state, the cluster, the background
 * workers, the filesystem and its stats) and wires them ({@link MountEffects}). Nothing else builds
 * or wires a mount's parts.
 */
public final class Mount {
  private Mount() {}

  /** How often the owners of streams are checked: a dead rank's prefetching stops within 1 s. */
  static final long REAP_EVERY_MS = 1000;

  /**
   * A filesystem with the cache the config describes: its disk tier in {@code config.cacheDir()}
   * (none if null), capacity resolved against the dataset's size.
   */
  public static HintFs create(DatasetSource source, Catalog catalog, MountConfig config) {
    long footprint = TieredCache.footprint(catalog, config.wholeObjectLimit(), config.blockSize());
    long capacity = config.cacheDir() == null ? 0 : Sizes.parse(config.cacheSize(), footprint);
    String basis =
        config.cacheDir() == null ? "no disk cache" : "--cache-size " + config.cacheSize();
    if (config.cacheDir() != null) {
      long room = diskRoomFor(config.cacheDir());
      if (room < capacity) {
        capacity = room;
        basis =
            "90% of what the disk under "
                + config.cacheDir()
                + " can hold ("
                + (room >> 20)
                + " MiB; --cache-size "
                + config.cacheSize()
                + " asked for more)";
      }
    }
    HintState hints =
        new HintState(
            catalog.entryCount(),
            new org.hintfs.fs.stream.Streams(
                org.hintfs.fs.stream.ProcessTree.PROC, config.prefetchWindow(), REAP_EVERY_MS));
    // In a cluster: join first (a refusal leaves nothing behind), then build the cache whose
    // misses go to their homes, then let the home server answer from it.
    ClusterPeerTier peers = null;
    HomeServer home = null;
    if (config.cluster() != null) {
      // A home keeps samples for every rank of the job: its policy's clock is the job's.
      hints.streams().countWholeJobs(true);
      home = new HomeServer(catalog);
      try {
        peers =
            new ClusterPeerTier(
                ClusterMember.join(
                    config.cluster(),
                    // The block size too: members cut in other sizes would serve other bytes.
                    source.describe()
                        + " ("
                        + catalog.fingerprint()
                        + ", blocks of "
                        + (config.blockSize() >> 20)
                        + " MiB)",
                    home));
      } catch (ClusterRefusedException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      }
    }
    TieredCache cache =
        TieredCache.open(
            source,
            catalog,
            Policies.create(config.policy(), hints.context()),
            config.cacheDir(),
            new TieredCache.Config(
                capacity,
                basis,
                config.ramCacheBytes(),
                config.wholeObjectLimit(),
                config.blockSize(),
                config.maxFetches(),
                config.writeQueueBytes()),
            peers);
    cache.index().keepFree(config.cacheMinFree());
    if (home != null) {
      home.serveFrom(cache);
    }
    ErrorTable backgroundErrors = new ErrorTable();
    Workers workers = new Workers(catalog, cache, hints, backgroundErrors, config, peers);
    HintFs fs =
        new HintFs(source, catalog, config, cache, hints, peers, home, workers, backgroundErrors);
    fs.renderStatsWith(new StatsReport(fs)::json);
    MountEffects.wire(fs);
    if (config.tracePath() != null) {
      try {
        fs.setTrace(config.tracePath());
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot write the trace " + config.tracePath() + ": " + e.getMessage());
      }
    }
    return fs;
  }

  /**
   * 90% of what the cache directory's disk can hold: its free space plus what the cache already
   * occupies, and never more than 90% of the disk's size (10% left for LMDB's own pages and for the
   * other users of that disk). Computed on every mount, so a disk that filled up or grew since the
   * last one is seen.
   */
  static long diskRoomFor(java.nio.file.Path dir) {
    try {
      java.nio.file.Files.createDirectories(dir);
      java.nio.file.FileStore disk = java.nio.file.Files.getFileStore(dir);
      java.nio.file.Path db = dir.resolve("data.mdb");
      // LMDB writes its file with pwrite, page after page (no MDB_WRITEMAP): its length is what it
      // holds on disk, to the page.
      long held = java.nio.file.Files.exists(db) ? java.nio.file.Files.size(db) : 0;
      long room = Math.min(disk.getUsableSpace() + held, disk.getTotalSpace());
      return (long) (room * 0.9);
    } catch (IOException e) {
      return Long.MAX_VALUE; // the store will report the real problem when it opens
    }
  }

  /**
   * Lists a source into a catalog, leaving out the source's own {@code .hintfs} at the root: that
   * name is reserved for the control files and shadows whatever the source has there.
   */
  public static Catalog listCatalog(DatasetSource source) throws IOException {
    CatalogBuilder b = new CatalogBuilder();
    source.list(
        o -> {
          if (!VirtualFile.isReservedPath(o.path())) {
            b.add(o);
          }
        });
    return b.build();
  }
}
