package org.hintfs.fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hintfs prefetch PATH...} and {@code hintfs pin PATH...}: the daemon fetches every file
 * under the paths (16 at a time), skipping what is cached; this command follows its progress.
 */
@Command(
    name = "prefetch",
    mixinStandardHelpOptions = true,
    description = {
      "Warm the cache with every file under the paths, showing files, bytes, rate and ETA.",
      "The daemon does the fetching, 16 files at a time; files already cached are skipped, so",
      "running it again after Ctrl-C resumes where it stopped. Ctrl-C cancels what is queued."
    },
    footer = {
      "",
      "Examples:",
      "  hintfs prefetch /mnt/imagenet/train/n01440764",
      "  hintfs prefetch /mnt/imagenet/val /mnt/imagenet/train/n015*",
      "  hintfs prefetch --quiet /mnt/imagenet   # no progress bar, a summary line"
    })
class PrefetchCommand implements Callable<Integer> {
  @Parameters(arity = "1..*", paramLabel = "PATH", description = "files or directories in a mount")
  List<Path> paths;

  @Option(
      names = {"-q", "--quiet"},
      description = "no progress bar")
  boolean quiet;

  /** The control verb: prefetch, or pin for the subclass. */
  String verb() {
    return "prefetch";
  }

  @Override
  public Integer call() {
    List<String> lines = new ArrayList<>();
    ControlClient c = ControlClient.forPaths(paths, verb(), lines);
    JsonNode before = c.admin();
    long t0 = System.nanoTime();
    c.sendAdmin(lines);
    JsonNode queued = c.admin();
    long files = delta(queued, before, "prefetch_queued");
    long bytes = delta(queued, before, "prefetch_queued_bytes");
    AtomicBoolean finished = new AtomicBoolean();
    Thread cancelOnInterrupt =
        new Thread(
            () -> {
              if (!finished.get()) {
                c.send(List.of("prefetch cancel"));
                System.err.println(
                    "hintfs: stopped; the files fetched so far stay cached. Run the same command"
                        + " again to resume.");
              }
            });
    Runtime.getRuntime().addShutdownHook(cancelOnInterrupt);
    JsonNode now = queued;
    try (ProgressBar bar = quiet ? null : bar(files)) {
      while (true) {
        now = c.admin();
        long done =
            Math.min(
                files,
                delta(now, before, "prefetch_fetched")
                    + delta(now, before, "prefetch_already_cached")
                    + delta(now, before, "prefetch_failed")
                    + delta(now, before, "prefetch_cancelled"));
        if (bar != null) {
          bar.stepTo(done);
          bar.setExtraMessage(" " + Human.bytes(delta(now, before, "prefetch_bytes")) + " fetched");
        }
        if (done >= files) {
          break;
        }
        ControlClient.sleep(100);
      }
    } finally {
      finished.set(true);
    }
    Runtime.getRuntime().removeShutdownHook(cancelOnInterrupt);
    long fetched = delta(now, before, "prefetch_fetched");
    long skipped = delta(now, before, "prefetch_already_cached");
    long failed = delta(now, before, "prefetch_failed");
    double s = (System.nanoTime() - t0) / 1e9;
    System.out.printf(
        "%s: %d files (%s): %d fetched (%s), %d already cached, %d failed in %.1f s%n",
        verb(),
        files,
        Human.bytes(bytes),
        fetched,
        Human.bytes(delta(now, before, "prefetch_bytes")),
        skipped,
        failed,
        s);
    if (failed > 0) {
      throw new UserError(
          failed
              + " files could not be fetched; the reasons are in the daemon's log (hintfs status "
              + c.mountpoint
              + " counts them)");
    }
    return 0;
  }

  private static ProgressBar bar(long files) {
    return new ProgressBarBuilder()
        .setTaskName("prefetch")
        .setInitialMax(files)
        .setUnit(" files", 1)
        .showSpeed()
        .setStyle(ProgressBarStyle.ASCII)
        .setUpdateIntervalMillis(200)
        .continuousUpdate()
        .build();
  }

  static long delta(JsonNode now, JsonNode before, String key) {
    return now.path(key).asLong() - before.path(key).asLong();
  }

  /** {@code hintfs pin PATH...}. */
  @Command(
      name = "pin",
      mixinStandardHelpOptions = true,
      description = {
        "Pin files: they are fetched now (with progress, as prefetch) and never evicted to make",
        "room, whatever the policy. Pins are kept in the cache directory across remounts.",
        "Undo with hintfs unpin, or drop the files with hintfs evict."
      },
      footer = {"", "Examples:", "  hintfs pin /mnt/imagenet/val"})
  static final class Pin extends PrefetchCommand {
    @Override
    String verb() {
      return "pin";
    }
  }
}
