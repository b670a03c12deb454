package org.hintfs.fs.cli;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the mount's daemon: this command again with {@code --foreground --daemonized} and the
 * options the user gave, its output appended to a log; returns once the mount answers.
 */
final class DaemonLauncher {
  private static final long PROBE_INTERVAL_MS = 50;

  private DaemonLauncher() {}

  /** Options the CLI acts on itself; the daemon is not given them. */
  private static final java.util.Set<String> CLI_ONLY =
      java.util.Set.of(
          "--foreground", "--daemonized", "--log-file", "--mount-timeout", "--help", "--version");

  /**
   * The options the user gave, as the daemon is to be given them, derived from the parsed command
   * line (so an option added to this command reaches the daemon with no more code): each option
   * matched, with its values as typed, paths made absolute (the daemon runs in {@code /}).
   */
  private static List<String> daemonOptions(MountCommand c) {
    List<String> out = new ArrayList<>();
    var parsed = c.spec.commandLine().getParseResult();
    for (picocli.CommandLine.Model.OptionSpec o : c.spec.options()) {
      if (CLI_ONLY.contains(o.longestName()) || !parsed.hasMatchedOption(o)) {
        continue;
      }
      if (o.arity().max() == 0) {
        out.add(o.longestName()); // a flag
        continue;
      }
      for (String v : o.originalStringValues()) {
        if (o.type() == Path.class) {
          v = Path.of(v).toAbsolutePath().normalize().toString();
        }
        out.add(o.longestName());
        out.add(v);
      }
    }
    return out;
  }

  static int start(MountCommand c, Path mp) throws IOException, InterruptedException {
    Path logPath = c.logFile != null ? c.logFile.toAbsolutePath() : defaultLogFile(mp);
    Files.createDirectories(logPath.getParent());
    long logStart = Files.exists(logPath) ? Files.size(logPath) : 0;
    List<String> cmd = new ArrayList<>();
    cmd.add(
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    cmd.add("mount");
    cmd.add("--foreground");
    cmd.add("--daemonized");
    cmd.addAll(daemonOptions(c));
    cmd.add(c.source.contains("://") ? c.source : Path.of(c.source).toAbsolutePath().toString());
    cmd.add(mp.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().clear();
    pb.environment().putAll(c.environment());
    Process child =
        pb.directory(new File("/")) // a daemon must not keep the caller's directory busy
            .redirectInput(new File("/dev/null"))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logPath.toFile()))
            .redirectErrorStream(true)
            .start();
    long deadline = System.nanoTime() + Duration.ofSeconds(c.mountTimeoutSeconds).toNanos();
    while (System.nanoTime() < deadline) {
      if (!child.isAlive()) {
        throw new UserError(
            Daemon.lastError(logPath, logStart)
                    .orElse("the daemon exited with status " + child.exitValue())
                + " (log: "
                + logPath
                + ")");
      }
      if (Mounts.isHintfs(mp) && StatusCommand.readStats(mp).isPresent()) {
        System.out.println(
            "hintfs: mounted "
                + c.source
                + " at "
                + mp
                + " (pid "
                + child.pid()
                + ", log "
                + logPath
                + ")");
        return 0;
      }
      Thread.sleep(PROBE_INTERVAL_MS);
    }
    child.destroy();
    throw new UserError(
        "the mount did not answer within " + c.mountTimeoutSeconds + " s (log: " + logPath + ")");
  }

  static Path defaultLogFile(Path mp) {
    String dir =
        System.getProperty("java.io.tmpdir")
            + "/hintfs-"
            + new com.sun.security.auth.module.UnixSystem().getUid();
    String name = mp.toString().replaceAll("[^A-Za-z0-9._-]", "_");
    return Path.of(dir, name + ".log");
  }
}
