package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seed hints through a real mount over a source with 10 ms per read, read by a real DataLoader with
 * DistributedSampler.
 */
class SeedPrefetchIT {
  static final Path CHECK = Hintfs.ROOT.resolve("tests/src/test/python/seed_prefetch_check.py");

  @TempDir Path tmp;
  Path src;
  Path mnt;

  @BeforeEach
  void setUp() throws Exception {
    src = tmp.resolve("src");
    HostileTree.imageFolder(src, 3200, 8, 11); // 1,600 files per rank
    mnt = Files.createDirectories(tmp.resolve("mnt"));
  }

  private void mount(int window) throws Exception {
    Hintfs.mount(
        src, mnt, "--source-latency-ms", "10", "--prefetch-window", String.valueOf(window));
  }

  @AfterEach
  void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  private JsonNode run(int samplerSeed, int hintSeed) throws Exception {
    return run(samplerSeed, hintSeed, java.util.Map.of());
  }

  /** env: BATCH and WORKERS for the check's DataLoader (16 and 4 if not given). */
  private JsonNode run(int samplerSeed, int hintSeed, java.util.Map<String, String> env)
      throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "/usr/bin/python3",
                CHECK.toString(),
                mnt.toString(),
                src.toString(),
                String.valueOf(samplerSeed),
                String.valueOf(hintSeed),
                "2"),
            env,
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    String last = r.out().strip().lines().reduce((a, b) -> b).get();
    System.out.println(
        "seed_prefetch_check " + samplerSeed + "/" + hintSeed + " " + env + ": " + last);
    return new ObjectMapper().readTree(last);
  }

  @Test
  void withTheRightSeed_opensFindTheirBytesLocal() throws Exception {
    // The default window (256 files): twice what this loader asks for at once (4 workers x
    // prefetch_factor 2 x 16 files).
    mount(256);
    JsonNode n = run(1234, 1234);
    // After the first 8 batches of each epoch (what the loader asks for at once, before anything
    // can be prefetched), every open was predicted: its bytes were local or already being fetched
    // ahead (late). Which of the two is a race between the fetch threads over a 10 ms source and a
    // reader that does no work between batches (3,500 files/s): CI saw 0.928 and 0.941 local at a
    // window of 128, and 0.943 at 256 with the rest late (local + late 0.997). How fast the
    // prefetch keeps ahead is measured by tests/bench/seed-batch-bench.sh, not
    // asserted here; most opens must still find their bytes local.
    double local = n.path("local_after_first_batches").asDouble();
    assertThat(local + n.path("late_after_first_batches").asDouble())
        .as(n.toString())
        .isGreaterThanOrEqualTo(0.99);
    assertThat(local).as(n.toString()).isGreaterThanOrEqualTo(0.85);
    assertThat(n.path("prediction").path("prefetched").asLong()).isPositive();
    assertThat(n.path("prediction").path("stale_drops").asLong()).isZero();
  }

  /**
   * Batch 256 and 4 workers: the workers read four batches side by side, their opens over 1,000
   * positions apart, more than the window around the furthest open. Each worker is followed on from
   * its own last open. Before, the prediction was dropped as stale (2 drops, 0.25 of opens local,
   * 26 s for what now takes 3).
   */
  @Test
  void withTheRightSeed_largeBatchesToo() throws Exception {
    src = tmp.resolve("large");
    HostileTree.imageFolder(src, 12_800, 8, 11); // 6,400 files per rank: 25 batches of 256
    mount(256);
    JsonNode n = run(1234, 1234, java.util.Map.of("BATCH", "256", "WORKERS", "4"));
    double local = n.path("local_after_first_batches").asDouble();
    assertThat(local + n.path("late_after_first_batches").asDouble())
        .as(n.toString())
        .isGreaterThanOrEqualTo(0.99);
    assertThat(local).as(n.toString()).isGreaterThanOrEqualTo(0.85);
    assertThat(n.path("prediction").path("stale_drops").asLong()).as(n.toString()).isZero();
  }

  @Test
  void aWrongSeedGivesCorrectBytesAndNoHang_andThePredictionIsDropped() throws Exception {
    // A window of 128 (the loader reads up to 4 workers x 2 batches x 16 = 128 files ahead): a
    // wrong order then matches by chance about 5 x 128 / 1600 = 40% of opens, below the 50% under
    // which the prediction is dropped.
    mount(128);
    JsonNode n = run(1234, 999);
    assertThat(n.path("prediction").path("stale_drops").asLong()).as(n.toString()).isPositive();
  }
}
