package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the read order known (an {@code order} hint) and a cache smaller than the dataset, the
 * mount's hits equal what the simulator's {@code clairvoyant} policy gets on the same order and
 * capacity: the mount really evicts by next use.
 */
class ClairvoyantMountIT {
  static final int FILES = 200;
  static final int SIZE = 3000;

  @TempDir Path tmp;
  Path mnt;

  @AfterEach
  void tearDown() {
    Hintfs.unmountQuietly(mnt);
  }

  @Test
  void theMountsHitCountEqualsTheSimulatorsClairvoyantFigure() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(21);
    List<String> files = new ArrayList<>();
    for (int i = 0; i < FILES; i++) {
      String rel = "c" + (i % 4) + "/f" + i + ".jpg";
      Files.createDirectories(src.resolve(rel).getParent());
      HostileTree.write(src.resolve(rel), rnd, SIZE); // equal sizes: bytes and counts agree
      files.add(rel);
    }
    // Three epochs, each a fresh shuffle.
    List<Integer> order = new ArrayList<>();
    Trace trace = new Trace();
    for (int ep = 0; ep < 3; ep++) {
      List<Integer> perm = new ArrayList<>();
      for (int i = 0; i < FILES; i++) {
        perm.add(i);
      }
      Collections.shuffle(perm, rnd);
      for (int s : perm) {
        order.add(s);
        trace.read(ep, s, SIZE, s % 4);
      }
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    // 25% of the footprint holds exactly 50 of the 200 equal files, in the mount and the simulator.
    Hintfs.mount(
        src,
        mnt,
        "--cache-size",
        "25%",
        "--ram-cache",
        "0",
        "--policy",
        "auto", // clairvoyant once the order is known
        "--prefetch-window",
        "0");
    StringBuilder line = new StringBuilder("order");
    for (int s : order) {
      line.append(' ').append(files.get(s));
    }
    Files.writeString(
        mnt.resolve(".hintfs/control"),
        line + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.WRITE);
    // Applied off the FUSE thread: wait until the prediction is known.
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!stats().path("prediction").path("known").asBoolean()) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      Thread.sleep(20);
    }
    long hitsBefore = stats().path("open_hits").asLong();
    for (int s : order) {
      assertThat(Files.readAllBytes(mnt.resolve(files.get(s))))
          .isEqualTo(Files.readAllBytes(src.resolve(files.get(s))));
    }
    JsonNode st = stats();
    long mountHits = st.path("open_hits").asLong() - hitsBefore;
    Simulator.Result sim = Simulator.run(trace, "clairvoyant", 0.25, Simulator.Options.PLAIN);
    assertThat(st.path("cached_files").asLong()).isEqualTo(50);
    assertThat(sim.hits()).isPositive();
    // No more than 3% of the reads (18 of 600) below the simulator's Belady figure. Above it, the
    // mount may land a few hits more (100 vs 100-107 in quiet runs, 121 once under a loaded CI):
    // it admits a missed file when its background fetch completes, and until then the victim it
    // will displace is still cached and can still be hit. An in-flight fetch takes no capacity,
    // so the mount briefly holds one file more than the 50 the simulator allows; the busier the
    // machine, the longer the fetches and the larger that margin.
    System.out.println("clairvoyant: mount " + mountHits + " hits vs simulator " + sim.hits());
    assertThat(mountHits)
        .as("mount %d vs simulator %s", mountHits, sim)
        .isBetween(sim.hits() - 18, sim.hits() + 30);
    // And next use beats recency here by a wide margin.
    assertThat(sim.hits())
        .isGreaterThan(Simulator.run(trace, "lru", 0.25, Simulator.Options.PLAIN).hits());
  }

  JsonNode stats() throws Exception {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }
}
