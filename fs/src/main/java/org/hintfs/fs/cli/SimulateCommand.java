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
import org.hintfs.policy.sim.ClusterSimulator;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.hintfs.policy.sim.TraceGenerators;
import picocli.CommandLine;
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
      "reference rows (clairvoyant needs a known order, so it is skipped for pads).",
      "With --cluster-nodes: a job of N nodes, 2 ranks each, reading DistributedSampler's order",
      "in lockstep, its caches alone or as one cluster (homes and guests); print local hits, GETs",
      "per key next to the fewest any policy can make, and the traffic between nodes."
    },
    footer = {
      "",
      "Examples:",
      "  hintfs simulate --generate uniform --samples 10000 --epochs 5",
      "  hintfs simulate --generate pads --policies lru,shade --sizes 10",
      "  hintfs simulate --trace run.trace --policies lru,shade,impact+sub,clairvoyant",
      "  hintfs simulate --cluster-nodes 8,64,512 --samples 1281167 --epochs 3 --sizes 50,100,150"
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
      description = "generated, or --cluster-nodes: samples (default: ${DEFAULT-VALUE})")
  int samples;

  @Option(
      names = "--epochs",
      defaultValue = "5",
      description = "generated, or --cluster-nodes: epochs (default: ${DEFAULT-VALUE})")
  int epochs;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "generated, or --cluster-nodes: seed (default: ${DEFAULT-VALUE})")
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
      description =
          "cache sizes in percent of the dataset (default: 10,20,50); with --cluster-nodes, of"
              + " the nodes' caches together, each node holding its share (default: 50,100,150)")
  List<Double> sizes;

  @Option(
      names = "--cluster-nodes",
      split = ",",
      paramLabel = "N",
      description = "simulate jobs of these many nodes instead of one cache (e.g. 8,64,512)")
  List<Integer> clusterNodes;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

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
    if (clusterNodes != null) {
      return cluster();
    }
    if (sizes == null) {
      sizes = List.of(10.0, 20.0, 50.0);
    }
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

  /**
   * One row per node count, aggregate cache and mode. The job's order and homes are built once per
   * node count and shared by its rows.
   */
  private int cluster() {
    for (String o :
        List.of(
            "--trace",
            "--generate",
            "--write-trace",
            "--policies",
            "--max-substitution",
            "--reuse",
            "--from-start")) {
      if (spec.commandLine().getParseResult().hasMatchedOption(o)) {
        throw new UserError(
            o
                + " does not apply to --cluster-nodes (its modes are fixed: independent,"
                + " cluster-lru, cluster-belady)");
      }
    }
    for (int n : clusterNodes) {
      if (n < 1) {
        throw new UserError("--cluster-nodes takes node counts of at least 1, not " + n);
      }
    }
    List<Double> aggregates = sizes != null ? sizes : List.of(50.0, 100.0, 150.0);
    for (double a : aggregates) {
      if (!(a > 0 && Double.isFinite(a))) {
        throw new UserError(
            "with --cluster-nodes, --sizes are the caches together in percent of the dataset,"
                + " above 0 (150 for one and a half datasets), not "
                + a);
      }
    }
    if (samples < 1 || epochs < 1) {
      throw new UserError("--samples and --epochs must be at least 1");
    }
    for (int n : clusterNodes) {
      if ((long) n * ClusterSimulator.RANKS_PER_NODE > samples) {
        throw new UserError(
            "--cluster-nodes "
                + n
                + " runs "
                + (long) n * ClusterSimulator.RANKS_PER_NODE
                + " ranks, more than the "
                + samples
                + " samples: give each rank one at least (--samples)");
      }
    }
    System.out.println(
        "| nodes | cache per node | aggregate | mode | local hits by epoch | local hits"
            + " | GETs per key | bound | peer reads per read | KB between nodes per read |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (int n : clusterNodes) {
      ClusterSimulator.Job job = ClusterSimulator.Job.torch(n, samples, epochs, seed);
      for (double a : aggregates) {
        double perNode = a / 100 / n;
        for (ClusterSimulator.Mode m : ClusterSimulator.Mode.values()) {
          ClusterSimulator.Result r = ClusterSimulator.run(job, m, perNode);
          StringBuilder byEpoch = new StringBuilder();
          for (int e = 0; e < epochs; e++) {
            byEpoch.append(e == 0 ? "" : " / ");
            byEpoch.append(String.format(Locale.ROOT, "%.3f", r.localHitRatio(e)));
          }
          System.out.printf(
              Locale.ROOT,
              "| %d | %s | %.2fx | %s | %s | %.3f | %.3f | %.3f | %.3f | %.1f |%n",
              n,
              percent(perNode * 100),
              a / 100,
              m.label(),
              byEpoch,
              r.localHitRatio(),
              r.getsPerKey(),
              r.boundPerKey(),
              r.peerReadsPerRead(),
              r.bytesBetweenNodesPerRead() / 1e3);
        }
      }
    }
    return 0;
  }

  /** A percentage with the digits a small share needs: 18.8%, 0.293%. */
  private static String percent(double p) {
    return String.format(Locale.ROOT, p >= 10 ? "%.1f%%" : p >= 1 ? "%.2f%%" : "%.3f%%", p);
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
