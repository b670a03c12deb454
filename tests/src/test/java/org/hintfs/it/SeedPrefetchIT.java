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
    // 1,600 files per rank, a window of 128 (the loader reads up to 4 workers x 2 batches x 16 =
    // 128 files ahead): a wrong order then matches by chance about 5 x 128 / 1600 =
    // 40% of opens, below the 50% under which the prediction is dropped.
    HostileTree.imageFolder(src, 3200, 8, 11);
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mount(src, mnt, "--source-latency-ms", "10", "--prefetch-window", "128");
  }

  @AfterEach
  void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  private JsonNode run(int samplerSeed, int hintSeed) throws Exception {
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
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    return new ObjectMapper().readTree(r.out().strip().lines().reduce((a, b) -> b).get());
  }

  @Test
  void withTheRightSeed_opensFindTheirBytesLocal() throws Exception {
    JsonNode n = run(1234, 1234);
    // After the first 8 batches of each epoch (what 4 workers x prefetch_factor 2 ask for at once,
    // before anything can be prefetched), >= 95% of opens find their bytes local.
    assertThat(n.path("local_after_first_batches").asDouble())
        .as(n.toString())
        .isGreaterThanOrEqualTo(0.95);
    assertThat(n.path("prediction").path("prefetched").asLong()).isPositive();
    assertThat(n.path("prediction").path("stale_drops").asLong()).isZero();
  }

  @Test
  void aWrongSeedGivesCorrectBytesAndNoHang_andThePredictionIsDropped() throws Exception {
    JsonNode n = run(1234, 999);
    assertThat(n.path("prediction").path("stale_drops").asLong()).as(n.toString()).isPositive();
  }
}
