package org.hintfs.backing.s3;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import javax.net.SocketFactory;

/**
 * Sockets for a plain-HTTP endpoint (HTTP/1.1 only: no TLS, so no HTTP/2) whose reads cost less.
 *
 * <ul>
 *   <li>Each read waits at most {@code readTimeoutMillis} for data, as the socket's own {@code
 *       SO_TIMEOUT} (a timeout of 0, which OkHttp sets when its read timeout is off, means this
 *       bound). OkHttp's read timeout is an Okio {@code AsyncTimeout} entered and left around every
 *       read of at most 8 KiB: a lock and a watchdog thread's queue 131,072 times per GiB. A 1 GiB
 *       body read as 256 ranged GETs of 4 MiB cost 1.6-1.8 CPU s with it off, 2.2-2.4 s with it on
 *       (BENCHMARKS.md, issue 38). A read that times out throws {@link
 *       java.net.SocketTimeoutException}, as OkHttp's did.
 *   <li>The kernel is read up to 256 KiB at a time, not one 8 KiB Okio segment per system call.
 * </ul>
 */
final class PlainHttpSockets extends SocketFactory {
  /** The most bytes one read of the kernel's socket buffer takes. */
  static final int READ_BUFFER = 256 * 1024;

  private final int readTimeoutMillis;

  PlainHttpSockets(int readTimeoutMillis) {
    if (readTimeoutMillis <= 0) {
      throw new IllegalArgumentException("readTimeoutMillis must be positive");
    }
    this.readTimeoutMillis = readTimeoutMillis;
  }

  @Override
  public Socket createSocket() throws SocketException {
    return new BoundedReadSocket(readTimeoutMillis);
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    return connected(
        new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
  }

  @Override
  public Socket createSocket(InetAddress host, int port, InetAddress localHost, int localPort)
      throws IOException {
    return connected(
        new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
  }

  private Socket connected(InetSocketAddress to) throws IOException {
    return connected(to, null);
  }

  private Socket connected(InetSocketAddress to, InetSocketAddress from) throws IOException {
    Socket s = createSocket();
    try {
      if (from != null) {
        s.bind(from);
      }
      s.connect(to);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  /** A socket whose reads never wait unbounded and take up to {@link #READ_BUFFER} at a time. */
  static final class BoundedReadSocket extends Socket {
    private final int readTimeoutMillis;
    private InputStream in;

    BoundedReadSocket(int readTimeoutMillis) throws SocketException {
      this.readTimeoutMillis = readTimeoutMillis;
      super.setSoTimeout(readTimeoutMillis);
    }

    /** {@code 0} (no timeout) is this socket's bound; any other timeout is kept as given. */
    @Override
    public void setSoTimeout(int timeout) throws SocketException {
      super.setSoTimeout(timeout == 0 ? readTimeoutMillis : timeout);
    }

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (in == null) {
        in = new BufferedInputStream(super.getInputStream(), READ_BUFFER);
      }
      return in;
    }
  }
}
