package org.hintfs.fs.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.hintfs.policy.Policies;
import org.hintfs.policy.SubstitutionChooser;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.hintfs.policy.sim.TraceGenerators;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code hintfs simulate}: replays a trace through policies and cache sizes, prints a table. */
@Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    description = {
      "Replay a trace (recorded by a mount with --trace, or generated) through cache policies at",
      "several cache sizes; print hit ratio, reads served locally, substitutions and bytes fetched.",
      "A policy name ending in +sub runs with substitution on; lru and clairvoyant are the",
      "reference rows (clairvoyant needs a known order, so it is skipped for pads)."
    },
    footer = {
      "",
      "Examples:",
      "  hintfs simulate --generate uniform --samples 10000 --epochs 5",
      "  hintfs simulate --generate pads --policies lru,shade --sizes 10",
      "  hintfs simulate --trace run.trace --policies lru,shade,impact+sub,clairvoyant"
    })
final class SimulateCommand implements Callable<Integer> {
  @Option(names = "--trace", paramLabel = "FILE", description = "a recorded trace")
  Path traceFile;

  @Option(
      names = "--generate",
      paramLabel = "KIND",
      description = "uniform, importance or pads (default: uniform, unless --trace is given)")
  String generate;

  @Option(
      names = "--samples",
      defaultValue = "10000",
      description = "generated: samples (default: ${DEFAULT-VALUE})")
  int samples;

  @Option(
      names = "--epochs",
      defaultValue = "5",
      description = "generated: epochs (default: ${DEFAULT-VALUE})")
  int epochs;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "generated: seed (default: ${DEFAULT-VALUE})")
  long seed;

  @Option(
      names = "--policies",
      split = ",",
      defaultValue = "lru,lfu,static,shade,impact,impact+sub,auto,clairvoyant",
      description = "policies to compare (default: ${DEFAULT-VALUE})")
  List<String> policies;

  @Option(
      names = "--sizes",
      split = ",",
      defaultValue = "10,20,50",
      description = "cache sizes in percent of the dataset (default: ${DEFAULT-VALUE})")
  List<Double> sizes;

  @Option(
      names = "--max-substitution",
      defaultValue = "" + SubstitutionChooser.Rules.DEFAULT_MAX,
      description = "most of an epoch's reads that may be substituted (default: ${DEFAULT-VALUE})")
  double maxSubstitution;

  @Option(
      names = "--reuse",
      description = "+sub: a sample already served in the epoch may stand in again")
  boolean reuse;

  @Option(
      names = "--from-start",
      description = "+sub: substitute from the first read (no warm-up epoch, unscored samples too)")
  boolean fromStart;

  @Option(names = "--write-trace", paramLabel = "FILE", description = "save the generated trace")
  Path writeTrace;

  @Override
  public Integer call() throws IOException {
    for (String p : policies) {
      if (!Policies.names().contains(base(p))) {
        throw new UserError(
            "unknown policy '" + p + "': choose from " + String.join(", ", Policies.names()));
      }
    }
    for (double s : sizes) {
      if (!(s > 0 && s <= 100)) {
        throw new UserError("cache sizes are percentages in (0, 100], not " + s);
      }
    }
    SubstitutionChooser.Rules rules;
    try {
      rules = new SubstitutionChooser.Rules(maxSubstitution, reuse, fromStart);
    } catch (IllegalArgumentException e) {
      throw new UserError("--max-substitution: " + e.getMessage());
    }
    String kind = generate != null ? generate : traceFile != null ? "file" : "uniform";
    if (traceFile != null && generate != null) {
      throw new UserError("give --trace or --generate, not both");
    }
    if (!List.of("file", "uniform", "importance", "pads").contains(kind)) {
      throw new UserError("--generate takes uniform, importance or pads, not '" + kind + "'");
    }
    if (samples < 1 || epochs < 1) {
      throw new UserError("--samples and --epochs must be at least 1");
    }
    Trace trace = null;
    if (kind.equals("file")) {
      trace = load(traceFile);
    } else if (!kind.equals("pads")) {
      trace =
          kind.equals("uniform")
              ? TraceGenerators.uniform(samples, epochs, seed)
              : TraceGenerators.importanceSampling(samples, epochs, seed);
      if (writeTrace != null) {
        try (Writer w = Files.newBufferedWriter(writeTrace, StandardCharsets.UTF_8)) {
          trace.write(w);
        }
      }
    }
    String label = kind.equals("file") ? traceFile.getFileName().toString() : kind;
    System.out.println(
        "| trace | cache | policy | hit ratio | served locally | substitutions | MB fetched | hits vs lru |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (double size : sizes) {
      List<Simulator.Result> rows = new ArrayList<>();
      for (String p : policies) {
        boolean sub = p.endsWith("+sub");
        Simulator.Options opt = new Simulator.Options(sub, rules, seed);
        if (trace == null && base(p).equals("clairvoyant")) {
          continue; // the PADS order depends on the cache: nothing to be clairvoyant about
        }
        try {
          rows.add(
              trace == null
                  ? TraceGenerators.pads(samples, epochs, seed, base(p), size / 100, opt)
                  : Simulator.run(trace, base(p), size / 100, opt));
        } catch (IllegalArgumentException e) {
          throw new UserError(p + ": " + e.getMessage());
        }
      }
      long lruHits =
          rows.stream()
              .filter(r -> r.policy().equals("lru"))
              .mapToLong(Simulator.Result::hits)
              .findFirst()
              .orElse(-1);
      int i = 0;
      for (String p : policies) {
        if (trace == null && base(p).equals("clairvoyant")) {
          continue;
        }
        Simulator.Result r = rows.get(i++);
        System.out.printf(
            Locale.ROOT,
            "| %s | %.0f%% | %s | %.3f | %.3f | %d | %.2f | %s |%n",
            label,
            size,
            p,
            r.hitRatio(),
            r.localRatio(),
            r.substitutions(),
            r.bytesFetched() / 1e6,
            lruHits > 0 ? String.format(Locale.ROOT, "%.2fx", (double) r.hits() / lruHits) : "-");
      }
    }
    return 0;
  }

  private static String base(String p) {
    return p.endsWith("+sub") ? p.substring(0, p.length() - 4) : p;
  }

  private static Trace load(Path file) throws IOException {
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return Trace.read(r);
    } catch (NoSuchFileException e) {
      throw new UserError("trace file " + file + " does not exist");
    } catch (IllegalArgumentException e) {
      throw new UserError(file + ": " + e.getMessage());
    }
  }
}
