package org.hintfs.fs.metrics;

import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.serve.MountStats;
import org.hintfs.fs.store.CacheStats;
import org.hintfs.fs.store.TieredCache;

/**
 * The mount's flat counters and gauges, each written once: its key in {@code .hintfs/stats}, its
 * Prometheus name (prefixed {@code hintfs_}), its help text, its kind and where its value comes
 * from. {@link StatsReport} and {@link MetricsServer} both render from this list; {@code hintfs
 * status} reads the stats keys. Labelled metrics (hits by tier, errors by errno, the source's own
 * counters) and the latency histograms are rendered where they are made.
 */
final class MountCounters {
  private MountCounters() {}

  /** A Prometheus counter only ever grows; a gauge goes up and down. */
  enum Kind {
    COUNTER,
    GAUGE
  }

  /**
   * One figure.
   *
   * @param json its key in the stats JSON, or null (metrics only)
   * @param metric its Prometheus name without {@code hintfs_}, or null (stats only)
   */
  record Counter(String json, String metric, String help, Kind kind, Supplier<Number> value) {}

  private static Counter counter(String json, String metric, String help, Supplier<Number> v) {
    return new Counter(json, metric, help, Kind.COUNTER, v);
  }

  private static Counter gauge(String json, String metric, String help, Supplier<Number> v) {
    return new Counter(json, metric, help, Kind.GAUGE, v);
  }

  /** Every flat figure of {@code fs}, in the order the stats JSON shows them. */
  static List<Counter> of(HintFs fs) {
    MountStats ms = fs.stats();
    TieredCache c = fs.cache();
    CacheStats cs = c.stats();
    var pf = fs.prefetcher();
    var h = fs.hints();
    List<Counter> all = new java.util.ArrayList<>(flat(fs, ms, c, cs, pf, h));
    var peers = fs.cluster();
    if (peers != null) {
      // Metrics only: the stats JSON has them in its "cluster" section.
      var member = peers.member();
      all.add(
          gauge(
              null,
              "cluster_members",
              "members in this node's view",
              () -> member.members().size()));
      all.add(counter(null, "cluster_view_changes", "membership views seen", member::viewChanges));
      all.add(
          counter(
              null, "cluster_rebalances", "topologies of the homes installed", member::rebalances));
      all.add(
          gauge(
              null,
              "cluster_rebalancing",
              "1 while the homes are being moved",
              () -> member.rebalancing() ? 1 : 0));
      all.add(
          gauge(
              null,
              "cluster_guest_files",
              "cached files another member is home to",
              c::guestFiles));
      all.add(
          counter(
              null,
              "cluster_peer_reads",
              "files or blocks received from their home",
              peers::fromPeers));
      all.add(
          counter(null, "cluster_peer_bytes", "bytes received from homes", peers::bytesFromPeers));
      all.add(
          counter(
              null,
              "cluster_home_source_reads",
              "misses read from the source by this node as their home",
              peers::homedHere));
      all.add(
          counter(
              null,
              "cluster_former_home_reads",
              "units this node, their home, got from the member that was their home before",
              peers::fromFormerHomes));
      all.add(
          counter(
              null,
              "cluster_former_home_misses",
              "asks of a former home that held nothing, failed or was late (the source served)",
              peers::formerHomeMisses));
      all.add(
          counter(
              null,
              "cluster_peer_failures",
              "asks of a home that failed (the source served them)",
              peers::peerFailures));
      all.add(
          counter(
              null,
              "cluster_peer_hedged",
              "asks of a home given up at its hedge bound (the source served them)",
              peers::peerHedged));
      all.add(
          counter(
              null,
              "cluster_peer_skipped",
              "misses read from the source without asking a lagging or failing home",
              peers::peerSkipped));
      all.add(
          counter(
              null,
              "cluster_served_to_peers",
              "files or blocks served to other members",
              fs.home()::served));
      all.add(
          counter(
              null,
              "cluster_bytes_served_to_peers",
              "bytes served to other members",
              fs.home()::bytesServed));
    }
    return all;
  }

  private static List<Counter> flat(
      HintFs fs,
      MountStats ms,
      TieredCache c,
      CacheStats cs,
      org.hintfs.fs.prefetch.Prefetcher pf,
      org.hintfs.fs.control.HintState h) {
    return List.of(
        gauge("open_handles", "open_handles", "open files", fs::openHandles),
        counter("opens", "opens", "opens of dataset files", ms.opens::sum),
        counter("reads", "reads", "reads answered (kernel requests)", ms.reads::sum),
        counter("bytes_read", "read_bytes", "bytes returned to readers", ms.bytesRead::sum),
        counter("source_reads", null, "requests sent to the source", c::sourceRequests),
        counter(
            "source_bytes",
            "source_bytes",
            "bytes fetched from the source",
            cs.bytesFromSource::sum),
        gauge(
            "fetches_in_flight", "fetches_in_flight", "source fetches running", c::fetchesInFlight),
        gauge(
            "miss_fetches_pending",
            "miss_fetches_pending",
            "missed files whose fetch off the request threads is queued or running",
            fs::missFetchesPending),
        gauge(
            "fetches_peak",
            "fetches_peak",
            "the most source fetches that ran at once so far",
            c::fetchesPeak),
        gauge(
            "fetches_limit",
            "fetches_limit",
            "source fetches allowed at once (--max-fetches)",
            c::fetchLimit),
        gauge(
            "fuse_threads",
            "fuse_threads",
            "threads serving kernel requests now",
            () -> fs.requestThreads().alive()),
        gauge(
            "fuse_readers",
            "fuse_readers",
            "threads the load asks for to read kernel requests (others wait on the source)",
            () -> fs.requestThreads().readers()),
        counter(
            "fuse_stalls",
            "fuse_stalls",
            "times every reading thread was held by a request that did not say it would wait (one"
                + " more was added)",
            () -> fs.requestThreads().stalls()),
        gauge(
            "fuse_threads_peak",
            "fuse_threads_peak",
            "the most threads that served kernel requests at once",
            () -> fs.requestThreads().peak()),
        gauge(
            "fuse_threads_max",
            "fuse_threads_max",
            "threads allowed to serve kernel requests (--fuse-max-threads)",
            () -> fs.requestThreads().max()),
        counter(
            "fuse_threads_at_max",
            "fuse_threads_at_max",
            "requests that found every thread busy at --fuse-max-threads (they waited in the"
                + " kernel)",
            () -> fs.requestThreads().atMax()),
        counter(
            "fetches_coalesced", null, "reads that joined a fetch under way", c::coalescedFetches),
        counter("hits", null, "units served from the cache", cs::hits),
        counter("ram_hits", null, "units served from the RAM tier", cs.ramHits::sum),
        counter("disk_hits", null, "units served from the disk tier", cs.diskHits::sum),
        counter("misses", "cache_misses", "files or blocks fetched from the source", c::misses),
        counter(
            "promoted_to_ram",
            "promoted_to_ram",
            "files on disk read into RAM ahead of their open",
            cs.promotions::sum),
        counter(
            "disk_read_ahead",
            "disk_read_ahead",
            "files on disk whose pages were read ahead of their open (MADV_WILLNEED)",
            cs.diskReadAhead::sum),
        counter("open_hits", "open_hits", "opens served without the source", cs.openHits::sum),
        counter("open_misses", "open_misses", "opens that needed the source", cs.openMisses::sum),
        counter(
            "bytes_from_cache",
            "cache_bytes",
            "bytes served from the cache",
            cs.bytesFromCache::sum),
        counter("admitted", "admitted", "files or blocks stored", cs.admitted::sum),
        gauge(
            "write_queue_bytes",
            "write_queue_bytes",
            "fetched bytes waiting for the disk cache's writer",
            c::writeQueuedBytes),
        gauge(
            "write_queue_limit",
            "write_queue_limit_bytes",
            "the most fetched bytes that wait for the disk cache's writer (--write-queue)",
            c::writeQueueLimit),
        counter(
            "write_queue_full",
            "write_queue_full",
            "fetched files or blocks served without being stored: the disk writer's queue was full",
            cs.writeQueueFull::sum),
        gauge(
            "write_queue_owed_bytes",
            "write_queue_owed_bytes",
            "blocks of large files the disk writer refused for a full queue, held outside the heap"
                + " until it has room (at most --write-queue)",
            c::owedBytes),
        counter(
            "write_queue_repaid",
            "write_queue_repaid",
            "blocks of large files refused for a full queue, then stored once the disk writer had"
                + " room",
            cs.writeQueueRepaid::sum),
        gauge(
            "cache_full_since",
            "cache_full_since_seconds",
            "when the disk cache stopped storing new files for a full disk (Unix seconds; 0: it"
                + " stores)",
            () -> c.index().fullSince() / 1000),
        counter(
            "cache_full_skipped",
            "cache_full_skipped",
            "fetched files or blocks not stored because the cache's disk was full (served all the"
                + " same)",
            cs.fullSkipped::sum),
        counter(
            "cache_full_skipped_bytes",
            "cache_full_skipped_bytes",
            "bytes of the files or blocks not stored for a full disk",
            cs.fullSkippedBytes::sum),
        counter("evictions", "evictions", "files evicted", cs.evictions::sum),
        counter(
            "corrupt_entries",
            "corrupt_entries",
            "cache entries dropped as corrupt",
            cs.corrupt::sum),
        counter(
            "stale_entries",
            "stale_entries",
            "cache entries of an older version dropped",
            cs.stale::sum),
        gauge(
            "cache_used_bytes",
            "cache_used_bytes",
            "bytes charged in the disk cache",
            c.index()::usedBytes),
        gauge(
            "cache_capacity_bytes",
            "cache_capacity_bytes",
            "disk cache capacity",
            c.index()::capacityBytes),
        gauge(
            "cached_files",
            "cached_files",
            "files with bytes in the disk cache",
            c.index()::cachedFiles),
        counter(
            "substitutions",
            "substitutions",
            "misses served by a substitute",
            h.substitution.substitutions::sum),
        counter(null, "hints_accepted", "control lines applied", h.accepted::sum),
        counter(null, "hints_rejected", "control lines refused", h.rejected::sum),
        counter(
            null,
            "prefetch_off_order_opens",
            "opens that were not where the predicted order expected them",
            pf.offOrder::sum),
        counter(null, "prefetched", "files fetched ahead of the reader", pf.prefetched::sum),
        counter(
            "read_ahead_blocks",
            "read_ahead_blocks",
            "blocks of large files fetched ahead of a sequential reader",
            fs::readAheadBlocks),
        counter(
            "prefetched_blocks",
            "prefetched_blocks",
            "blocks of large files fetched ahead of their reader by a hinted order",
            c.stats().blocksPrefetched::sum),
        counter(
            "page_reads",
            "page_reads",
            "reads of large files by random readers, served by pages",
            cs.pageReads::sum),
        counter(
            "page_hits",
            "page_hits",
            "pages of large files served to random readers from the disk tier",
            cs.pageHits::sum),
        counter(
            "pages_fetched",
            "pages_fetched",
            "pages of large files fetched from the source for random readers",
            cs.pagesFetched::sum),
        counter(
            "page_gets",
            "page_gets",
            "ranged GETs of pages for random readers' misses",
            cs.pageGets::sum),
        counter(
            "page_read_hits",
            "page_read_hits",
            "random readers' reads served wholly from stored pages",
            cs.pageReadHits::sum),
        counter(
            "pages_evicted",
            "pages_evicted",
            "pages of packed files evicted for a page needed sooner",
            cs.pagesEvicted::sum),
        gauge(
            "packed_files",
            "packed_files",
            "packed files whose samples and order a hint gave",
            () -> fs.packedPrefetcher().files()),
        counter(
            "packed_samples",
            "packed_samples",
            "samples of packed files read (with a packed hint)",
            cs.packedSamples::sum),
        counter(
            "packed_sample_hits",
            "packed_sample_hits",
            "samples of packed files read with no wait on the source",
            cs.packedSampleHits::sum),
        counter(
            "packed_prefetched",
            "packed_prefetched",
            "samples of packed files fetched ahead of their reader",
            fs.packedPrefetcher().fetched::sum),
        counter(
            "whole_file_fills",
            "whole_file_fills",
            "randomly read large files fetched whole in the background (the cache had room)",
            fs.fill().files::sum),
        counter(
            "whole_file_fill_blocks",
            "whole_file_fill_blocks",
            "blocks fetched by those fills",
            fs.fill().blocks::sum),
        counter(
            "pages_merged",
            "pages_merged",
            "stored pages dropped because their whole block was stored",
            cs.pagesMerged::sum),
        counter(
            "read_ahead_used",
            "read_ahead_used",
            "blocks read ahead that their reader then read",
            fs::readAheadUsed),
        counter(
            "read_ahead_dropped",
            "read_ahead_dropped",
            "blocks read ahead and dropped unread (a seek, a close)",
            fs::readAheadDropped),
        gauge(
            null,
            "epoch_coverage",
            "share of the dataset served in the last whole epoch (substitution lowers it)",
            () -> {
              var cov = h.substitution.coverage();
              var es = cov == null ? List.<org.hintfs.policy.Coverage.Epoch>of() : cov.epochs();
              return es.size() < 2 ? 0 : es.get(es.size() - 2).coverage();
            }),
        gauge(
            null,
            "prefetch_position",
            "the readers' positions in their predicted orders, summed over streams",
            () -> Arrays.stream(h.streams().active()).mapToLong(st -> st.order().position()).sum()),
        gauge(null, "streams", "live streams (ranks of jobs)", () -> h.streams().active().length),
        gauge(
            null,
            "prefetch_lag_files",
            "files of the prefetch window still being fetched",
            pf::filesInFlight),
        gauge(
            null,
            "prefetch_bytes_in_flight",
            "bytes of the prefetch window still being fetched",
            pf::bytesInFlight));
  }
}
