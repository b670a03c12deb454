package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control protocol through a real mount. */
class ControlIT {
  @TempDir static Path tmp;
  static Path mnt;
  static Path control;

  @BeforeAll
  static void mount() throws Exception {
    Path src = tmp.resolve("src");
    Random rnd = new Random(3);
    for (int i = 0; i < 60; i++) {
      Path f = src.resolve("train/c" + (i % 3) + "/" + i + ".jpg");
      Files.createDirectories(f.getParent());
      HostileTree.write(f, rnd, 100 + rnd.nextInt(2000));
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mount(src, mnt);
    control = mnt.resolve(".hintfs/control");
  }

  @AfterAll
  static void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  static void write(String text) throws IOException {
    Files.write(control, text.getBytes(StandardCharsets.UTF_8), StandardOpenOption.WRITE);
  }

  static JsonNode stats() throws Exception {
    Thread.sleep(100); // hints are applied off the FUSE thread
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }

  @Test
  void everyHintKindIsAcceptedAndVisible() throws Exception {
    write("dataset train\n");
    write(
        "loss #0=0.5 #1=2.5 #2=1.0\n"
            + "importance #10=3 train/c1/4.jpg=2\n"
            + "epoch 4\n"
            + "similar #3 #6 #9\n"
            + "substitution on max 0.25 reuse\n"
            + "policy shade\n");
    JsonNode s = stats();
    JsonNode h = s.path("hints");
    assertThat(h.path("dataset").asText()).isEqualTo("train");
    assertThat(h.path("samples").asInt()).isEqualTo(60);
    assertThat(h.path("classes").asInt()).isEqualTo(3);
    assertThat(h.path("epoch").asInt()).isEqualTo(4);
    assertThat(h.path("scored_samples").asInt()).isGreaterThanOrEqualTo(5);
    assertThat(h.path("substitution").asBoolean()).isTrue();
    assertThat(h.path("substitution_max").asDouble()).isEqualTo(0.25);
    JsonNode sub = s.path("substitution");
    assertThat(sub.path("max").asDouble()).isEqualTo(0.25);
    assertThat(sub.path("reuse").asBoolean()).isTrue();
    assertThat(sub.path("from_start").asBoolean()).isFalse();
    assertThat(sub.path("warm").asBoolean()).isFalse(); // no epoch has ended yet
    for (String kind :
        List.of("dataset", "loss", "importance", "epoch", "similar", "substitution", "policy")) {
      assertThat(h.path("accepted_by_kind").path(kind).asInt()).as(kind).isPositive();
    }
    assertThat(s.path("policy").asText()).isEqualTo("shade");
    write("substitution off\npolicy auto\n");
    assertThat(stats().path("hints").path("substitution").asBoolean()).isFalse();
  }

  @Test
  void datasetPathsMayUseDotSegments() throws Exception {
    write("dataset ./train/.\n");
    assertThat(stats().path("hints").path("dataset").asText()).isEqualTo("./train/.");
    assertThat(stats().path("hints").path("samples").asInt()).isEqualTo(60);
    write("importance ./train/c0/0.jpg=1\n");
  }

  @Test
  void pythonsOpenForWritingTruncatesFirst_andThatWorks() throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "/usr/bin/python3",
                "-c",
                "f = open('" + control + "', 'w'); f.write('epoch 7\\n'); f.close()"),
            60);
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(stats().path("hints").path("epoch").asInt()).isEqualTo(7);
  }

  @Test
  void badLinesAreRejectedWholeWithEinval_andNothingIsHalfApplied() throws Exception {
    write("dataset train\n");
    long scoredBefore = stats().path("hints").path("scored_samples").asLong();
    long rejectedBefore = stats().path("hints").path("rejected").asLong();
    List<String> bad =
        List.of(
            "frobnicate 1",
            "loss #1=0.5 #2=abc", // the good first pair must not be applied either
            "loss #1=0.5 #9999=1",
            "loss #1=NaN",
            "loss #1=",
            "loss",
            "importance nope/such.jpg=1",
            "epoch -1",
            "epoch x",
            "substitution maybe",
            "substitution on max 7",
            "substitution on max -0.1",
            "substitution on max",
            "substitution on sometimes",
            "substitution off reuse",
            "policy fifo",
            "similar #1",
            "trace sideways",
            "dataset no/such/dir",
            "loss #1=0.5 #2=" + "9".repeat(2_000_000));
    for (String line : bad) {
      assertThatThrownBy(() -> write(line + "\n"))
          .as(line.substring(0, Math.min(40, line.length())))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("Invalid argument");
    }
    JsonNode s = stats();
    assertThat(s.path("hints").path("rejected").asLong() - rejectedBefore).isEqualTo(bad.size());
    assertThat(s.path("hints").path("scored_samples").asLong()).isEqualTo(scoredBefore);
    String errors = Files.readString(mnt.resolve(".hintfs/errors"));
    assertThat(errors).contains("unknown hint 'frobnicate'").contains("not a number: 'abc'");
    assertThat(errors).contains("no sample #9999").contains("unknown policy 'fifo'");
    assertThat(errors)
        .contains("max must be in [0, 1], not -0.1")
        .contains("unknown substitution option 'sometimes': max <fraction>, reuse or from-start");
    // A half line waits for its end: two writes make one line.
    Files.write(control, "epo".getBytes(StandardCharsets.UTF_8), StandardOpenOption.WRITE);
    write("epoch 11\n");
    assertThat(stats().path("hints").path("epoch").asInt()).isEqualTo(11);
    // The daemon is alive and still serves reads.
    assertThat(Files.readAllBytes(mnt.resolve("train/c0/0.jpg"))).isNotEmpty();
  }

  @Test
  void concurrentWritersOfRandomLines_neverCrashTheDaemon_andCountsAddUp() throws Exception {
    write("dataset train\n");
    long accepted0 = stats().path("hints").path("accepted").asLong();
    long rejected0 = stats().path("hints").path("rejected").asLong();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<int[]>> results = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      long seed = t;
      results.add(
          pool.submit(
              () -> {
                Random r = new Random(seed);
                int ok = 0;
                int rejected = 0;
                for (int i = 0; i < 150; i++) {
                  boolean good = r.nextBoolean();
                  String line =
                      good
                          ? "loss #"
                              + r.nextInt(60)
                              + "="
                              + r.nextFloat()
                              + " #"
                              + r.nextInt(60)
                              + "="
                              + r.nextFloat()
                          : garbage(r);
                  try {
                    write(line + "\n");
                    ok++;
                  } catch (IOException e) {
                    rejected++;
                  }
                }
                return new int[] {ok, rejected};
              }));
    }
    int ok = 0;
    int rejected = 0;
    for (Future<int[]> f : results) {
      ok += f.get()[0];
      rejected += f.get()[1];
    }
    pool.shutdown();
    JsonNode s = stats();
    assertThat(s.path("hints").path("accepted").asLong() - accepted0).isEqualTo(ok);
    assertThat(s.path("hints").path("rejected").asLong() - rejected0).isEqualTo(rejected);
    assertThat(rejected).isPositive();
    assertThat(Files.readAllBytes(mnt.resolve("train/c1/1.jpg"))).isNotEmpty();
  }

  static String garbage(Random r) {
    String[] parts = {
      "loss", "#", "=", "x", "#99999", "epoch", "-", "1e99999", "policy", " ", "\t"
    };
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 1 + r.nextInt(6); i++) {
      sb.append(parts[r.nextInt(parts.length)]);
    }
    String s = sb.toString().strip();
    // Make sure it is not accidentally valid or blank.
    return s.isEmpty() || s.startsWith("#") ? "?" + s : "loss " + s + " ?";
  }

  @Test
  void cachedListsTheSamplesHeldLocally() throws Exception {
    write("dataset train\n");
    Files.readAllBytes(mnt.resolve("train/c2/5.jpg")); // sample #... of class c2
    String cached = Files.readString(mnt.resolve(".hintfs/cached"));
    assertThat(cached.lines()).isNotEmpty().allMatch(l -> l.matches("#\\d+"));
  }
}
