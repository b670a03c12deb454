package org.hintfs.backing.s3;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A ranged GET of a presigned URL over plain HTTP/1.1 whose body the kernel copies straight into a
 * buffer in native memory: no Okio segment, no array on the way (issue 38).
 *
 * <p>OkHttp reads a body 8 KiB at a time into Okio segments on the heap, which {@code S3Source}
 * then copied into the native buffer a large block is fetched into: a GiB cost the GET threads 1.8
 * CPU s on a fresh daemon. This client reads the socket into that buffer itself. It only takes the
 * answers it can read plainly: {@code 206} (or {@code 200} for a range from 0) with a {@code
 * Content-Length}, keep-alive or not. Anything else (an error status, a chunked body, headers over
 * 16 KiB) is {@link #NOT_READ}: the caller asks again through minio-java, whose answer says what
 * went wrong (a missing key, a changed object, a 5xx to retry).
 *
 * <ul>
 *   <li>Connections are kept (at most {@code maxIdle}, each for {@link #IDLE_NANOS} unused) and
 *       reused. A reused connection that the server had closed (no byte of an answer) is replaced
 *       once by a new one: a GET may be sent again.
 *   <li>Each wait for the server is at most {@code readTimeoutMillis} (a {@link Selector} per
 *       connection, the channel non-blocking): a hung source fails the read with a {@link
 *       SocketTimeoutException}, as OkHttp's did. Connecting waits at most {@code connectMillis}.
 *   <li>{@code permits} bound the requests between sending and their headers, shared with the
 *       OkHttp path.
 * </ul>
 */
final class PlainHttpGets implements Closeable {
  /** {@link #get}'s answer for a response it does not read: ask again another way. */
  static final int NOT_READ = -1;

  /** The longest a connection is kept unused (servers close idle ones: S3 after about 20 s). */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(15);

  private static final int HEAD_MAX = 16 << 10;

  /** The object's ETag was not the one asked for. */
  static final class EtagMismatch extends IOException {
    final String actual;

    EtagMismatch(String actual) {
      super("ETag " + actual);
      this.actual = actual;
    }
  }

  private final int readTimeoutMillis;
  private final int connectMillis;
  private final int maxIdle;
  private final Semaphore permits;
  private final ConcurrentLinkedDeque<Conn> idle = new ConcurrentLinkedDeque<>();
  private final AtomicInteger idleCount = new AtomicInteger();
  private volatile boolean closed;

  PlainHttpGets(int readTimeoutMillis, int connectMillis, int maxIdle, Semaphore permits) {
    this.readTimeoutMillis = readTimeoutMillis;
    this.connectMillis = connectMillis;
    this.maxIdle = maxIdle;
    this.permits = permits;
  }

  /**
   * GETs {@code want} bytes of {@code url} from {@code offset} into {@code dst} (at its position,
   * which it advances), with {@code If-Match: etag} unless null or empty; returns the bytes read
   * (fewer only when the object ends first) or {@link #NOT_READ}.
   *
   * @throws EtagMismatch when the answer's ETag is not {@code etag}
   * @throws IOException when the connection fails or times out, or the body ends early
   */
  int get(URI url, long offset, int want, String etag, ByteBuffer dst) throws IOException {
    String host = url.getHost();
    int port = url.getPort() < 0 ? 80 : url.getPort();
    String hostHeader = url.getPort() < 0 || url.getPort() == 80 ? host : host + ":" + port;
    String target = url.getRawPath() + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
    StringBuilder req =
        new StringBuilder(target.length() + 160)
            .append("GET ")
            .append(target)
            .append(" HTTP/1.1\r\nHost: ")
            .append(hostHeader)
            .append("\r\nRange: bytes=")
            .append(offset)
            .append('-')
            .append(offset + want - 1)
            .append("\r\n");
    if (etag != null && !etag.isEmpty()) {
      req.append("If-Match: \"").append(etag).append("\"\r\n");
    }
    req.append("Accept-Encoding: identity\r\n\r\n");
    byte[] request = req.toString().getBytes(StandardCharsets.ISO_8859_1);
    try {
      permits.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for an S3 connection");
    }
    Conn c = null;
    Head head;
    boolean permitHeld = true;
    try {
      c = take(host, port);
      head = c.exchange(request);
      if (head == null) { // a kept connection the server had closed: once more on a new one
        c.close();
        c = connect(host, port);
        head = c.exchange(request);
        if (head == null) {
          throw new EOFException("the server closed the connection without an answer");
        }
      }
      permits.release();
      permitHeld = false;
      int n = readBody(c, head, offset, want, etag, dst);
      if (n != NOT_READ && head.keepAlive) {
        give(c);
        c = null;
      }
      return n;
    } finally {
      if (permitHeld) {
        permits.release();
      }
      if (c != null) {
        c.close();
      }
    }
  }

  private int readBody(Conn c, Head head, long offset, int want, String etag, ByteBuffer dst)
      throws IOException {
    boolean ranged = head.status == 206 && head.rangeStart == offset;
    boolean whole = head.status == 200 && offset == 0;
    if ((!ranged && !whole) || head.contentLength < 0 || head.chunked) {
      head.keepAlive = false;
      return NOT_READ;
    }
    if (etag != null && !etag.isEmpty() && head.etag != null && !head.etag.equals(etag)) {
      head.keepAlive = false;
      throw new EtagMismatch(head.etag);
    }
    long body = head.contentLength;
    int n = (int) Math.min(body, want);
    if (body > want) {
      head.keepAlive = false; // more than asked: the rest is never read
    }
    c.readFully(dst, n);
    return n;
  }

  private Conn take(String host, int port) throws IOException {
    long now = System.nanoTime();
    Conn c;
    while ((c = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      if (c.port == port && c.host.equals(host) && now - c.idleSince < IDLE_NANOS) {
        return c;
      }
      c.close();
    }
    return connect(host, port);
  }

  private void give(Conn c) {
    if (closed || idleCount.incrementAndGet() > maxIdle) {
      idleCount.decrementAndGet();
      c.close();
      return;
    }
    c.idleSince = System.nanoTime();
    idle.addFirst(c);
    if (closed && idle.remove(c)) {
      c.close();
    }
  }

  private Conn connect(String host, int port) throws IOException {
    SocketChannel ch = SocketChannel.open();
    try {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.socket().connect(new InetSocketAddress(host, port), connectMillis);
      ch.configureBlocking(false);
      Selector sel = Selector.open();
      try {
        return new Conn(host, port, ch, sel, ch.register(sel, 0), readTimeoutMillis);
      } catch (IOException | RuntimeException e) {
        sel.close();
        throw e;
      }
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  @Override
  public void close() {
    closed = true;
    Conn c;
    while ((c = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      c.close();
    }
  }

  /** What a response's status line and headers said. */
  static final class Head {
    int status;
    long contentLength = -1;
    long rangeStart = -1;
    String etag;
    boolean chunked;
    boolean keepAlive = true;
  }

  /** One connection: a non-blocking channel and the selector its waits use. */
  private static final class Conn {
    final String host;
    final int port;
    final SocketChannel ch;
    final Selector sel;
    final SelectionKey key;
    final int timeoutMillis;
    final ByteBuffer in = ByteBuffer.allocate(HEAD_MAX);
    long idleSince;

    Conn(String host, int port, SocketChannel ch, Selector sel, SelectionKey key, int timeoutMs) {
      this.host = host;
      this.port = port;
      this.ch = ch;
      this.sel = sel;
      this.key = key;
      this.timeoutMillis = timeoutMs;
    }

    /**
     * Sends the request and reads the answer's headers; the body's first bytes stay in {@link #in}
     * (flipped). Null when the connection was closed before any byte of an answer came.
     */
    Head exchange(byte[] request) throws IOException {
      ByteBuffer out = ByteBuffer.wrap(request);
      try {
        while (out.hasRemaining()) {
          if (ch.write(out) == 0) {
            await(SelectionKey.OP_WRITE);
          }
        }
      } catch (IOException e) {
        if (out.position() == 0 && !(e instanceof SocketTimeoutException)) {
          return null;
        }
        throw e;
      }
      in.clear();
      int end;
      while ((end = headEnd(in)) < 0) {
        if (!in.hasRemaining()) { // headers over HEAD_MAX: not an answer read here
          Head h = new Head();
          h.keepAlive = false;
          return h;
        }
        int r;
        try {
          r = ch.read(in);
        } catch (IOException e) {
          if (in.position() == 0 && !(e instanceof SocketTimeoutException)) {
            return null; // reset before any answer: a kept connection the server dropped
          }
          throw e;
        }
        if (r < 0) {
          if (in.position() == 0) {
            return null;
          }
          throw new EOFException("the connection closed inside an answer's headers");
        }
        if (r == 0) {
          await(SelectionKey.OP_READ);
        }
      }
      Head h = parse(in.array(), end);
      in.limit(in.position()).position(end);
      return h;
    }

    /**
     * Reads {@code n} body bytes into {@code dst}: first those after the headers, then the rest.
     */
    void readFully(ByteBuffer dst, int n) throws IOException {
      int lim = dst.limit();
      int stop = dst.position() + n;
      int fromHead = Math.min(in.remaining(), n);
      if (fromHead > 0) {
        ByteBuffer part = in.duplicate();
        part.limit(part.position() + fromHead);
        dst.put(part);
        in.position(in.position() + fromHead);
      }
      dst.limit(stop);
      try {
        while (dst.hasRemaining()) {
          int r = ch.read(dst);
          if (r < 0) {
            throw new EOFException(
                "the body ended after " + (n - (stop - dst.position())) + " of " + n + " bytes");
          }
          if (r == 0) {
            await(SelectionKey.OP_READ);
          }
        }
      } finally {
        dst.limit(lim);
      }
    }

    private void await(int op) throws IOException {
      key.interestOps(op);
      int ready = sel.select(timeoutMillis);
      sel.selectedKeys().clear();
      key.interestOps(0);
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted during an S3 GET");
      }
      if (ready == 0) {
        throw new SocketTimeoutException(
            "no answer from " + host + ":" + port + " in " + timeoutMillis + " ms");
      }
    }

    void close() {
      try {
        sel.close();
      } catch (IOException ignored) {
        // nothing to do
      }
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing to do
      }
    }
  }

  /** The index just past the first {@code \r\n\r\n} in {@code b}'s filled part, or -1. */
  static int headEnd(ByteBuffer b) {
    byte[] a = b.array();
    for (int i = 3; i < b.position(); i++) {
      if (a[i] == '\n' && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
        return i + 1;
      }
    }
    return -1;
  }

  /** The status line and the headers this client reads, from {@code a[0, end)}. */
  static Head parse(byte[] a, int end) throws IOException {
    String text = new String(a, 0, end, StandardCharsets.ISO_8859_1);
    String[] lines = text.split("\r\n");
    Head h = new Head();
    String[] status = lines[0].split(" ", 3);
    if (status.length < 2 || !status[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP/1.x answer: " + lines[0]);
    }
    try {
      h.status = Integer.parseInt(status[1]);
    } catch (NumberFormatException e) {
      throw new IOException("not an HTTP/1.x answer: " + lines[0]);
    }
    if (status[0].equals("HTTP/1.0")) {
      h.keepAlive = false;
    }
    for (int i = 1; i < lines.length; i++) {
      String line = lines[i];
      int colon = line.indexOf(':');
      if (colon <= 0) {
        continue;
      }
      String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).trim();
      switch (name) {
        case "content-length" -> {
          try {
            h.contentLength = Long.parseLong(value);
          } catch (NumberFormatException e) {
            h.contentLength = -1;
          }
        }
        case "content-range" -> h.rangeStart = rangeStart(value);
        case "etag" -> h.etag = ETags.stripQuotes(value);
        case "transfer-encoding" -> h.chunked = !value.equalsIgnoreCase("identity");
        case "connection" -> {
          if (value.toLowerCase(Locale.ROOT).contains("close")) {
            h.keepAlive = false;
          } else if (value.toLowerCase(Locale.ROOT).contains("keep-alive")) {
            h.keepAlive = true;
          }
        }
        default -> {}
      }
    }
    return h;
  }

  /** The first byte of {@code bytes FIRST-LAST/SIZE}, or -1. */
  static long rangeStart(String v) {
    String s = v.trim();
    if (!s.regionMatches(true, 0, "bytes ", 0, 6)) {
      return -1;
    }
    int dash = s.indexOf('-', 6);
    if (dash < 0) {
      return -1;
    }
    try {
      return Long.parseLong(s.substring(6, dash).trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
