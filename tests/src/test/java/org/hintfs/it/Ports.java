package org.hintfs.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test starts in another process (S3Proxy, a daemon's metrics, cluster
 * members). A port the kernel hands out ({@code new ServerSocket(0)}) lies in the ephemeral range,
 * and between the test's probe and the server's bind any outgoing connection may take it as its own
 * local port (CI saw it: a cluster member could not bind the port 100 above its own). These are
 * drawn below that range, where only a listener can hold them.
 */
final class Ports {
  private Ports() {}

  /** The first port of the kernel's ephemeral range (32768 if it cannot be read). */
  static int ephemeralFloor() {
    try {
      // Files.readString of a sysctl file returns one byte here: read it by lines.
      return Integer.parseInt(
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
              .get(0)
              .trim()
              .split("\\s+")[0]);
    } catch (IOException | RuntimeException unknown) {
      return 32768;
    }
  }

  /** A free port below the ephemeral range with each of {@code p + also[i]} free too. */
  static int free(int... also) throws IOException {
    int floor = ephemeralFloor();
    int span = 0;
    for (int a : also) {
      span = Math.max(span, a);
    }
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 200; attempt++) {
      int p = r.nextInt(10_000, floor - span - 20);
      if (bindable(p, also)) {
        return p;
      }
    }
    throw new IOException("no free port below " + floor);
  }

  private static boolean bindable(int p, int[] also) {
    try (ServerSocket s = new ServerSocket(p)) {
      for (int a : also) {
        try (ServerSocket x = new ServerSocket(p + a)) {
          // free
        }
      }
      return true;
    } catch (IOException busy) {
      return false;
    }
  }
}
