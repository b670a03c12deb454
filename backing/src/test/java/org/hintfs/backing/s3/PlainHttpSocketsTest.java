package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * The sockets S3Source gives OkHttp for a plain-HTTP endpoint, with OkHttp's own read timeout off:
 * a body that stops coming still fails the read, by the socket's bound, and a body that comes is
 * read whole and unchanged through the larger reads, several requests over one connection.
 */
class PlainHttpSocketsTest {
  /** A server on loopback that answers each request on a connection with {@code answer}. */
  private static final class OneConnectionServer implements AutoCloseable {
    final ServerSocket server;
    final Thread thread;
    final CountDownLatch stalled = new CountDownLatch(1);
    final List<String> requests = new ArrayList<>();

    OneConnectionServer(byte[] body, int answers, boolean stallAfterHalf) throws Exception {
      server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
      thread =
          new Thread(
              () -> {
                try (Socket s = server.accept()) {
                  InputStream in = s.getInputStream();
                  OutputStream out = s.getOutputStream();
                  for (int i = 0; i < answers; i++) {
                    requests.add(readRequest(in));
                    out.write(
                        ("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    if (stallAfterHalf) {
                      out.write(body, 0, body.length / 2);
                      out.flush();
                      stalled.countDown();
                      Thread.sleep(60_000); // never more: the client's read must give up
                      return;
                    }
                    out.write(body);
                    out.flush();
                  }
                  s.getInputStream().read(); // until the client closes
                } catch (Exception e) {
                  // the test closed the server, or the client went away
                }
              },
              "test-http-server");
      thread.setDaemon(true);
      thread.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getLocalPort() + "/bucket/key";
    }

    private static String readRequest(InputStream in) throws Exception {
      StringBuilder b = new StringBuilder();
      while (!b.toString().endsWith("\r\n\r\n")) {
        int c = in.read();
        if (c < 0) {
          throw new java.io.EOFException();
        }
        b.append((char) c);
      }
      return b.toString();
    }

    @Override
    public void close() throws Exception {
      thread.interrupt();
      server.close();
    }
  }

  private static OkHttpClient client(int readTimeoutMillis) {
    return new OkHttpClient.Builder()
        .socketFactory(new PlainHttpSockets(readTimeoutMillis))
        .readTimeout(0, TimeUnit.SECONDS)
        .build();
  }

  @Test
  void aBodyThatStopsComingFailsTheReadWithinTheSocketsBound() throws Exception {
    byte[] body = new byte[1 << 20];
    new Random(1).nextBytes(body);
    try (OneConnectionServer server = new OneConnectionServer(body, 1, true)) {
      OkHttpClient http = client(300);
      assertTimeoutPreemptively(
          Duration.ofSeconds(20),
          () -> {
            try (Response r =
                http.newCall(new Request.Builder().url(server.url()).build()).execute()) {
              InputStream in = r.body().byteStream();
              byte[] got = new byte[body.length];
              // The first half comes; the read after it waits for bytes that never do.
              assertThatThrownBy(
                      () -> {
                        int at = 0;
                        for (int k; (k = in.read(got, at, got.length - at)) > 0; ) {
                          at += k;
                        }
                      })
                  .isInstanceOf(SocketTimeoutException.class);
              assertThat(server.stalled.getCount()).isZero();
            }
          });
    }
  }

  @Test
  void bodiesComeWholeAndUnchangedOverOneConnection() throws Exception {
    byte[] body = new byte[(3 << 20) + 12345]; // not a multiple of any buffer
    new Random(2).nextBytes(body);
    try (OneConnectionServer server = new OneConnectionServer(body, 3, false)) {
      OkHttpClient http = client(5_000);
      // The server takes one connection: a second one would wait forever to be accepted.
      assertTimeoutPreemptively(
          Duration.ofSeconds(20),
          () -> {
            for (int i = 0; i < 3; i++) {
              try (Response r =
                  http.newCall(new Request.Builder().url(server.url()).build()).execute()) {
                assertThat(r.code()).isEqualTo(200);
                assertThat(r.body().bytes()).isEqualTo(body);
              }
            }
          });
      assertThat(server.requests).hasSize(3);
    }
  }

  @Test
  void aSocketsTimeoutOfZeroIsItsBoundAndOthersAreKept() throws Exception {
    try (Socket s = new PlainHttpSockets(700).createSocket()) {
      assertThat(s.getSoTimeout()).isEqualTo(700);
      s.setSoTimeout(0);
      assertThat(s.getSoTimeout()).isEqualTo(700);
      s.setSoTimeout(1);
      assertThat(s.getSoTimeout()).isEqualTo(1);
    }
  }
}
