package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Substitution through a real mount, read by a real PyTorch DataLoader that checks every byte
 * string it receives against the source (tests/src/test/python/substitution_check.py).
 */
class SubstitutionIT {
  static final Path CHECK = Hintfs.ROOT.resolve("tests/src/test/python/substitution_check.py");
  static final Path MAKE = Hintfs.ROOT.resolve("mount-scripts/make_demo_dataset.py");

  @TempDir static Path shared;
  static Path src;

  @TempDir Path tmp;
  Path mnt;

  @BeforeAll
  static void dataset() throws Exception {
    src = shared.resolve("src");
    Hintfs.Result made =
        Hintfs.exec(
            List.of("/usr/bin/python3", MAKE.toString(), src.toString(), "--per-class", "40"), 300);
    assertThat(made.rc()).as(made.out()).isZero(); // 400 train + 100 test PNGs
  }

  @AfterEach
  void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  /** Mounts the dataset with a disk cache of 10% and no RAM tier, runs the check, its JSON. */
  JsonNode check(int epochs, String rules, boolean losses) throws Exception {
    return check(epochs, rules, losses, "10%", false);
  }

  /**
   * Mounts the dataset with a disk cache of {@code cache} and no RAM tier; with {@code warm}, reads
   * the training split once first (no dataset declared yet: nothing is served to a trainer), so the
   * cache holds stand-ins no trainer has seen when substitution starts. Runs the check.
   */
  JsonNode check(int epochs, String rules, boolean losses, String cache, boolean warm)
      throws Exception {
    // 500 small PNGs stand in for a dataset larger than the page cache: a file read before is not
    // taken to be in the kernel's page cache (the default would serve it as itself, below).
    return check(epochs, rules, losses, cache, warm, "0");
  }

  /** As above, with {@code --page-cache-reach reach}. */
  JsonNode check(int epochs, String rules, boolean losses, String cache, boolean warm, String reach)
      throws Exception {
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mount(src, mnt, "--cache-size", cache, "--ram-cache", "0", "--page-cache-reach", reach);
    if (warm) {
      try (var files = Files.walk(mnt.resolve("train"))) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          Files.readAllBytes(f);
        }
      }
    }
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "/usr/bin/python3",
                CHECK.toString(),
                mnt.toString(),
                src.toString(),
                String.valueOf(epochs),
                "--rules",
                rules));
    if (losses) {
      cmd.add("--losses");
    }
    Hintfs.Result r = Hintfs.exec(cmd, 600);
    assertThat(r.rc()).as(r.out()).isZero();
    return new ObjectMapper().readTree(r.out().strip().lines().reduce((a, b) -> b).get());
  }

  @Test
  void defaults_neverStarveTraining() throws Exception {
    // `substitution on` and nothing else, losses every batch: every file the reader got was a
    // real file of the requested class (the script asserts it for every read), and ...
    JsonNode n = check(4, "", true);
    int dataset = n.path("dataset").asInt();
    assertThat(n.path("reads").asInt()).isEqualTo(4 * dataset);
    JsonNode epochs = n.path("epochs");
    // ... nothing is substituted before importance is known (the first epoch) ...
    assertThat(epochs.get(0).path("substituted").asInt()).isZero();
    // ... then some is, never past the default cap of 20% of the epoch's reads, so every epoch
    // serves at least 80% of the dataset ...
    assertThat(n.path("substituted").asInt()).isPositive();
    for (JsonNode e : epochs) {
      assertThat(e.path("substituted").asInt()).isLessThanOrEqualTo(dataset / 5);
      assertThat(e.path("distinct").asDouble() / dataset).isGreaterThanOrEqualTo(0.8);
      // ... no file stands in twice in an epoch ...
      assertThat(e.path("repeats").asInt()).isZero();
    }
    // ... and any two consecutive epochs serve every sample.
    assertThat(n.path("least_two_epoch_coverage").asDouble()).isEqualTo(1.0);
    // The mount counts what the reader saw, and shows it.
    JsonNode sub = n.path("substitution");
    assertThat(n.path("stats_substitutions").asInt()).isEqualTo(n.path("substituted").asInt());
    assertThat(sub.path("max").asDouble()).isEqualTo(0.2);
    assertThat(sub.path("reuse").asBoolean()).isFalse();
    assertThat(sub.path("warm").asBoolean()).isTrue();
    assertThat(sub.path("longest_unserved_epochs").asInt()).isLessThanOrEqualTo(1);
    JsonNode mountEpochs = sub.path("epochs");
    for (int e = 0; e < 3; e++) { // the epochs the mount has closed (the 4th is still open)
      JsonNode me = mountEpochs.get(e);
      assertThat(me.path("epoch").asInt()).isEqualTo(e);
      assertThat(me.path("complete").asBoolean()).isTrue();
      assertThat(me.path("distinct_served").asInt())
          .as("epoch %d", e)
          .isEqualTo(epochs.get(e).path("distinct").asInt());
      assertThat(me.path("substitutions").asInt())
          .isEqualTo(epochs.get(e).path("substituted").asInt());
    }
    assertThat(sub.path("not_substituted").path("warm_up").asLong()).isPositive();
    assertThat(n.path("policy").asText()).isEqualTo("impact");
  }

  @Test
  void fromStart_substitutesInTheFirstEpoch_andReuseLetsAStandInServeAgain() throws Exception {
    // No losses at all: only from-start may substitute samples with no score. The cache was
    // warmed before (its files unseen by the trainer), so epoch 0 has stand-ins; the whole epoch
    // may be substituted, so they run out, and reuse serves them again.
    JsonNode n = check(2, "max 1.0 from-start reuse", false, "40%", true);
    assertThat(n.path("epochs").get(0).path("substituted").asInt()).as(n.toString()).isPositive();
    assertThat(n.path("repeats").asInt()).as(n.toString()).isPositive();
    assertThat(n.path("substitution").path("reuse").asBoolean()).isTrue();
    Hintfs.unmountQuietly(mnt);
    tmp = Files.createDirectories(tmp.resolve("again"));
    // Without reuse: from the first epoch too, but each stand-in at most once per epoch.
    JsonNode once = check(2, "max 1.0 from-start", false, "40%", true);
    assertThat(once.path("epochs").get(0).path("substituted").asInt())
        .as(once.toString())
        .isPositive();
    assertThat(once.path("repeats").asInt()).isZero();
    assertThat(once.path("stats_substitutions").asInt())
        .isEqualTo(once.path("substituted").asInt());
  }

  @Test
  void aFileThePageCacheMayHold_isServedAsItself() throws Exception {
    // The issue-38 case: a dataset small enough for the kernel's page cache, read before (the
    // warm pass), the mount's cache 40% of it. Its pages are still in the page cache, which
    // answers each reopen: a stand-in would change what the model sees for nothing. With the
    // default window no miss is stood in for, from the first epoch on, though the rules allow all.
    JsonNode n = check(2, "max 1.0 from-start reuse", false, "40%", true, "auto");
    int dataset = n.path("dataset").asInt();
    assertThat(n.path("substituted").asInt()).as(n.toString()).isZero();
    for (JsonNode e : n.path("epochs")) {
      assertThat(e.path("distinct").asInt()).isEqualTo(dataset);
    }
    JsonNode not = n.path("substitution").path("not_substituted");
    assertThat(not.path("page_cache").asLong()).as(n.toString()).isPositive();
  }
}
