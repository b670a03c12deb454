package org.hintfs.fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code hintfs refresh MOUNTPOINT}: lists the source again. A mount serves the listing it was
 * mounted with, so this remounts with the same options and environment: the cache directory, and
 * everything in it that the source still holds unchanged, carries over.
 */
@Command(
    name = "refresh",
    mixinStandardHelpOptions = true,
    description = {
      "List the source again, so files added, changed or deleted since the mount show.",
      "The mount is remounted with the options (and S3 credentials) it was mounted with, not",
      "the caller's; the cache carries over, and only objects that changed are fetched again.",
      "The source is checked first: if it cannot be reached, or the mount has files open, the",
      "mount is left as it is."
    },
    footer = {"", "Examples:", "  hintfs refresh /mnt/imagenet"})
final class RefreshCommand implements Callable<Integer> {
  /** Flags of the running daemon that a fresh mount must not get. */
  private static final Set<String> DROP =
      Set.of("--foreground", "-f", "--daemonized", "--reuse-listing");

  @Parameters(index = "0", paramLabel = "MOUNTPOINT")
  Path mountpoint;

  @Override
  public Integer call() throws Exception {
    Path mp = mountpoint.toAbsolutePath().normalize();
    JsonNode before = StatusCommand.requireStats(mp);
    long pid = before.path("pid").asLong();
    List<String> argv = readNulSeparated(Path.of("/proc", Long.toString(pid), "cmdline"));
    int main = argv.indexOf(Main.class.getName());
    if (main < 0 || main + 1 >= argv.size() || !argv.get(main + 1).equals("mount")) {
      throw new UserError("cannot read how the daemon " + pid + " at " + mp + " was started");
    }
    List<String> args = new ArrayList<>();
    for (String a : argv.subList(main + 2, argv.size())) {
      if (!DROP.contains(a)) {
        args.add(a);
      }
    }
    Map<String, String> env = new HashMap<>();
    for (String kv : readNulSeparated(Path.of("/proc", Long.toString(pid), "environ"))) {
      int eq = kv.indexOf('=');
      String k = eq < 0 ? kv : kv.substring(0, eq);
      if (eq > 0 && (k.startsWith("AWS_") || k.equals("HOME") || k.equals("XDG_CACHE_HOME"))) {
        env.put(k, kv.substring(eq + 1));
      }
    }
    try {
      mountCommand(args, env).checkBeforeRemount();
      CommandLine.populateCommand(new UnmountCommand(), mp.toString()).call();
    } catch (UserError e) {
      throw new UserError("not refreshed, the mount is as it was: " + e.getMessage());
    }
    try {
      mountCommand(args, env).call();
    } catch (UserError e) {
      // The source passed the check a moment ago; whatever failed since, put the old view back.
      List<String> again = new ArrayList<>(args);
      again.add("--reuse-listing");
      try {
        mountCommand(again, env).call();
      } catch (UserError e2) {
        throw new UserError(
            "the source could not be mounted again, so "
                + mp
                + " is unmounted now: "
                + e.getMessage());
      }
      throw new UserError(
          "not refreshed: "
              + e.getMessage()
              + "; "
              + mp
              + " is mounted again with the listing it had");
    }
    JsonNode after = StatusCommand.requireStats(mp);
    System.out.printf(
        "refreshed %s: %d files (%s), was %d (%s)%n",
        mp,
        after.path("files").asLong(),
        Human.bytes(after.path("bytes").asLong()),
        before.path("files").asLong(),
        Human.bytes(before.path("bytes").asLong()));
    return 0;
  }

  private static MountCommand mountCommand(List<String> args, Map<String, String> env) {
    MountCommand mount = new MountCommand();
    mount.daemonEnvironment = env;
    new CommandLine(mount).parseArgs(args.toArray(String[]::new));
    return mount;
  }

  private static List<String> readNulSeparated(Path p) {
    try {
      String s = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
      List<String> out = new ArrayList<>(List.of(s.split("\0")));
      out.removeIf(String::isEmpty);
      return out;
    } catch (IOException e) {
      throw new UserError("cannot read " + p + ": " + e.getMessage());
    }
  }
}
