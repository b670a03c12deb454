package org.hintfs.fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Talks to a running daemon through its control files, the way any shell could: lines written to
 * {@code /.hintfs/control}, answers read from {@code /.hintfs/stats} and {@code /.hintfs/errors}.
 */
final class ControlClient {
  private static final long APPLY_TIMEOUT_MS = 120_000;

  final Path mountpoint;

  private ControlClient(Path mountpoint) {
    this.mountpoint = mountpoint;
  }

  /** The daemon serving the mountpoint; a one-line error if it is not a live hintfs mount. */
  static ControlClient forMountpoint(Path mp) {
    Path m = mp.toAbsolutePath().normalize();
    StatusCommand.requireStats(m);
    return new ControlClient(m);
  }

  /** A path inside a hintfs mount, as the daemon names it (relative to the mount root). */
  record Target(ControlClient client, String relative) {}

  /** Resolves a path given on the command line; one-line errors for anything outside a mount. */
  static Target target(Path p) {
    Path abs = p.toAbsolutePath().normalize();
    Path mp =
        Mounts.hintfsMountContaining(abs)
            .orElseThrow(() -> new UserError(p + " is not inside a hintfs mount"));
    if (!Files.exists(abs)) {
      throw new UserError(p + " does not exist");
    }
    String rel = mp.relativize(abs).toString();
    if (rel.equals(".hintfs") || rel.startsWith(".hintfs/")) {
      throw new UserError(p + " is hintfs's control directory, not part of the dataset");
    }
    return new Target(forMountpoint(mp), rel.isEmpty() ? "/" : "/" + rel);
  }

  /**
   * The daemon serving every one of {@code paths}, and into {@code lines} one {@code verb PATH}
   * line per path; a one-line error if they are not all in one hintfs mount.
   */
  static ControlClient forPaths(List<Path> paths, String verb, List<String> lines) {
    ControlClient c = null;
    for (Path p : paths) {
      Target t = target(p);
      if (c != null && !t.client().mountpoint.equals(c.mountpoint)) {
        throw new UserError("the paths are in different mounts: name paths of one mount at a time");
      }
      c = t.client();
      lines.add(verb + " " + t.relative());
    }
    return c;
  }

  /** The daemon's stats now. */
  JsonNode stats() {
    return StatusCommand.readStats(mountpoint)
        .orElseThrow(
            () -> new UserError("the hintfs daemon at " + mountpoint + " stopped answering"));
  }

  /** The admin counters now. */
  JsonNode admin() {
    return stats().path("admin");
  }

  /**
   * Writes lines (one write each, so a rejected one names itself) and waits until the daemon has
   * applied the admin ones among them.
   */
  void sendAdmin(List<String> lines) {
    long before = admin().path("applied").asLong();
    send(lines);
    long deadline = System.currentTimeMillis() + APPLY_TIMEOUT_MS;
    while (admin().path("applied").asLong() < before + lines.size()) {
      if (System.currentTimeMillis() > deadline) {
        throw new UserError("the daemon at " + mountpoint + " did not apply the request in time");
      }
      sleep(20);
    }
  }

  /** Writes lines; a line the daemon refuses is a one-line error with its reason. */
  void send(List<String> lines) {
    Path control = mountpoint.resolve(".hintfs/control");
    try (OutputStream out = Files.newOutputStream(control, StandardOpenOption.WRITE)) {
      for (String l : lines) {
        try {
          out.write((l + "\n").getBytes(StandardCharsets.UTF_8));
          out.flush();
        } catch (IOException e) {
          throw new UserError("the daemon refused '" + l + "': " + lastError());
        }
      }
    } catch (IOException e) {
      if (e instanceof java.nio.file.FileSystemException f
          && "Read-only file system".equals(f.getReason())) {
        throw new UserError(
            mountpoint
                + " is mounted read-only (--read-only): its control file takes no hints or"
                + " commands; mount it without --read-only to send them");
      }
      throw new UserError("cannot write " + control + ": " + e.getMessage());
    }
  }

  private String lastError() {
    try {
      List<String> errs =
          Files.readAllLines(mountpoint.resolve(".hintfs/errors"), StandardCharsets.UTF_8);
      if (errs.isEmpty()) {
        return "no reason given";
      }
      String last = errs.get(errs.size() - 1);
      int sp = last.indexOf(' '); // drop the timestamp
      return sp > 0 ? last.substring(sp + 1) : last;
    } catch (IOException e) {
      return "no reason readable (" + e.getMessage() + ")";
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UserError("interrupted");
    }
  }
}
