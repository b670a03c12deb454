package org.hintfs.fs.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.hintfs.backing.FaultInjectingSource;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.hintfs.fs.serve.HintFs;
import org.jgroups.protocols.FD_SOCK2;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three members of one cluster in this JVM, each a whole mount (catalog, tiered cache, hint state)
 * over its own view of one directory, with its own counter of source reads: the job fetches each
 * file once, a member that leaves costs misses and never an error, and a member of another source
 * or without the secret is refused in one line.
 */
class ClusterTest {
  static final int FILES = 60;
  @TempDir Path tmp;
  Path src;
  final List<byte[]> content = new ArrayList<>();
  final List<String> paths = new ArrayList<>();
  final List<HintFs> members = new ArrayList<>();
  final List<FaultInjectingSource> sources = new ArrayList<>();

  @BeforeEach
  void dataset() throws IOException {
    src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(11);
    for (int i = 0; i < FILES; i++) {
      String rel = "c" + (i % 3) + "/f" + i + ".jpg";
      byte[] b = new byte[10_000 + rnd.nextInt(20_000)];
      rnd.nextBytes(b);
      Files.createDirectories(src.resolve(rel).getParent());
      Files.write(src.resolve(rel), b);
      paths.add("/" + rel);
      content.add(b);
    }
  }

  @AfterEach
  void close() throws IOException {
    for (HintFs m : members) {
      m.close();
    }
  }

  /**
   * A port free with the one 100 above it (failure detection's), both below the ephemeral range: a
   * port found free there can be taken by any outgoing connection before the member binds it.
   */
  static int freePort() throws IOException {
    int below = 32768;
    try {
      below =
          Integer.parseInt(
              Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                  .get(0)
                  .trim()
                  .split("\\s+")[0]);
    } catch (IOException | RuntimeException unknown) {
      // the kernel's default (Files.readString of a sysctl file reads one byte here: read lines)
    }
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 200; attempt++) {
      int p = r.nextInt(10_000, below - 120);
      try (ServerSocket s = new ServerSocket(p);
          ServerSocket a = new ServerSocket(p + 100)) {
        return p;
      } catch (IOException busy) {
        // another
      }
    }
    throw new IOException("no free port pair");
  }

  HintFs member(int i, List<Integer> ports, Path secret, Path dir, boolean diskCache)
      throws IOException {
    return member(i, ports, secret, dir, diskCache ? "100%" : null);
  }

  HintFs member(int i, List<Integer> ports, Path secret, Path dir, String cacheSize)
      throws IOException {
    FaultInjectingSource s = new FaultInjectingSource(new LocalDirSource(dir));
    StringBuilder peers = new StringBuilder();
    for (int p : ports) {
      peers.append(peers.length() == 0 ? "" : ",").append("127.0.0.1:").append(p);
    }
    ClusterConfig cc =
        ClusterConfig.parse("job", "127.0.0.1:" + ports.get(i), peers.toString(), null, secret);
    MountConfig cfg =
        MountConfig.builder("x", tmp.resolve("mnt" + i))
            .cache(cacheSize != null ? tmp.resolve("cache" + i) : null, cacheSize)
            .ramCacheBytes(0)
            .cluster(cc)
            .build();
    HintFs fs = Mount.create(s, Mount.listCatalog(s), cfg);
    members.add(fs);
    sources.add(s);
    return fs;
  }

  static byte[] readAll(HintFs fs, String path) throws IOException {
    return org.hintfs.fs.serve.HintFsReads.file(fs, path, 0);
  }

  static JsonNode cluster(HintFs fs) throws IOException {
    return new ObjectMapper().readTree(readAll(fs, "/.hintfs/stats")).path("cluster");
  }

  static void awaitMembers(List<HintFs> fss, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      boolean all = true;
      for (HintFs fs : fss) {
        all &= fs.cluster().member().members().size() == n && !fs.cluster().member().rebalancing();
      }
      if (all) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the members did not see " + n + " members within 60 s");
  }

  @Test
  void threeMembersReadingEveryFile_fetchEachFromTheSourceOnce() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    for (int i = 0; i < 3; i++) {
      member(i, ports, null, src, true);
    }
    awaitMembers(members, 3);
    // Every member reads every file at once, each in its own order.
    ExecutorService pool = Executors.newFixedThreadPool(3);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      HintFs fs = members.get(i);
      int start = i * 20;
      done.add(
          pool.submit(
              () -> {
                for (int k = 0; k < FILES; k++) {
                  int f = (start + k) % FILES;
                  assertThat(readAll(fs, paths.get(f))).isEqualTo(content.get(f));
                }
                return null;
              }));
    }
    for (Future<?> d : done) {
      d.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();
    // Each file was read from the source once in the whole job, by its home.
    long sourceReads = sources.stream().mapToLong(FaultInjectingSource::reads).sum();
    assertThat(sourceReads).isEqualTo(FILES);
    long homed = 0;
    for (HintFs fs : members) {
      JsonNode c = cluster(fs);
      assertThat(c.path("members").size()).isEqualTo(3);
      homed += c.path("homed_files").asLong();
      // A member's misses are its homed files, from the source, or the others', from their homes;
      // a homed file a peer asked for first was already cached here when this member's reader
      // came to it: no miss.
      assertThat(c.path("reads_from_peers").asLong()).isPositive();
      assertThat(c.path("peer_failures").asLong()).isZero();
      // The homes the members went through while joining held nothing: no miss asked them.
      assertThat(c.path("former_home_misses").asLong()).isZero();
      assertThat(c.path("reads_from_former_homes").asLong()).isZero();
    }
    assertThat(homed).isEqualTo(FILES);
    long served = 0;
    long received = 0;
    for (HintFs fs : members) {
      served += cluster(fs).path("served_to_peers").asLong();
      received += cluster(fs).path("reads_from_peers").asLong();
    }
    // Each member read each file it is not home to from that home: 2 x 60 in all.
    assertThat(served).isEqualTo(received).isEqualTo(2 * FILES);
  }

  @Test
  void threeEpochsOverCachesOfHalfTheDataset_fetchEachFileOnce() throws Exception {
    // Each member's cache holds half the dataset; it is home to about a third. The copies of the
    // others' files it keeps are guests: they never take its homed files' room, so every file
    // stays cached at its home and the job reads the source once per file over three epochs.
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    for (int i = 0; i < 3; i++) {
      member(i, ports, null, src, "50%");
    }
    awaitMembers(members, 3);
    for (int epoch = 0; epoch < 3; epoch++) {
      for (int i = 0; i < 3; i++) {
        List<Integer> order = new ArrayList<>();
        for (int f = 0; f < FILES; f++) {
          order.add(f);
        }
        java.util.Collections.shuffle(order, new Random(100 * epoch + i));
        for (int f : order) {
          assertThat(readAll(members.get(i), paths.get(f))).isEqualTo(content.get(f));
        }
      }
      for (HintFs fs : members) {
        fs.cache().flush();
      }
    }
    long sourceReads = sources.stream().mapToLong(FaultInjectingSource::reads).sum();
    assertThat(sourceReads).isEqualTo(FILES);
    // Copies were kept where room allowed. Not on every member: the hash may make one home to so
    // many files that they fill its cache, and then it keeps no guest at all (as it should).
    long guests = 0;
    for (HintFs fs : members) {
      JsonNode c = cluster(fs);
      guests += c.path("guest_files").asLong();
      long room = fs.cache().index().capacityBytes() - c.path("homed_bytes").asLong();
      if (room > 30_000) { // room for a guest of the largest size
        assertThat(c.path("guest_files").asLong())
            .as("guests with %d bytes of room", room)
            .isPositive();
      }
    }
    assertThat(guests).isPositive();
  }

  @Test
  void aHomeThatAnswersSlowly_costsItsBoundThenIsSkipped_andEveryByteIsRight() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort());
    for (int i = 0; i < 2; i++) {
      member(i, ports, null, src, true);
    }
    awaitMembers(members, 2);
    HintFs reader = members.get(0);
    HintFs slow = members.get(1);
    long slowHomes = cluster(slow).path("homed_files").asLong();
    assertThat(slowHomes).isGreaterThan(10);
    // The slow member is alive (failure detection never suspects it) but each of its own source
    // reads takes 3 s: every ask for one of its homed files waits that long there.
    sources.get(1).latency(3_000);
    long t0 = System.nanoTime();
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(reader, paths.get(f))).isEqualTo(content.get(f));
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    JsonNode c = cluster(reader);
    // Waiting for the home, its ~30 files would take 90 s. Hedged: the first 3 asks wait out the
    // bound (1 s before the home has answered 16 asks), then it is skipped for 1 s, 2 s, 4 s, 8 s
    // with one probe after each skip: 3 asks of 1 s, then one per skip, the rest at once.
    assertThat(c.path("peer_hedged").asLong()).isBetween(3L, 10L);
    assertThat(c.path("peer_skipped").asLong()).isPositive();
    assertThat(c.path("peer_hedged").asLong() + c.path("peer_skipped").asLong())
        .isEqualTo(slowHomes);
    assertThat(seconds).as("seconds for the whole pass").isLessThan(30);
  }

  @Test
  void aMemberThatLeaves_turnsItsHomesIntoMisses_neverAnError() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    for (int i = 0; i < 3; i++) {
      member(i, ports, null, src, false); // no disk cache: every read asks the home again
    }
    awaitMembers(members, 3);
    HintFs reader = members.get(0);
    HintFs leaving = members.get(2);
    long leavingHomes = cluster(leaving).path("homed_files").asLong();
    assertThat(leavingHomes).isPositive();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<?> reads =
        pool.submit(
            () -> {
              for (int pass = 0; pass < 4; pass++) {
                for (int f = 0; f < FILES; f++) {
                  assertThat(readAll(reader, paths.get(f))).isEqualTo(content.get(f));
                }
              }
              return null;
            });
    Thread.sleep(300);
    leaving.close();
    members.remove(leaving);
    reads.get(120, TimeUnit.SECONDS);
    pool.shutdown();
    awaitMembers(members, 2);
    // The homes moved to the two that remain: every file has one of them as its home again.
    long homed = 0;
    for (HintFs fs : members) {
      homed += cluster(fs).path("homed_files").asLong();
    }
    assertThat(homed).isEqualTo(FILES);
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(reader, paths.get(f))).isEqualTo(content.get(f));
    }
  }

  @Test
  void aMemberOfAnotherListing_isRefusedInOneLine() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort());
    member(0, ports, null, src, false);
    Path other = Files.createDirectories(tmp.resolve("other/c0"));
    Files.writeString(other.resolve("x.jpg"), "another dataset");
    assertThatThrownBy(() -> member(1, ports, null, other.getParent(), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cluster job serves ")
        .hasMessageContaining("; this mount serves ")
        .hasMessageEndingWith(": give this job its own --cluster name, or mount the same source")
        .satisfies(e -> assertThat(e.getMessage().lines()).hasSize(1));
  }

  /**
   * The port 100 above a member's is failure detection's; any process may hold it (an outgoing
   * connection takes a port of the ephemeral range as its own). The member still joins, listens on
   * a free port just above it, and its neighbour's failure detector finds it there.
   */
  @Test
  void aFailureDetectionPortInUse_takesTheNextFree_andIsStillWatched() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort());
    try (ServerSocket taken = new ServerSocket(ports.get(0) + 100)) {
      member(0, ports, null, src, false);
      member(1, ports, null, src, false);
      awaitMembers(members, 2);
      FD_SOCK2 fd0 =
          members
              .get(0)
              .cluster()
              .member()
              .channel()
              .getProtocolStack()
              .findProtocol(FD_SOCK2.class);
      FD_SOCK2 fd1 =
          members
              .get(1)
              .cluster()
              .member()
              .channel()
              .getProtocolStack()
              .findProtocol(FD_SOCK2.class);
      assertThat(fd0.getActualBindPort()).isGreaterThan(taken.getLocalPort());
      // The neighbour's detector is connected to member 0, at the port member 0 took.
      String member0 = members.get(0).cluster().member().self().toString();
      String at = "[127.0.0.1:" + fd0.getActualBindPort() + " CONNECTED]";
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!String.valueOf(fd1.getPingDest()).endsWith(at) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(fd1.getPingDest()).startsWith(member0).endsWith(at);
      for (int f = 0; f < FILES; f++) {
        assertThat(readAll(members.get(1), paths.get(f))).isEqualTo(content.get(f));
      }
    }
  }

  @Test
  void withASecret_onlyItsHoldersJoin_andTheyServeEachOther() throws Exception {
    Path secret = privateFile(tmp.resolve("secret"), "0123456789abcdef0123456789abcdef");
    Path wrong = privateFile(tmp.resolve("wrong"), "fedcba9876543210fedcba9876543210");
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    member(0, ports, secret, src, false);
    member(1, ports, secret, src, false);
    awaitMembers(members, 2);
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> member(2, ports, wrong, src, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cluster job at 127.0.0.1:")
        .hasMessageEndingWith(
            " holds another --cluster-secret-file than "
                + wrong
                + ": its members will not take this one");
    assertThat((System.nanoTime() - t0) / 1e9).isLessThan(30);
    // And a member with no secret at all is refused too.
    assertThatThrownBy(() -> member(2, ports, null, src, false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageEndingWith("(this mount has none): its members will not take this one");
    assertThat(members.get(0).cluster().member().members()).hasSize(2);
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(members.get(1), paths.get(f))).isEqualTo(content.get(f));
    }
    assertThat(cluster(members.get(1)).path("reads_from_peers").asLong()).isPositive();
  }

  /** Drops every message between this member and {@code others}, both ways, until healed. */
  /** Cuts {@code lone} off from {@code a} and {@code b}: messages are dropped both ways. */
  static void partition(HintFs a, HintFs b, HintFs lone) throws Exception {
    org.jgroups.Address aAddr = a.cluster().member().channel().getAddress();
    org.jgroups.Address bAddr = b.cluster().member().channel().getAddress();
    org.jgroups.Address loneAddr = lone.cluster().member().channel().getAddress();
    cut(a).addIgnoredMembers(loneAddr);
    cut(b).addIgnoredMembers(loneAddr);
    cut(lone).addIgnoredMembers(aAddr, bAddr);
  }

  /** Lets every member's messages through again and waits for MERGE3 to join them all. */
  void heal() throws Exception {
    for (HintFs fs : members) {
      cut(fs).resetIgnoredMembers();
    }
    awaitMembers(members, 3);
  }

  static org.jgroups.protocols.DISCARD cut(HintFs fs) throws Exception {
    org.jgroups.JChannel ch = fs.cluster().member().channel();
    org.jgroups.protocols.DISCARD d =
        ch.getProtocolStack().findProtocol(org.jgroups.protocols.DISCARD.class);
    if (d == null) {
      d = new org.jgroups.protocols.DISCARD();
      d.setAddress(ch.getAddress());
      ch.getProtocolStack()
          .insertProtocol(
              d, org.jgroups.stack.ProtocolStack.Position.ABOVE, org.jgroups.protocols.TP.class);
      d.start();
    }
    return d;
  }

  @Test
  void aPartition_servesEachSideFromTheSource_andHeals() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    for (int i = 0; i < 3; i++) {
      member(i, ports, null, src, false); // no disk cache: every read asks its home again
    }
    awaitMembers(members, 3);
    HintFs a = members.get(0);
    HintFs b = members.get(1);
    HintFs alone = members.get(2);
    // Readers on both sides read every file, over and over, while the network splits under them.
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicLong slowest = new java.util.concurrent.atomic.AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<Future<Integer>> readers = new ArrayList<>();
    for (HintFs fs : List.of(a, alone)) {
      readers.add(
          pool.submit(
              () -> {
                int reads = 0;
                while (!stop.get()) {
                  for (int f = 0; f < FILES && !stop.get(); f++) {
                    long t0 = System.nanoTime();
                    assertThat(readAll(fs, paths.get(f))).isEqualTo(content.get(f));
                    slowest.accumulateAndGet(System.nanoTime() - t0, Math::max);
                    reads++;
                  }
                }
                return reads;
              }));
    }
    Thread.sleep(500);
    partition(a, b, alone);
    // Failure detection splits the view: each side is a cluster of its own, homes rehashed.
    awaitMembers(List.of(a, b), 2);
    awaitMembers(List.of(alone), 1);
    long aloneSourceBefore = sources.get(2).reads();
    long aloneFromPeersBefore = cluster(alone).path("reads_from_peers").asLong();
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(alone, paths.get(f))).isEqualTo(content.get(f));
    }
    // Alone, it is every file's home: the source serves it all, no peer is asked.
    assertThat(sources.get(2).reads() - aloneSourceBefore).isGreaterThanOrEqualTo(FILES);
    assertThat(cluster(alone).path("reads_from_peers").asLong()).isEqualTo(aloneFromPeersBefore);
    assertThat(cluster(alone).path("homed_files").asLong()).isEqualTo(FILES);
    // Healed, MERGE3 joins the sides and the homes are shared by three again.
    heal();
    stop.set(true);
    for (Future<Integer> r : readers) {
      assertThat(r.get(120, TimeUnit.SECONDS)).isPositive();
    }
    pool.shutdown();
    long homed = 0;
    for (HintFs fs : members) {
      homed += cluster(fs).path("homed_files").asLong();
    }
    assertThat(homed).isEqualTo(FILES);
    long fromPeers = cluster(alone).path("reads_from_peers").asLong();
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(alone, paths.get(f))).isEqualTo(content.get(f));
    }
    assertThat(cluster(alone).path("reads_from_peers").asLong()).isGreaterThan(fromPeers);
    // A read caught by the split waited for failure detection (~3.5 s), never for the peer
    // timeout: the asks to the lost side failed when it was suspected.
    System.out.printf("partition: slowest read %.1f s%n", slowest.get() / 1e9);
    assertThat(slowest.get() / 1_000_000).isLessThan(ClusterPeerTier.TIMEOUT_MILLIS);
  }

  @Test
  void afterAHealedPartition_theNewHomeTakesWhatItLacksFromTheFormerOne_notTheSource()
      throws Exception {
    // A member cut off (stopped, partitioned) comes back as the home of a third of the files; what
    // the other side fetched meanwhile is held there. The returning home asks the former home for
    // what it lacks instead of the source: a rejoin costs messages, not a third of an epoch of
    // GETs.
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    for (int i = 0; i < 3; i++) {
      member(i, ports, null, src, true);
    }
    awaitMembers(members, 3);
    HintFs a = members.get(0);
    HintFs b = members.get(1);
    HintFs back = members.get(2);
    partition(a, b, back);
    awaitMembers(List.of(a, b), 2);
    awaitMembers(List.of(back), 1);
    // While it is away, one reader on a reads every file: a and b fetch them as their homes.
    // (Homes no read went through, like those of the members' start, are never asked.)
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(a, paths.get(f))).isEqualTo(content.get(f));
    }
    for (HintFs fs : members) {
      fs.cache().flush();
    }
    heal();
    // What a cached while home to two thirds of the files and is not home to now is a guest there:
    // it gives its room to a's homed files and staged reads first.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (cluster(a).path("guest_files").asLong()
            != FILES - cluster(a).path("homed_files").asLong()
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(cluster(a).path("guest_files").asLong())
        .isEqualTo(FILES - cluster(a).path("homed_files").asLong());
    assertThat(cluster(a).path("refiled_as_guests").asLong()).isPositive();
    long sourceBefore = sources.stream().mapToLong(FaultInjectingSource::reads).sum();
    assertThat(sourceBefore).isEqualTo(FILES);
    // A reader on b: what b fetched as a home is on its disk; the rest it asks the homes now, and
    // the returning member, home to a third of them, holds none of those.
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(b, paths.get(f))).isEqualTo(content.get(f));
    }
    long homedBack = cluster(back).path("homed_files").asLong();
    assertThat(homedBack).isPositive();
    assertThat(sources.stream().mapToLong(FaultInjectingSource::reads).sum())
        .as("source reads after the rejoin")
        .isEqualTo(sourceBefore);
    assertThat(cluster(back).path("reads_from_former_homes").asLong()).isPositive();
    // What it took is its own now: asked again, it answers from its disk.
    long formerReads = cluster(back).path("reads_from_former_homes").asLong();
    for (HintFs fs : members) {
      fs.cache().flush();
    }
    for (int f = 0; f < FILES; f++) {
      assertThat(readAll(b, paths.get(f))).isEqualTo(content.get(f));
    }
    assertThat(cluster(back).path("reads_from_former_homes").asLong()).isEqualTo(formerReads);
  }

  /** A file of {@code text} only its owner may read (mode 0600), as a cluster secret must be. */
  static Path privateFile(Path p, String text) throws java.io.IOException {
    Files.write(p, text.getBytes());
    Files.setPosixFilePermissions(
        p, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    return p;
  }
}
