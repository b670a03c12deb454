package org.hintfs.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy that adds latency, because {@code tc netem} is not in this kernel: every chunk the
 * client sends (an HTTP request, for a GET) is held {@code delayMillis} before it is forwarded.
 *
 * <p>It also measures concurrency independently of hintfs: a connection has a request in flight
 * from the moment its request arrives (before the delay) until the first bytes of the answer come
 * back, and {@link #maxInFlight()} is the most that were at once.
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
  private final AtomicLong requests = new AtomicLong();
  private final AtomicInteger connections = new AtomicInteger();

  public DelayProxy(String targetHost, int targetPort, long delayMillis) throws IOException {
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
    DelayProxy p = new DelayProxy("127.0.0.1", Integer.parseInt(args[0]), Long.parseLong(args[1]));
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> System.out.println("max_in_flight " + p.maxInFlight())));
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

  /** Client chunks forwarded (about one per request). */
  public long requests() {
    return requests.get();
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
      pool.execute(
          () ->
              pump(
                  upstream,
                  client,
                  () -> {
                    synchronized (lock) {
                      if (waiting[0]) {
                        waiting[0] = false;
                        inFlight.decrementAndGet();
                      }
                    }
                  },
                  0));
      pump(
          client,
          upstream,
          () -> {
            synchronized (lock) {
              requests.incrementAndGet();
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
      }
    } catch (IOException e) {
      // the client or the server went away
    }
  }

  private static void pump(Socket from, Socket to, Runnable onChunk, long delay) {
    byte[] buf = new byte[64 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buf)) > 0) {
        onChunk.run(); // in flight from its arrival: the delay is part of what the client waits
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
