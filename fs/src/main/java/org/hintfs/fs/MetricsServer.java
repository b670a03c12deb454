package org.hintfs.fs;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.function.Supplier;
import org.hintfs.fs.store.CacheStats;
import org.hintfs.fs.store.TieredCache;

/**
 * {@code --metrics-port}: the mount's figures as Prometheus text at {@code
 * http://HOST:PORT/metrics}, read from the same counters as {@code /.hintfs/stats}, plus latency
 * histograms of reads and of source fetches.
 */
public final class MetricsServer implements AutoCloseable {
  private final HTTPServer server;

  private MetricsServer(HTTPServer server) {
    this.server = server;
  }

  /** Serves the metrics of {@code fs} on {@code host:port} (port 0: any free port). */
  public static MetricsServer start(HintFs fs, String host, int port) throws IOException {
    PrometheusRegistry r = new PrometheusRegistry();
    MountStats ms = fs.stats();
    TieredCache c = fs.cache();
    CacheStats cs = c.stats();
    counter(r, "hintfs_opens", "opens of dataset files", () -> ms.opens.sum());
    counter(r, "hintfs_reads", "reads answered (kernel requests)", () -> ms.reads.sum());
    counter(r, "hintfs_read_bytes", "bytes returned to readers", () -> ms.bytesRead.sum());
    counter(r, "hintfs_open_hits", "opens served without the source", () -> cs.openHits.sum());
    counter(r, "hintfs_open_misses", "opens that needed the source", () -> cs.openMisses.sum());
    CounterWithCallback.builder()
        .name("hintfs_cache_hits")
        .help("files or blocks served from the cache, by tier")
        .labelNames("tier")
        .callback(
            cb -> {
              cb.call(cs.ramHits.sum(), "ram");
              cb.call(cs.diskHits.sum(), "disk");
            })
        .register(r);
    counter(
        r, "hintfs_cache_misses", "files or blocks fetched from the source", () -> cs.misses.sum());
    counter(r, "hintfs_cache_bytes", "bytes served from the cache", () -> cs.bytesFromCache.sum());
    counter(
        r, "hintfs_source_bytes", "bytes fetched from the source", () -> cs.bytesFromSource.sum());
    counter(r, "hintfs_evictions", "files evicted", () -> cs.evictions.sum());
    counter(r, "hintfs_admitted", "files or blocks stored", () -> cs.admitted.sum());
    counter(
        r, "hintfs_corrupt_entries", "cache entries dropped as corrupt", () -> cs.corrupt.sum());
    counter(
        r,
        "hintfs_substitutions",
        "misses served by a substitute",
        () -> fs.hints().substitution.substitutions.sum());
    counter(r, "hintfs_hints_accepted", "control lines applied", () -> fs.hints().accepted.sum());
    counter(r, "hintfs_hints_rejected", "control lines refused", () -> fs.hints().rejected.sum());
    counter(
        r,
        "hintfs_prefetch_off_order_opens",
        "opens that were not where the predicted order expected them",
        () -> fs.prefetcher().offOrder.sum());
    counter(
        r,
        "hintfs_prefetched",
        "files fetched ahead of the reader",
        () -> fs.prefetcher().prefetched.sum());
    CounterWithCallback.builder()
        .name("hintfs_errors")
        .help("failed requests, by errno")
        .labelNames("errno")
        .callback(cb -> fs.errors().snapshot().forEach((errno, n) -> cb.call(n, errno)))
        .register(r);
    gauge(r, "hintfs_cache_used_bytes", "bytes charged in the disk cache", c::usedBytes);
    gauge(r, "hintfs_cache_capacity_bytes", "disk cache capacity", c::capacityBytes);
    gauge(r, "hintfs_cached_files", "files with bytes in the disk cache", c::cachedFiles);
    gauge(r, "hintfs_open_handles", "open files", fs::openHandles);
    gauge(
        r,
        "hintfs_epoch_coverage",
        "share of the dataset served in the last whole epoch (substitution lowers it)",
        () -> {
          var cov = fs.hints().substitution.coverage();
          if (cov == null) {
            return 0;
          }
          var es = cov.epochs();
          return es.size() < 2 ? 0 : es.get(es.size() - 2).coverage();
        });
    gauge(r, "hintfs_fetches_in_flight", "source fetches running", c::fetchesInFlight);
    gauge(
        r,
        "hintfs_prefetch_position",
        "the readers' positions in their predicted orders, summed over streams",
        () ->
            java.util.Arrays.stream(fs.hints().streams().active())
                .mapToLong(st -> st.order().position())
                .sum());
    gauge(
        r,
        "hintfs_streams",
        "live streams (ranks of jobs)",
        () -> fs.hints().streams().active().length);
    gauge(
        r,
        "hintfs_prefetch_lag_files",
        "files of the prefetch window still being fetched",
        () -> fs.prefetcher().filesInFlight());
    gauge(
        r,
        "hintfs_prefetch_bytes_in_flight",
        "bytes of the prefetch window still being fetched",
        () -> fs.prefetcher().bytesInFlight());
    GaugeWithCallback.builder()
        .name("hintfs_source_requests")
        .help("the source's own counters (S3: gets, retries, requests in flight...)")
        .labelNames("counter")
        .callback(cb -> fs.source().counters().forEach((k, v) -> cb.call(v, StatsReport.snake(k))))
        .register(r);
    r.register(ms.readSeconds);
    r.register(cs.sourceSeconds);
    HTTPServer s = HTTPServer.builder().hostname(host).port(port).registry(r).buildAndStart();
    return new MetricsServer(s);
  }

  /** The port it listens on. */
  public int port() {
    return server.getPort();
  }

  private static void counter(PrometheusRegistry r, String name, String help, Supplier<Number> v) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .callback(cb -> cb.call(v.get().doubleValue()))
        .register(r);
  }

  private static void gauge(PrometheusRegistry r, String name, String help, Supplier<Number> v) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .callback(cb -> cb.call(v.get().doubleValue()))
        .register(r);
  }

  @Override
  public void close() {
    server.close();
  }
}
