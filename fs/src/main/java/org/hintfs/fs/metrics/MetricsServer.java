package org.hintfs.fs.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.function.Supplier;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.serve.MountStats;
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
    for (MountCounters.Counter k : MountCounters.of(fs)) {
      if (k.metric() == null) {
        continue;
      }
      if (k.kind() == MountCounters.Kind.COUNTER) {
        counter(r, "hintfs_" + k.metric(), k.help(), k.value());
      } else {
        gauge(r, "hintfs_" + k.metric(), k.help(), k.value());
      }
    }
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
    CounterWithCallback.builder()
        .name("hintfs_errors")
        .help("errors answered to readers and hint writers, by errno")
        .labelNames("errno")
        .callback(cb -> fs.errors().snapshot().forEach((errno, n) -> cb.call(n, errno)))
        .register(r);
    CounterWithCallback.builder()
        .name("hintfs_background_errors")
        .help("failures of background work (prefetch, background fetch): no reader saw them")
        .labelNames("errno")
        .callback(cb -> fs.backgroundErrors().snapshot().forEach((errno, n) -> cb.call(n, errno)))
        .register(r);
    GaugeWithCallback.builder()
        .name("hintfs_source_requests")
        .help("the source's own counters (S3: gets, retries, requests in flight...)")
        .labelNames("counter")
        .callback(cb -> fs.source().counters().forEach((k, v) -> cb.call(v, StatsReport.snake(k))))
        .register(r);
    r.register(ms.readSeconds);
    r.register(cs.sourceSeconds);
    if (fs.cluster() != null) {
      r.register(fs.cluster().peerSeconds);
    }
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
