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
 * mount's hits come close to what the simulator's {@code clairvoyant} policy gets on the same order
 * and capacity (at least 90% of them), and far above what {@code lru} gets, in the simulator and in
 * the mount: the mount really evicts by next use, and that is what its hits come from. The exact
 * count is not asserted: the clairvoyant ranking is keyed by next use in time, from the reader's
 * pace, and re-keyed off the FUSE thread, so one eviction's timing moves it by a hit or two (101
 * where the simulator had 100, on a loaded machine).
 *
 * <p>The mount and the simulator agree exactly only where the mount decides in the simulator's
 * order: each miss admitted (and its victim evicted) before the next open. Three things of a real
 * mount would break that, and the setup removes each: the RAM tier ({@code --ram-cache 0}: it would
 * serve a file the disk cache evicted), prefetching ({@code --prefetch-window 0}: files fetched
 * ahead of their open), and the kernel's page cache ({@code -o direct_io}: with {@code keep_cache},
 * a reopened file the disk cache had evicted is served by the kernel without a read, so the open's
 * miss is fetched and admitted in the background while the test already opens the next files; until
 * it lands, its victim is still cached and the next opens can hit it, 100-121 hits where the
 * simulator has 100).
 */
class ClairvoyantMountIT {
  static final int FILES = 200;
  static final int SIZE = 3000;

  @TempDir Path tmp;
  final List<Path> mounts = new ArrayList<>();

  @AfterEach
  void tearDown() {
    mounts.forEach(Hintfs::unmountQuietly);
  }

  @Test
  void theMountsHitsEqualTheSimulators_clairvoyantAndLru() throws Exception {
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
    Simulator.Result belady = Simulator.run(trace, "clairvoyant", 0.25, Simulator.Options.PLAIN);
    Simulator.Result lru = Simulator.run(trace, "lru", 0.25, Simulator.Options.PLAIN);
    // 25% of the footprint holds exactly 50 of the 200 equal files, in the mount and the
    // simulator. Of the 600 reads, 200 are first reads (misses for any policy); the simulator's
    // figures for this seed are 100 hits (clairvoyant) and 15 (lru: a reshuffled epoch reads a
    // file again about 200 reads later, when 50 files of LRU hold only the last 50 read).
    assertThat(belady.hits()).isEqualTo(100);
    assertThat(lru.hits()).isEqualTo(15);

    long clairvoyantHits = mountHits(src, files, order, "auto"); // clairvoyant once order known
    long lruHits = mountHits(src, files, order, "lru");
    System.out.println(
        "mount: clairvoyant "
            + clairvoyantHits
            + ", lru "
            + lruHits
            + " hits; simulator "
            + belady
            + ", "
            + lru);
    // At least 90% of Belady's hits (the class comment: its exact count moves with timing), and at
    // most the 400 reads that are not first reads. LRU, by the mount and by the simulator, gets a
    // sixth of that at most: far below.
    assertThat(clairvoyantHits)
        .as("clairvoyant, mount vs %s", belady)
        .isBetween(belady.hits() * 9 / 10, 400L);
    assertThat(lruHits).as("lru, mount vs %s", lru).isLessThan(clairvoyantHits / 2);
    assertThat(lru.hits()).isLessThan(clairvoyantHits / 2);
  }

  /** Mounts {@code src} afresh with {@code policy}, hints the order, reads it: the open hits. */
  long mountHits(Path src, List<String> files, List<Integer> order, String policy)
      throws Exception {
    Path mnt = Files.createDirectories(tmp.resolve("mnt-" + policy));
    mounts.add(mnt);
    Hintfs.mount(
        src,
        mnt,
        "--cache-size",
        "25%",
        "--ram-cache",
        "0",
        "--policy",
        policy,
        "--prefetch-window",
        "0",
        // A source 5 ms away widens any window in which the mount decides out of the reader's
        // order: without direct_io this setup fetched 426 times for 463 open misses.
        "--source-latency-ms",
        "5",
        "-o",
        "direct_io");
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
    while (!stats(mnt).path("prediction").path("known").asBoolean()) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      Thread.sleep(20);
    }
    long hitsBefore = stats(mnt).path("open_hits").asLong();
    for (int s : order) {
      assertThat(Files.readAllBytes(mnt.resolve(files.get(s))))
          .isEqualTo(Files.readAllBytes(src.resolve(files.get(s))));
    }
    JsonNode st = stats(mnt);
    // The capacity holds exactly 50 of the equal files, and 600 reads fill it.
    assertThat(st.path("cached_files").asLong()).as(policy).isEqualTo(50);
    assertThat(st.path("open_hits").asLong() + st.path("open_misses").asLong())
        .as(policy)
        .isEqualTo(order.size());
    // No file was fetched twice for one miss: every source read was an open's miss or a prefetch
    // (--prefetch-window 0 fetches little or nothing ahead; how much is timing).
    assertThat(st.path("misses").asLong())
        .as("%s: %s", policy, st)
        .isLessThanOrEqualTo(
            st.path("open_misses").asLong() + st.path("prediction").path("prefetched").asLong());
    return st.path("open_hits").asLong() - hitsBefore;
  }

  static JsonNode stats(Path mnt) throws Exception {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }
}
