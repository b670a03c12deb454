package org.hintfs.fs.cluster;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a mount joins its job's cluster.
 *
 * @param name the cluster: every daemon of one job names the same one
 * @param bindHost the address this member listens on (loopback or a private address unless a secret
 *     is given)
 * @param bindPort its TCP port; failure detection listens 100 above it
 * @param peers {@code host:port} of members to ask for the cluster at start (any subset of the
 *     job's, this one included or not); empty: this member alone until others find it
 * @param stackFile a JGroups stack of the user's own (DNS_PING in Kubernetes), or null for the
 *     built-in TCP stack on {@code bindHost:bindPort} that finds {@code peers}
 * @param secretFile a file whose bytes only the job's members hold, or null: with it, a member must
 *     prove it holds the secret to join (JGroups AUTH) and all traffic is encrypted with a key
 *     drawn from it (SYM_ENCRYPT)
 */
public record ClusterConfig(
    String name,
    String bindHost,
    int bindPort,
    List<String> peers,
    Path stackFile,
    Path secretFile) {

  /** JGroups' customary port. */
  public static final int DEFAULT_PORT = 7800;

  public ClusterConfig {
    peers = List.copyOf(peers);
  }

  /**
   * Parses the CLI's options.
   *
   * @throws IllegalArgumentException with a one-line reason
   */
  public static ClusterConfig parse(
      String name, String bind, String peers, Path stackFile, Path secretFile) {
    if (name == null || !name.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new IllegalArgumentException(
          "--cluster takes a name of 1-64 letters, digits, '.', '_' or '-', not '" + name + "'");
    }
    String host = "127.0.0.1";
    int port = DEFAULT_PORT;
    if (bind != null) {
      int colon = bind.lastIndexOf(':');
      host = colon < 0 ? bind : bind.substring(0, colon);
      port = colon < 0 ? DEFAULT_PORT : port(bind.substring(colon + 1), "--cluster-bind", bind);
      if (host.isEmpty()) {
        throw new IllegalArgumentException("--cluster-bind takes HOST[:PORT], not '" + bind + "'");
      }
    }
    List<String> list = new ArrayList<>();
    if (peers != null && !peers.isBlank()) {
      for (String p : peers.split(",")) {
        p = p.strip();
        int colon = p.lastIndexOf(':');
        String h = colon < 0 ? p : p.substring(0, colon);
        int pp = colon < 0 ? DEFAULT_PORT : port(p.substring(colon + 1), "--cluster-peers", p);
        if (h.isEmpty()) {
          throw new IllegalArgumentException(
              "--cluster-peers takes HOST[:PORT],... (e.g. node1:7800,node2:7800), not '"
                  + peers
                  + "'");
        }
        list.add(h + ":" + pp);
      }
    }
    InetAddress addr;
    try {
      addr = InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("--cluster-bind: unknown host '" + host + "'");
    }
    boolean privateAddress =
        addr.isLoopbackAddress() || addr.isSiteLocalAddress() || addr.isLinkLocalAddress();
    if (!privateAddress && secretFile == null && stackFile == null) {
      throw new IllegalArgumentException(
          "--cluster-bind "
              + host
              + " is not a loopback or private address: give the job a --cluster-secret-file so"
              + " that only its members join and traffic is encrypted");
    }
    if (secretFile != null) {
      refuseIfOthersMayRead(secretFile);
    }
    return new ClusterConfig(name, addr.getHostAddress(), port, list, stackFile, secretFile);
  }

  /**
   * Refuses a secret file that users other than its owner may read or write (any group or other
   * permission bit), as ssh refuses such a private key: anyone who reads it may join the job and
   * read its traffic.
   */
  static void refuseIfOthersMayRead(Path secretFile) {
    java.util.Set<java.nio.file.attribute.PosixFilePermission> perms;
    try {
      perms = java.nio.file.Files.getPosixFilePermissions(secretFile);
    } catch (java.io.IOException | UnsupportedOperationException e) {
      return; // unreadable: said when it is read; no POSIX modes: nothing to check
    }
    int mode = 0;
    for (var p : perms) {
      mode |= 1 << (8 - p.ordinal()); // OWNER_READ is bit 8 (0400) ... OTHERS_EXECUTE bit 0
    }
    if ((mode & 077) != 0) {
      throw new IllegalArgumentException(
          String.format(
              "--cluster-secret-file %s may be read by other users (mode %04o): chmod 600 %s",
              secretFile, mode, secretFile));
    }
  }

  private static int port(String s, String option, String whole) {
    try {
      int p = Integer.parseInt(s);
      if (p >= 1 && p <= 65535 - 100) {
        return p;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException(
        option
            + " takes HOST:PORT with PORT 1-65435 (failure detection uses PORT+100), not '"
            + whole
            + "'");
  }
}
