package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code hintfs} command line as a user meets it: exit status (0 done, 1 bad input or a failed
 * precondition, 2 a command line picocli cannot parse), what goes to stdout and to stderr, and the
 * help. No test here mounts anything: each bad value is refused before FUSE is touched.
 */
class MainTest {
  @TempDir Path tmp;

  /** What one run of {@code hintfs args...} did. */
  record Run(int rc, String out, String err) {
    /** stderr as lines, trailing blank ones dropped. */
    java.util.List<String> errLines() {
      return err.strip().lines().toList();
    }
  }

  private static Run run(String... args) {
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int rc;
    try {
      rc = Main.run(args);
    } finally {
      System.setOut(oldOut);
      System.setErr(oldErr);
    }
    return new Run(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static final String[] COMMANDS = {
    "mount",
    "unmount",
    "status",
    "prefetch",
    "pin",
    "unpin",
    "evict",
    "policy",
    "refresh",
    "simulate"
  };

  @Test
  void completionCoversEveryCommandAndPolicyNames() {
    Run r = run("generate-completion");
    assertThat(r.rc()).isZero();
    assertThat(r.out()).contains("complete -F");
    for (String cmd : COMMANDS) {
      assertThat(r.out()).contains(cmd);
    }
    assertThat(r.out()).contains("shade").contains("clairvoyant");
  }

  @Test
  void everyCommandsHelp_isItsUsageWithExamples_onStdout_exit0() {
    for (String cmd : COMMANDS) {
      Run r = run(cmd, "--help");
      assertThat(r.rc()).as(cmd).isZero();
      assertThat(r.err()).as(cmd).isEmpty();
      assertThat(r.out()).as(cmd).startsWith("Usage: hintfs " + cmd).contains("Examples:");
      // "hintfs help CMD" prints the same page.
      assertThat(run("help", cmd).out()).as(cmd).isEqualTo(r.out());
    }
  }

  @Test
  void mountHelp_namesEveryOptionWithItsDefault() {
    String help = run("mount", "--help").out();
    assertThat(help)
        .contains("SOURCE", "MOUNTPOINT")
        .contains("--cache-size=SIZE", "(default: 100%")
        // Laid out at 100 columns: no description breaks in the middle of its default.
        .contains("--ram-cache=SIZE", "(default: 512M)")
        .contains("--policy=NAME", "auto, lru, lfu, static, shade, impact, clairvoyant")
        .contains("--prefetch-window=FILES", "(default: 256)")
        .contains("--metrics-port=[HOST:]PORT")
        .contains("--foreground", "--cache-dir=DIR", "--no-disk-cache", "-o=OPT");
  }

  @Test
  void topLevelHelp_listsEveryCommand() {
    Run r = run("--help");
    assertThat(r.rc()).isZero();
    assertThat(r.out()).startsWith("Usage: hintfs [-hV] [COMMAND]").contains("Commands:");
    for (String cmd : COMMANDS) {
      assertThat(r.out()).as(cmd).containsPattern("(?m)^  " + cmd + "\\b");
    }
  }

  @Test
  void version_printsThePomsRelease_theCommitItWasBuiltFrom_andTheJavaRunningIt() throws Exception {
    Run r = run("--version");
    assertThat(r.rc()).isZero();
    String line = r.out().strip();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "hintfs (\\S+) \\(commit ([0-9a-f]{12}(?:-dirty)?|unknown), Java (.+)\\)")
            .matcher(line);
    assertThat(m.matches()).as(line).isTrue();
    // The release is the one the poms declare: the parent pom's own <version>, read from the file.
    assertThat(m.group(1)).isEqualTo(pomVersion(Path.of("..", "pom.xml")));
    // The commit is the checkout's HEAD (this test runs inside one when the build does), or
    // "unknown" where there is no git to ask.
    String head = gitHead();
    if (head == null) {
      assertThat(m.group(2)).isEqualTo("unknown");
    } else {
      assertThat(m.group(2)).startsWith(head);
    }
    assertThat(m.group(3))
        .isEqualTo(
            System.getProperty("java.version")
                + ", "
                + System.getProperty("java.vendor")
                + ", "
                + System.getProperty("java.home"));
  }

  /** The project's version in a pom: its own {@code <version>}, not its parent's or a plugin's. */
  private static String pomVersion(Path pom) throws Exception {
    org.w3c.dom.Element project =
        javax.xml.parsers.DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(pom.toFile())
            .getDocumentElement();
    for (org.w3c.dom.Node n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
      if ("version".equals(n.getNodeName())) {
        return n.getTextContent().strip();
      }
    }
    throw new AssertionError(pom + " has no <version>");
  }

  /** HEAD's 12-digit hash, or null when git or a checkout is missing. */
  private static String gitHead() throws Exception {
    try {
      Process p =
          new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD")
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return p.waitFor() == 0 && !out.isEmpty() ? out : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }

  @Test
  void noCommand_exits2_askingForOne_withTheUsage() {
    Run r = run();
    assertThat(r.rc()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.errLines().get(0)).isEqualTo("name a command");
    assertThat(r.err()).contains("Usage: hintfs [-hV] [COMMAND]");
  }

  @Test
  void anUnknownCommand_exits2_namingItAndSuggestingNear() {
    Run r = run("frobnicate");
    assertThat(r.rc()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.errLines().get(0)).isEqualTo("Unmatched argument at index 0: 'frobnicate'");
    assertThat(r.errLines().get(1)).startsWith("Did you mean: hintfs ");
  }

  @Test
  void anUnknownOption_exits2_namingItFirst_thenTheCommandsUsage() {
    Run r = run("mount", "--bogus", "a", "b");
    assertThat(r.rc()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.errLines().get(0)).isEqualTo("Unknown option: '--bogus'");
    assertThat(r.errLines().get(1)).startsWith("Usage: hintfs mount ");
  }

  @Test
  void aMissingArgument_exits2_namingIt() {
    Run r = run("mount", tmp.toString());
    assertThat(r.rc()).isEqualTo(2);
    assertThat(r.errLines().get(0)).isEqualTo("Missing required parameter: 'MOUNTPOINT'");
  }

  @Test
  void badFlagValues_exit1_withOneLineSayingWhatWouldBeRight() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    Path mnt = Files.createDirectories(tmp.resolve("mnt"));
    String s = src.toString();
    String m = mnt.toString();
    String[][] cases = {
      {
        "hintfs: not a size: 'lots' (use bytes or K/M/G/T, e.g. 20G, or a share like 10%)",
        "mount",
        s,
        m,
        "--cache-size",
        "lots"
      },
      {
        "hintfs: unknown policy 'nope': choose one of auto, lru, lfu, static, shade, impact,"
            + " clairvoyant",
        "mount",
        s,
        m,
        "--policy",
        "nope"
      },
      {
        "hintfs: --retry-timeout must be between 0 and 3600 seconds, not 5000",
        "mount",
        s,
        m,
        "--retry-timeout",
        "5000"
      },
      {
        "hintfs: --page-cache-reach must be a size (e.g. 16G, or 0) or auto, not '10%'",
        "mount",
        s,
        m,
        "--page-cache-reach",
        "10%"
      },
      {
        "hintfs: --fuse-threads must be between 1 and 1024, not 0",
        "mount",
        s,
        m,
        "--fuse-threads",
        "0"
      },
      {
        "hintfs: --fuse-max-threads must be between --fuse-threads (16) and 8192, not 8",
        "mount",
        s,
        m,
        "--fuse-threads",
        "16",
        "--fuse-max-threads",
        "8"
      },
      {
        "hintfs: --max-fetches must be between 1 and 4096, not 0",
        "mount",
        s,
        m,
        "--max-fetches",
        "0"
      },
      {
        "hintfs: --s3-connections must be between 1 and 4096, not 5000",
        "mount",
        s,
        m,
        "--s3-connections",
        "5000"
      },
      {
        "hintfs: --endpoint, --region and --path-style apply to s3:// sources only",
        "mount",
        s,
        m,
        "--endpoint",
        "http://localhost:9000"
      },
      {
        "hintfs: source " + tmp.resolve("absent") + " does not exist",
        "mount",
        tmp.resolve("absent").toString(),
        m,
        "--no-disk-cache"
      },
      {"hintfs: " + m + " is not mounted", "unmount", m},
      {
        "hintfs: cache sizes are percentages in (0, 100], not 0.0",
        "simulate",
        "--generate",
        "uniform",
        "--sizes",
        "0"
      },
      {
        "hintfs: --generate takes uniform, importance or pads, not 'zipf'",
        "simulate",
        "--generate",
        "zipf"
      },
      {
        "hintfs: --cluster-nodes takes node counts of at least 1, not 0",
        "simulate",
        "--cluster-nodes",
        "8,0"
      },
      {
        "hintfs: with --cluster-nodes, --sizes are the caches together in percent of the dataset,"
            + " above 0 (150 for one and a half datasets), not 0.0",
        "simulate",
        "--cluster-nodes",
        "8",
        "--sizes",
        "0"
      },
      {
        "hintfs: --cluster-nodes 600 runs 1200 ranks, more than the 1000 samples: give each rank"
            + " one at least (--samples)",
        "simulate",
        "--cluster-nodes",
        "600",
        "--samples",
        "1000"
      },
      {
        "hintfs: --policies does not apply to --cluster-nodes (its modes are fixed: independent,"
            + " cluster-lru, cluster-belady)",
        "simulate",
        "--cluster-nodes",
        "8",
        "--policies",
        "lru"
      },
    };
    for (String[] c : cases) {
      String[] args = java.util.Arrays.copyOfRange(c, 1, c.length);
      Run r = run(args);
      String what = String.join(" ", args);
      assertThat(r.rc()).as(what).isEqualTo(1);
      assertThat(r.out()).as(what).isEmpty();
      assertThat(r.errLines()).as(what).containsExactly(c[0]);
    }
    // Refused before anything was mounted or written.
    assertThat(mnt).isEmptyDirectory();
  }

  @Test
  void simulate_printsOneRowPerPolicyAndSize() {
    Run r =
        run(
            "simulate",
            "--generate",
            "uniform",
            "--samples",
            "100",
            "--epochs",
            "2",
            "--sizes",
            "20,50",
            "--policies",
            "lru,clairvoyant");
    assertThat(r.rc()).as(r.err()).isZero();
    // A header, its rule, and 2 policies x 2 sizes.
    assertThat(r.out().strip().lines())
        .hasSize(2 + 4)
        .first()
        .asString()
        .startsWith("| trace | cache | policy | hit ratio |");
    assertThat(r.out()).contains("| uniform | 20% | lru |", "| uniform | 50% | clairvoyant |");
  }

  @Test
  void simulateClusterNodes_printsOneRowPerNodeCountAggregateAndMode() {
    Run r =
        run(
            "simulate",
            "--cluster-nodes",
            "1,4",
            "--samples",
            "400",
            "--epochs",
            "2",
            "--sizes",
            "50,150");
    assertThat(r.rc()).as(r.err()).isZero();
    // A header, its rule, and 2 node counts x 2 aggregates x 3 modes.
    assertThat(r.out().strip().lines())
        .hasSize(2 + 12)
        .first()
        .asString()
        .startsWith("| nodes | cache per node | aggregate | mode | local hits by epoch |");
    // 4 nodes with 1.5 datasets together: 37.5% each; every home holds its samples (about 100
    // of 400 each), so the cluster reads each sample from the source once (the bound, 1.000).
    // One node with half the dataset: Belady keeps 200 of epoch 0's reads for epoch 1, a 0.500
    // local hit ratio there.
    assertThat(r.out().lines())
        .filteredOn(l -> l.startsWith("| 4 | 37.5% | 1.50x | cluster-belady |"))
        .singleElement()
        .asString()
        .contains("| 1.000 | 1.000 |");
    assertThat(r.out()).contains("| 1 | 50.0% | 0.50x | independent | 0.000 / 0.500 |");
  }
}
