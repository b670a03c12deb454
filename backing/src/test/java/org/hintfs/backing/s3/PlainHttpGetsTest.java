package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.EOFException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The plain-HTTP GET into native memory against a server on loopback: a body read whole and
 * unchanged over a kept connection (its first bytes arriving with the headers), a kept connection
 * the server closed replaced once, a body that stops coming failed by the read bound, and answers
 * it does not read (an error status, a chunked body, another range) left to the caller.
 */
class PlainHttpGetsTest {
  interface Answer {
    /** Answers request {@code n} (counted over all connections); false closes the connection. */
    boolean answer(int n, String request, OutputStream out) throws Exception;
  }

  /** A server on loopback answering each request with {@code answer}, any number of connections. */
  private static final class Server implements AutoCloseable {
    final ServerSocket server;
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    final List<String> seen = new CopyOnWriteArrayList<>();

    Server(Answer answer) throws Exception {
      server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
      Thread t =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket s = server.accept();
                    connections.incrementAndGet();
                    Thread c =
                        new Thread(
                            () -> {
                              try (s) {
                                InputStream in = s.getInputStream();
                                while (true) {
                                  String req = readRequest(in);
                                  seen.add(req);
                                  OutputStream out = s.getOutputStream();
                                  boolean keep =
                                      answer.answer(requests.getAndIncrement(), req, out);
                                  out.flush();
                                  if (!keep) {
                                    return;
                                  }
                                }
                              } catch (Exception e) {
                                // the client went away, or the test ended
                              }
                            });
                    c.setDaemon(true);
                    c.start();
                  } catch (Exception e) {
                    return;
                  }
                }
              });
      t.setDaemon(true);
      t.start();
    }

    URI url() {
      return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/b/k?X-Amz-Signature=abc");
    }

    @Override
    public void close() throws Exception {
      server.close();
    }
  }

  private static String readRequest(InputStream in) throws Exception {
    StringBuilder b = new StringBuilder();
    while (!b.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        throw new EOFException();
      }
      b.append((char) c);
    }
    return b.toString();
  }

  private static long rangeStart(String req) {
    int i = req.indexOf("Range: bytes=") + 13;
    return Long.parseLong(req.substring(i, req.indexOf('-', i)));
  }

  private static long rangeEnd(String req) {
    int i = req.indexOf('-', req.indexOf("Range: bytes=")) + 1;
    return Long.parseLong(req.substring(i, req.indexOf("\r\n", i)));
  }

  /** A 206 of {@code body}'s asked range, headers and the first body bytes in one write. */
  private static boolean partial(byte[] body, String req, OutputStream out, boolean keep)
      throws Exception {
    int from = (int) rangeStart(req);
    int to = (int) Math.min(rangeEnd(req), body.length - 1);
    byte[] head =
        ("HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes "
                + from
                + "-"
                + to
                + "/"
                + body.length
                + "\r\nContent-Length: "
                + (to - from + 1)
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[head.length + to - from + 1];
    System.arraycopy(head, 0, all, 0, head.length);
    System.arraycopy(body, from, all, head.length, to - from + 1);
    out.write(all);
    return keep;
  }

  private static PlainHttpGets client(int timeoutMs) {
    return new PlainHttpGets(timeoutMs, 2_000, 4, new Semaphore(4));
  }

  @Test
  void bodiesAreReadWholeIntoNativeMemory_overOneKeptConnection() throws Exception {
    byte[] body = new byte[3 << 20];
    new Random(5).nextBytes(body);
    try (Server s = new Server((n, req, out) -> partial(body, req, out, true));
        PlainHttpGets gets = client(5_000)) {
      Random rnd = new Random(9);
      for (int i = 0; i < 12; i++) {
        int off = i == 0 ? 0 : rnd.nextInt(body.length);
        ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
        dst.position(3);
        int want = dst.remaining();
        int expect = Math.min(want, body.length - off);
        assertThat(gets.get(s.url(), off, want, "e1", dst)).isEqualTo(expect);
        assertThat(dst.position()).isEqualTo(3 + expect);
        assertThat(dst.flip().position(3)).isEqualTo(ByteBuffer.wrap(body, off, expect));
      }
      assertThat(s.connections.get()).isEqualTo(1);
      assertThat(s.seen.get(0))
          .startsWith("GET /b/k?X-Amz-Signature=abc HTTP/1.1\r\n")
          .contains("Host: 127.0.0.1:" + s.server.getLocalPort() + "\r\n")
          .contains("Range: bytes=0-" + ((1 << 20) - 4) + "\r\n")
          .contains("If-Match: \"e1\"\r\n");
    }
  }

  @Test
  void aKeptConnectionTheServerClosed_isReplacedOnce() throws Exception {
    byte[] body = "0123456789".getBytes(StandardCharsets.US_ASCII);
    // Answers without "Connection: close", then closes: the client keeps a dead connection.
    try (Server s = new Server((n, req, out) -> partial(body, req, out, false));
        PlainHttpGets gets = client(5_000)) {
      for (int i = 0; i < 3; i++) {
        ByteBuffer dst = ByteBuffer.allocateDirect(4);
        assertThat(gets.get(s.url(), 2 + i, 4, null, dst)).isEqualTo(4);
        assertThat(new String(bytes(dst.flip()), StandardCharsets.US_ASCII))
            .isEqualTo(new String(body, 2 + i, 4, StandardCharsets.US_ASCII));
        Thread.sleep(50); // the server's close reaches the client
      }
      assertThat(s.requests.get()).isEqualTo(3);
      assertThat(s.connections.get()).isEqualTo(3);
    }
  }

  @Test
  void aBodyThatStopsComing_failsTheReadInItsBound() throws Exception {
    try (Server s =
            new Server(
                (n, req, out) -> {
                  out.write(
                      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-999/1000\r\nContent-Length: 1000\r\n\r\nhalf"
                          .getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                  Thread.sleep(60_000);
                  return false;
                });
        PlainHttpGets gets = client(300)) {
      ByteBuffer dst = ByteBuffer.allocateDirect(1000);
      long t0 = System.nanoTime();
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () ->
              assertThatThrownBy(() -> gets.get(s.url(), 0, 1000, null, dst))
                  .isInstanceOf(SocketTimeoutException.class));
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    }
  }

  @Test
  void answersItDoesNotRead_areLeftToTheCaller_andAChangedEtagIsRefused() throws Exception {
    String[] answers = {
      "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!",
      "HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked\r\nContent-Range: bytes 0-3/10"
          + "\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-8/10\r\nContent-Length: 4\r\n\r\nabcd",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
      "HTTP/1.1 206 Partial Content\r\nETag: \"e2\"\r\nContent-Range: bytes 0-3/10\r\n"
          + "Content-Length: 4\r\n\r\nabcd",
    };
    try (Server s =
            new Server(
                (n, req, out) -> {
                  out.write(answers[n].getBytes(StandardCharsets.US_ASCII));
                  return true;
                });
        PlainHttpGets gets = client(5_000)) {
      ByteBuffer dst = ByteBuffer.allocateDirect(4);
      assertThat(gets.get(s.url(), 0, 4, null, dst)).isEqualTo(PlainHttpGets.NOT_READ); // 404
      assertThat(gets.get(s.url(), 0, 4, null, dst)).isEqualTo(PlainHttpGets.NOT_READ); // chunked
      assertThat(gets.get(s.url(), 0, 4, null, dst)).isEqualTo(PlainHttpGets.NOT_READ); // range 5
      assertThat(gets.get(s.url(), 2, 4, null, dst)).isEqualTo(PlainHttpGets.NOT_READ); // 200
      assertThat(dst.position()).isZero();
      assertThatThrownBy(() -> gets.get(s.url(), 0, 4, "e1", dst))
          .isInstanceOf(PlainHttpGets.EtagMismatch.class)
          .hasMessageContaining("e2");
      assertThat(dst.position()).isZero();
      // None of those connections was kept: each answer came on a new one.
      assertThat(s.connections.get()).isEqualTo(5);
    }
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.get(a);
    return a;
  }
}
