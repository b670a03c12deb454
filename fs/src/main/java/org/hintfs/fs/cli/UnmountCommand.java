package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hintfs unmount MOUNTPOINT}: unmounts and returns once the daemon has exited. */
@Command(
    name = "unmount",
    aliases = "umount",
    mixinStandardHelpOptions = true,
    description = "Unmount a hintfs mount and wait for its daemon to exit.",
    footer = {"", "Examples:", "  hintfs unmount /mnt/imagenet", "  hintfs unmount --lazy /mnt/x"})
final class UnmountCommand implements Callable<Integer> {

  @Parameters(index = "0", paramLabel = "MOUNTPOINT")
  Path mountpoint;

  @Option(
      names = {"-z", "--lazy"},
      description = "detach now even if files are open; the daemon exits when they close")
  boolean lazy;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      defaultValue = "30",
      description = "how long to wait for the daemon to exit (default: ${DEFAULT-VALUE})")
  long timeoutSeconds;

  @Override
  public Integer call() throws Exception {
    Path mp = mountpoint.toAbsolutePath().normalize();
    Optional<String> type = Mounts.typeAt(mp);
    if (type.isEmpty()) {
      throw new UserError(mp + " is not mounted");
    }
    if (!type.get().equals("fuse.hintfs")) {
      throw new UserError(mp + " is not a hintfs mount (it is " + type.get() + ")");
    }
    Optional<ProcessHandle> daemon =
        StatusCommand.readStats(mp).map(s -> s.path("pid").asLong()).flatMap(ProcessHandle::of);
    detach(mp, lazy);
    if (daemon.isPresent() && !lazy) {
      try {
        daemon.get().onExit().get(timeoutSeconds, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new UserError(
            "unmounted, but daemon pid "
                + daemon.get().pid()
                + " did not exit within "
                + timeoutSeconds
                + " s");
      }
    }
    return 0;
  }

  /**
   * Unmounts {@code mp} ({@code lazy}: detach now, even while files are open or the daemon is
   * gone).
   */
  static void detach(Path mp, boolean lazy) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    if (Preflight.isRoot() || Preflight.findOnPath("fusermount") == null) {
      cmd.add("umount");
      if (lazy) {
        cmd.add("-l");
      }
    } else {
      cmd.add("fusermount");
      cmd.add("-u");
      if (lazy) {
        cmd.add("-z");
      }
    }
    cmd.add(mp.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (p.waitFor() != 0) {
      if (out.contains("busy")) {
        throw new UserError(
            mp
                + " is busy: a process has files open there (fuser -vm "
                + mp
                + " shows which); close them or use --lazy");
      }
      throw new UserError("could not unmount " + mp + ": " + out);
    }
  }
}
