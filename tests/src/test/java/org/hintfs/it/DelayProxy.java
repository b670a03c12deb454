package org.hintfs.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A TCP proxy that adds latency, because {@code tc netem} is not in this kernel: every chunk the
 * client sends (an HTTP request, for a GET) is held {@code delayMillis} before it is forwarded.
 *
 * <p>It also measures concurrency independently of hintfs: a connection has a request in flight
 * from the moment its request arrives (before the delay) until the first bytes of the answer come
 * back, and {@link #maxInFlight()} is the most that were at once. {@link #gets()} lists every GET
 * it forwarded: its path, when it arrived and when the answer's first bytes came back.
 */
public final class DelayProxy implements AutoCloseable {
  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final long delayMillis;
  private final ExecutorService pool =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "delay-proxy");
            t.setDaemon(true);
            return t;
          });
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  private final AtomicInteger connections = new AtomicInteger();
  private final ConcurrentLinkedQueue<Get> gets = new ConcurrentLinkedQueue<>();
  private final long getIntervalNanos;
  private final AtomicLong nextGetSlot = new AtomicLong();

  /**
   * One GET seen at the proxy, times from {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux, the
   * clock of Python's {@code time.monotonic_ns()}).
   *
   * @param path the request target up to its query, e.g. {@code /bucket/prefix/key}
   * @param arrivedNs when its request reached the proxy
   * @param answeredNs when the first bytes of its answer came back, or -1 if none did
   */
  public record Get(String path, long arrivedNs, long answeredNs) {}

  public DelayProxy(String targetHost, int targetPort, long delayMillis) throws IOException {
    this(targetHost, targetPort, delayMillis, 0);
  }

  /**
   * A proxy that also lets at most {@code getsPerSecond} GETs through per second (0: no limit),
   * each waiting for its turn, as a throttled S3 prefix or a shared NFS server paces its clients.
   */
  public DelayProxy(String targetHost, int targetPort, long delayMillis, int getsPerSecond)
      throws IOException {
    this.getIntervalNanos = getsPerSecond <= 0 ? 0 : 1_000_000_000L / getsPerSecond;
    this.server = new ServerSocket();
    this.server.bind(new InetSocketAddress("127.0.0.1", 0), 512);
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.delayMillis = delayMillis;
    pool.execute(this::acceptLoop);
  }

  /**
   * For the benchmarks: {@code java -cp tests/target/test-classes org.hintfs.it.DelayProxy
   * TARGET_PORT DELAY_MS} prints the port it listens on, then serves until killed, and prints the
   * most requests it saw in flight at once when it gets SIGTERM.
   */
  public static void main(String[] args) throws Exception {
    DelayProxy p =
        new DelayProxy(
            "127.0.0.1",
            Integer.parseInt(args[0]),
            Long.parseLong(args[1]),
            args.length > 2 ? Integer.parseInt(args[2]) : 0);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  // Object GETs: /bucket/key..., not the bucket's listing (/bucket?list-type=2).
                  java.util.Map<String, Integer> byKey = new java.util.HashMap<>();
                  for (Get g : p.gets()) {
                    if (g.path().indexOf('/', 1) > 0) {
                      byKey.merge(g.path(), 1, Integer::sum);
                    }
                  }
                  int total = byKey.values().stream().mapToInt(Integer::intValue).sum();
                  System.out.println("max_in_flight " + p.maxInFlight());
                  System.out.println("object_gets " + total + " keys " + byKey.size());
                  new java.util.TreeMap<>(byKey)
                      .forEach((k, n) -> System.out.println("key_gets " + k + " " + n));
                  System.out.flush();
                }));
    System.out.println(p.port());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  public int port() {
    return server.getLocalPort();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port();
  }

  /** The most requests that were waiting for an answer at once. */
  public int maxInFlight() {
    return maxInFlight.get();
  }

  public void resetMaxInFlight() {
    maxInFlight.set(inFlight.get());
  }

  /** Every GET forwarded so far, those still unanswered with {@code answeredNs} -1. */
  public List<Get> gets() {
    return new ArrayList<>(gets);
  }

  /** Connections accepted so far. */
  public int connections() {
    return connections.get();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        connections.incrementAndGet();
        pool.execute(() -> serve(client));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client;
        Socket upstream = new Socket(targetHost, targetPort)) {
      client.setTcpNoDelay(true);
      upstream.setTcpNoDelay(true);
      boolean[] waiting = {false};
      Object lock = new Object();
      String[] getPath = {null};
      long[] getArrived = {0};
      pool.execute(
          () ->
              pump(
                  upstream,
                  client,
                  chunk -> {
                    synchronized (lock) {
                      if (waiting[0]) {
                        waiting[0] = false;
                        inFlight.decrementAndGet();
                      }
                      if (getPath[0] != null) {
                        gets.add(new Get(getPath[0], getArrived[0], System.nanoTime()));
                        getPath[0] = null;
                      }
                    }
                  },
                  0));
      pump(
          client,
          upstream,
          chunk -> {
            String get = getPath(chunk);
            if (get != null) {
              awaitGetSlot(); // outside the lock: the answer pump of this connection goes on
            }
            synchronized (lock) {
              if (get != null) {
                if (getPath[0] != null) {
                  gets.add(new Get(getPath[0], getArrived[0], -1)); // never answered
                }
                getPath[0] = get;
                getArrived[0] = System.nanoTime();
              }
              if (!waiting[0]) {
                waiting[0] = true;
                int now = inFlight.incrementAndGet();
                maxInFlight.accumulateAndGet(now, Math::max);
              }
            }
          },
          delayMillis);
      synchronized (lock) {
        if (waiting[0]) {
          waiting[0] = false;
          inFlight.decrementAndGet();
        }
        if (getPath[0] != null) {
          gets.add(new Get(getPath[0], getArrived[0], -1));
          getPath[0] = null;
        }
      }
    } catch (IOException e) {
      // the client or the server went away
    }
  }

  /** Waits for this GET's turn under the rate limit, if there is one. */
  private void awaitGetSlot() {
    if (getIntervalNanos == 0) {
      return;
    }
    long now = System.nanoTime();
    long slot =
        nextGetSlot.accumulateAndGet(now, (last, n) -> Math.max(last + getIntervalNanos, n));
    long wait = slot - now;
    if (wait > 0) {
      try {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The target of a chunk that starts an HTTP GET, up to its query; else null. */
  private static String getPath(String chunk) {
    if (!chunk.startsWith("GET ")) {
      return null;
    }
    int end = chunk.indexOf(' ', 4);
    String target = end < 0 ? chunk.substring(4) : chunk.substring(4, end);
    int q = target.indexOf('?');
    return q < 0 ? target : target.substring(0, q);
  }

  private static void pump(Socket from, Socket to, Consumer<String> onChunk, long delay) {
    byte[] buf = new byte[64 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buf)) > 0) {
        // In flight from its arrival: the delay is part of what the client waits. A request line
        // fits in the first 512 bytes of its chunk.
        onChunk.accept(new String(buf, 0, Math.min(n, 512), StandardCharsets.ISO_8859_1));
        if (delay > 0) {
          Thread.sleep(delay);
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // closed
    } finally {
      try {
        to.shutdownOutput();
      } catch (IOException ignored) {
        // already closed
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    pool.shutdownNow();
  }
}
