package org.hintfs.fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code hintfs evict PATH...} and {@code hintfs unpin PATH...}. */
@Command(
    name = "evict",
    mixinStandardHelpOptions = true,
    description = {
      "Drop every file under the paths from the cache (RAM and disk), pinned or not.",
      "The next read fetches them from the source again."
    },
    footer = {"", "Examples:", "  hintfs evict /mnt/imagenet/train/n01440764"})
class EvictCommand implements Callable<Integer> {
  @Parameters(arity = "1..*", paramLabel = "PATH", description = "files or directories in a mount")
  List<Path> paths;

  String verb() {
    return "evict";
  }

  @Override
  public Integer call() {
    List<String> lines = new ArrayList<>();
    ControlClient c = ControlClient.forPaths(paths, verb(), lines);
    JsonNode before = c.stats();
    c.sendAdmin(lines);
    JsonNode after = c.stats();
    if (verb().equals("evict")) {
      System.out.printf(
          "evicted %d files, %s freed%n",
          PrefetchCommand.delta(after.path("admin"), before.path("admin"), "evicted_files"),
          Human.bytes(
              Math.max(
                  0,
                  before.path("cache_used_bytes").asLong()
                      - after.path("cache_used_bytes").asLong())));
    } else {
      System.out.printf(
          "unpinned; %d files pinned now%n", after.path("admin").path("pinned_files").asLong());
    }
    return 0;
  }

  /** {@code hintfs unpin PATH...}. */
  @Command(
      name = "unpin",
      mixinStandardHelpOptions = true,
      description = "Unpin files: they stay cached until the policy evicts them.",
      footer = {"", "Examples:", "  hintfs unpin /mnt/imagenet/val"})
  static final class Unpin extends EvictCommand {
    @Override
    String verb() {
      return "unpin";
    }
  }
}
