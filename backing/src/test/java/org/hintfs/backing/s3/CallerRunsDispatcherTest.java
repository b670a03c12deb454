package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * The dispatcher S3Source gives OkHttp: minio-java's blocking calls are enqueued calls joined, and
 * with it each runs on the thread that enqueued it, before the enqueue returns, however many run at
 * once (none waits in a queue for another thread to run it).
 */
class CallerRunsDispatcherTest {
  @Test
  void everyCallRunsOnItsCallersThreadEvenWithManyInFlight() throws Exception {
    int callers = 12; // more than OkHttp's default 5 per host
    CountDownLatch allArrived = new CountDownLatch(callers);
    AtomicInteger atOnce = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    ExecutorService serverThreads = Executors.newFixedThreadPool(callers);
    server.setExecutor(serverThreads);
    server.createContext(
        "/",
        ex -> {
          mostAtOnce.accumulateAndGet(atOnce.incrementAndGet(), Math::max);
          allArrived.countDown();
          try {
            allArrived.await(10, TimeUnit.SECONDS); // answer once every call is in flight
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          atOnce.decrementAndGet();
          byte[] b = ex.getRequestURI().getPath().getBytes();
          ex.sendResponseHeaders(200, b.length);
          try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
          }
        });
    server.start();
    OkHttpClient http =
        new OkHttpClient.Builder().dispatcher(S3Source.callerRunsDispatcher()).build();
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        String path = "/object-" + i;
        results.add(
            pool.submit(
                () -> {
                  AtomicReference<Thread> ranOn = new AtomicReference<>();
                  AtomicReference<String> body = new AtomicReference<>();
                  Request r =
                      new Request.Builder()
                          .url("http://127.0.0.1:" + server.getAddress().getPort() + path)
                          .build();
                  http.newCall(r)
                      .enqueue(
                          new Callback() {
                            @Override
                            public void onResponse(Call call, Response response)
                                throws IOException {
                              ranOn.set(Thread.currentThread());
                              try (response) {
                                body.set(response.body().string());
                              }
                            }

                            @Override
                            public void onFailure(Call call, IOException e) {
                              ranOn.set(Thread.currentThread());
                              body.set("failed: " + e);
                            }
                          });
                  // Answered before enqueue returned, on this very thread.
                  assertThat(ranOn.get()).isSameAs(Thread.currentThread());
                  return body.get();
                }));
      }
      for (int i = 0; i < callers; i++) {
        assertThat(results.get(i).get(20, TimeUnit.SECONDS)).isEqualTo("/object-" + i);
      }
      assertThat(mostAtOnce.get()).isEqualTo(callers);
    } finally {
      pool.shutdownNow();
      server.stop(0);
      serverThreads.shutdownNow();
      http.connectionPool().evictAll();
    }
  }
}
