package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The LMDB cache through real mounts: remount, kill -9, corruption, singleflight, changes. */
class CacheIT {
  @TempDir Path tmp;
  Path src;
  Path mnt;
  Path cache;
  List<String> files;

  @BeforeEach
  void setUp() throws Exception {
    src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(99);
    files = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      String rel = "c" + (i % 4) + "/f" + i + ".jpg";
      Files.createDirectories(src.resolve(rel).getParent());
      HostileTree.write(src.resolve(rel), rnd, 1 + rnd.nextInt(200_000));
      files.add(rel);
    }
    // 20 MB: cached in 8 MiB blocks (3 of them), not whole.
    HostileTree.write(src.resolve("shard.tar"), rnd, 20_000_000);
    files.add("shard.tar");
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    cache = tmp.resolve("cache");
  }

  @AfterEach
  void tearDown() {
    Hintfs.unmountQuietly(mnt);
  }

  private void mount(String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("--cache-dir", cache.toString()));
    args.addAll(List.of(extra));
    Hintfs.mount(src, mnt, args.toArray(String[]::new));
  }

  private JsonNode stats() throws Exception {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }

  private void readAllAndCompare() throws Exception {
    for (String f : files) {
      assertThat(
              Arrays.equals(Files.readAllBytes(mnt.resolve(f)), Files.readAllBytes(src.resolve(f))))
          .as(f)
          .isTrue();
    }
  }

  @Test
  void aRemountServesTheDatasetWithZeroSourceReads() throws Exception {
    mount();
    readAllAndCompare();
    JsonNode first = stats();
    // 120 whole files + 3 blocks of the shard, all misses on the first pass.
    assertThat(first.path("misses").asLong()).isEqualTo(123);
    assertThat(first.path("source_reads").asLong()).isEqualTo(123);
    Hintfs.Result r = Hintfs.run("unmount", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();

    mount();
    readAllAndCompare();
    JsonNode second = stats();
    assertThat(second.path("source_reads").asLong()).isZero();
    assertThat(second.path("misses").asLong()).isZero();
    // At least one hit per unit; the kernel's readahead of the shard may ask for a block twice.
    assertThat(second.path("disk_hits").asLong()).isGreaterThanOrEqualTo(123);
    assertThat(second.path("cache_used_bytes").asLong())
        .isEqualTo(first.path("cache_used_bytes").asLong());
    Hintfs.Result status = Hintfs.run("status", mnt.toString());
    assertThat(status.out())
        .containsPattern("\nhit ratio: +100.0%")
        .containsPattern("\ncache: +ok at");
    r = Hintfs.run("unmount", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();

    // Mounted in another block size: the shard's blocks are dropped (their lengths and keys are
    // of 8 MiB blocks), the whole files stay. Every byte still right.
    mount("--block-size", "4M");
    readAllAndCompare();
    JsonNode third = stats();
    assertThat(third.path("source_reads").asLong())
        .as("the shard's 5 blocks of 4 MiB")
        .isEqualTo(5);
    assertThat(third.path("misses").asLong()).isEqualTo(5);
  }

  @Test
  void theWarmUpAtMount_readsTheCachedFilesThroughTheMount_andCountsNothing() throws Exception {
    mount();
    readAllAndCompare();
    Hintfs.Result r = Hintfs.run("unmount", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    Path log = tmp.resolve("daemon.log");
    mount("--log-file", log.toString());
    // Before any reader: the 120 whole files cached (the shard is cached in blocks: not warmed).
    String line = null;
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (line == null && System.nanoTime() < deadline) {
      line =
          Files.readAllLines(log).stream()
              .filter(l -> l.contains("warm-up: "))
              .findFirst()
              .orElse(null);
      Thread.sleep(50);
    }
    assertThat(line)
        .as("the daemon's log")
        .isNotNull()
        .containsPattern(
            "warm-up: 120 cached files read through the mount in \\d+ ms \\(all read\\)");
    // Counted nowhere: no open, no disk read, no access the policy saw.
    JsonNode s = stats();
    assertThat(s.path("open_hits").asLong() + s.path("open_misses").asLong()).isZero();
    assertThat(s.path("disk_hits").asLong()).isZero();
    assertThat(s.path("ram_hits").asLong()).isZero();
    assertThat(s.path("source_reads").asLong()).isZero();
    // And the readers' reads are counted as ever, every byte right.
    readAllAndCompare();
    s = stats();
    assertThat(s.path("open_hits").asLong()).isEqualTo(120); // the shard counts by block
    assertThat(s.path("disk_hits").asLong()).isGreaterThanOrEqualTo(123);
    assertThat(s.path("misses").asLong()).isZero();
  }

  @Test
  void killDashNineMidRun_thenRemount_servesCorrectBytesAndReusesTheCache() throws Exception {
    mount();
    long pid = stats().path("pid").asLong();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch someRead = new CountDownLatch(40);
    Thread reader =
        new Thread(
            () -> {
              Random rnd = new Random(5);
              while (!stop.get()) {
                try {
                  Files.readAllBytes(mnt.resolve(files.get(rnd.nextInt(files.size()))));
                  someRead.countDown();
                } catch (Exception e) {
                  return; // the daemon is gone: ENOTCONN
                }
              }
            });
    reader.start();
    someRead.await();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    ProcessHandle.of(pid).ifPresent(p -> p.onExit().join());
    stop.set(true);
    reader.join(10_000);
    // The dead mount stays until someone detaches it ("Transport endpoint is not connected").
    Hintfs.exec(List.of("umount", "-l", mnt.toString()), 30);
    assertThat(Hintfs.isMounted(mnt)).isFalse();

    mount();
    readAllAndCompare();
    JsonNode s = stats();
    assertThat(s.path("disk_hits").asLong()).as("cache reused after kill -9").isPositive();
    assertThat(s.path("corrupt_entries").asLong()).isZero();
  }

  @Test
  void damagedPayloadsOnDisk_areDetectedAndRefetched() throws Exception {
    mount();
    readAllAndCompare();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();
    byte[] db = Files.readAllBytes(cache.resolve("data.mdb"));
    int damaged = 0;
    try (RandomAccessFile f = new RandomAccessFile(cache.resolve("data.mdb").toFile(), "rw")) {
      for (String rel : files.subList(0, 30)) {
        byte[] b = Files.readAllBytes(src.resolve(rel));
        if (b.length < 100) {
          continue;
        }
        byte[] needle = Arrays.copyOfRange(b, b.length / 2, b.length / 2 + 32);
        // Every copy: LMDB's copy-on-write can leave stale copies of small values in free pages.
        int at = indexOf(db, needle, 0);
        assertThat(at).as("payload of %s in data.mdb", rel).isPositive();
        for (; at >= 0; at = indexOf(db, needle, at + 1)) {
          f.seek(at);
          f.write(~needle[0]);
        }
        damaged++;
      }
    }
    mount();
    readAllAndCompare();
    JsonNode s = stats();
    assertThat(s.path("corrupt_entries").asLong()).isEqualTo(damaged);
    assertThat(s.path("source_reads").asLong()).isEqualTo(damaged);
  }

  @Test
  void sixtyFourConcurrentOpensOfOneMissedFile_causeOneSourceRead() throws Exception {
    mount();
    Path f = mnt.resolve(files.get(7));
    byte[] want = Files.readAllBytes(src.resolve(files.get(7)));
    ExecutorService pool = Executors.newFixedThreadPool(64);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<byte[]>> got = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      got.add(
          pool.submit(
              () -> {
                go.await();
                return Files.readAllBytes(f);
              }));
    }
    go.countDown();
    for (Future<byte[]> g : got) {
      assertThat(g.get()).isEqualTo(want);
    }
    pool.shutdown();
    assertThat(stats().path("source_reads").asLong()).isEqualTo(1);
  }

  @Test
  void aModifiedSourceFileIsServedNewAfterRemount() throws Exception {
    mount();
    readAllAndCompare();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();
    Files.writeString(src.resolve(files.get(3)), "rewritten after the first mount");
    mount();
    assertThat(Files.readString(mnt.resolve(files.get(3))))
        .isEqualTo("rewritten after the first mount");
    readAllAndCompare();
  }

  @Test
  void aFullTmpfsStopsStoring_butEveryReadIsServed() throws Exception {
    Path small = Files.createDirectories(tmp.resolve("small"));
    Hintfs.Result m =
        Hintfs.exec(
            List.of("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", small.toString()), 30);
    assertThat(m.rc()).as(m.out()).isZero();
    try {
      cache = small.resolve("cache");
      mount();
      // Fill the disk under the running cache, then read more than it could hold.
      Hintfs.exec(List.of("dd", "if=/dev/zero", "of=" + small.resolve("filler"), "bs=64k"), 60);
      readAllAndCompare();
      JsonNode s = stats();
      assertThat(s.path("cache_health").asText()).startsWith("full since ");
      assertThat(s.path("errors").has("EIO")).isFalse();
    } finally {
      Hintfs.unmountQuietly(mnt);
      Hintfs.exec(List.of("umount", "-l", small.toString()), 30);
    }
  }

  /** Opens of {@code names} answered from the cache (the stats' open hits before and after). */
  private long hitsReading(List<String> names) throws Exception {
    long before = stats().path("open_hits").asLong();
    for (String f : names) {
      assertThat(Files.readAllBytes(mnt.resolve(f)))
          .as(f)
          .isEqualTo(Files.readAllBytes(src.resolve(f)));
    }
    return stats().path("open_hits").asLong() - before;
  }

  @Test
  void anExt4CacheDiskFullForAMoment_keepsServingWhatItHolds_andStoresAgainOnceFreed()
      throws Exception {
    Path image = tmp.resolve("disk.img");
    Path small = Files.createDirectories(tmp.resolve("ext4"));
    // A real block filesystem (loop device), not tmpfs: ext4 reports ENOSPC (or EIO at writeback)
    // as a real cache disk does. 48 MiB holds the 120 small files (~12 MB) several times over.
    Hintfs.Result m = Hintfs.exec(List.of("truncate", "-s", "48M", image.toString()), 30);
    assertThat(m.rc()).as(m.out()).isZero();
    m = Hintfs.exec(List.of("mkfs.ext4", "-q", "-F", image.toString()), 60);
    assertThat(m.rc()).as(m.out()).isZero();
    m = Hintfs.exec(List.of("mount", "-o", "loop", image.toString(), small.toString()), 30);
    assertThat(m.rc()).as("loop-mounting a small ext4: " + m.out()).isZero();
    Path filler = small.resolve("filler");
    try {
      cache = small.resolve("cache");
      mount("--ram-cache", "0");
      List<String> smallFiles = files.subList(0, 120);
      List<String> first = smallFiles.subList(0, 60);
      List<String> second = smallFiles.subList(60, 120);
      // Half the files stored first, as in a run that is under way.
      hitsReading(first);
      AdminIT.Poll.until(
          () ->
              stats().path("cached_files").asLong() >= 60
                  && stats().path("write_queue_bytes").asLong() == 0);
      // Then another tenant fills the disk to its last byte, and the other half is read.
      Hintfs.exec(List.of("dd", "if=/dev/zero", "of=" + filler, "bs=64k"), 60);
      hitsReading(second);
      AdminIT.Poll.until(() -> stats().path("cache_health").asText().startsWith("full since "));
      JsonNode s = stats();
      assertThat(s.path("cache_full_since").asLong()).isPositive();
      assertThat(s.path("cache_full_skipped").asLong()).isPositive();
      Hintfs.Result st = Hintfs.run("status", mnt.toString());
      assertThat(st.out().lines().filter(l -> l.startsWith("cache:")).findFirst())
          .hasValueSatisfying(l -> assertThat(l).contains("full since ").contains("is full"));
      // Full is a state: what was stored before the fill is still served from the cache.
      assertThat(hitsReading(first)).isEqualTo(60);
      // The tenant frees its file: within a few seconds the cache stores again.
      Files.delete(filler);
      AdminIT.Poll.until(() -> stats().path("cache_health").asText().equals("ok"));
      // The kernel keeps the pages of files read while full: dropped, their reads reach the cache.
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
      hitsReading(smallFiles);
      AdminIT.Poll.until(() -> stats().path("write_queue_bytes").asLong() == 0);
      // The next epoch is served from the cache, all of it.
      assertThat(hitsReading(smallFiles)).isEqualTo(120);
      assertThat(stats().path("errors").size()).isZero();
    } finally {
      Hintfs.unmountQuietly(mnt);
      Hintfs.exec(List.of("umount", "-l", small.toString()), 30);
    }
  }

  @Test
  void anotherTenantFillingTheDiskTo99Percent_holdsTheCacheAtItsSize_whichRegrowsWhenFreed()
      throws Exception {
    Path image = tmp.resolve("disk.img");
    Path small = Files.createDirectories(tmp.resolve("ext4"));
    Hintfs.Result m = Hintfs.exec(List.of("truncate", "-s", "64M", image.toString()), 30);
    assertThat(m.rc()).as(m.out()).isZero();
    m = Hintfs.exec(List.of("mkfs.ext4", "-q", "-F", image.toString()), 60);
    assertThat(m.rc()).as(m.out()).isZero();
    m = Hintfs.exec(List.of("mount", "-o", "loop", image.toString(), small.toString()), 30);
    assertThat(m.rc()).as("loop-mounting a small ext4: " + m.out()).isZero();
    Path filler = small.resolve("filler");
    try {
      cache = small.resolve("cache");
      mount("--ram-cache", "0");
      List<String> smallFiles = files.subList(0, 120);
      hitsReading(smallFiles.subList(0, 60));
      AdminIT.Poll.until(() -> stats().path("write_queue_bytes").asLong() == 0);
      long capacity = stats().path("cache_capacity_bytes").asLong();
      long fileBefore = Files.size(cache.resolve("data.mdb"));
      // Another tenant takes the disk to 99%, below the cache's 5% floor.
      java.nio.file.FileStore disk = Files.getFileStore(small);
      long leave = disk.getTotalSpace() / 100;
      m =
          Hintfs.exec(
              List.of(
                  "fallocate",
                  "-l",
                  Long.toString(disk.getUsableSpace() - leave),
                  filler.toString()),
              30);
      assertThat(m.rc()).as(m.out()).isZero();
      // Within the writer's next look at the disk (2 s), the cache grows no further.
      AdminIT.Poll.until(() -> stats().path("cache_capacity_bytes").asLong() < capacity);
      assertThat(stats().path("cache_capacity_basis").asText())
          .contains("free-space floor (--cache-min-free 5%)");
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
      hitsReading(smallFiles);
      AdminIT.Poll.until(() -> stats().path("write_queue_bytes").asLong() == 0);
      // What it admitted since replaced what it held: its file kept to its size (give or take
      // the copy-on-write pages of a commit: at most one file's worth, 200 kB, per batch).
      assertThat(Files.size(cache.resolve("data.mdb"))).isLessThan(fileBefore + (1 << 20));
      assertThat(stats().path("errors").size()).isZero();
      // The tenant frees its file: the capacity grows back, and the cache with it.
      Files.delete(filler);
      AdminIT.Poll.until(() -> stats().path("cache_capacity_bytes").asLong() == capacity);
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
      hitsReading(smallFiles);
      AdminIT.Poll.until(() -> stats().path("write_queue_bytes").asLong() == 0);
      assertThat(hitsReading(smallFiles)).isEqualTo(120);
      assertThat(stats().path("errors").size()).isZero();
    } finally {
      Hintfs.unmountQuietly(mnt);
      Hintfs.exec(List.of("umount", "-l", small.toString()), 30);
    }
  }

  @Test
  void aTruncatedOrScribbledDataFile_isMovedAside_andTheMountServesEveryByteRight()
      throws Exception {
    mount();
    readAllAndCompare();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();
    Path db = cache.resolve("data.mdb");
    long half = Files.size(db) / 2;
    try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
      f.setLength(half); // a disk that lost the file's tail
    }
    mount();
    Hintfs.Result st = Hintfs.run("status", mnt.toString());
    assertThat(st.out().lines().filter(l -> l.startsWith("cache:")).findFirst())
        .hasValueSatisfying(l -> assertThat(l).contains("was damaged (truncated: "));
    readAllAndCompare();
    assertThat(stats().path("errors").size()).isZero();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();
    long size = Files.size(db);
    try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
      byte[] junk = new byte[16_384];
      new Random(5).nextBytes(junk);
      f.write(junk); // its head scribbled over
    }
    mount();
    assertThat(stats().path("cache_health").asText())
        .startsWith("ok; at mount ")
        .contains("was damaged (");
    readAllAndCompare();
    assertThat(stats().path("errors").size()).isZero();
    // Neither damaged file was deleted: both lie beside the new cache, as they were.
    try (var in = Files.list(cache)) {
      List<Long> aside =
          in.filter(f -> f.getFileName().toString().startsWith("data.mdb.damaged-"))
              .map(f -> f.toFile().length())
              .sorted()
              .toList();
      assertThat(aside).containsExactlyInAnyOrder(half, size);
    }
  }

  @Test
  void anUnusableCacheDirIsReportedAndReadsStillWork() throws Exception {
    cache = Files.writeString(tmp.resolve("not-a-dir"), "x");
    Hintfs.Result r =
        Hintfs.run("mount", src.toString(), mnt.toString(), "--cache-dir", cache.toString());
    // Refused up front: the cache dir cannot even be created.
    assertThat(r.rc()).isEqualTo(1);
    assertThat(r.out()).startsWith("hintfs: ").contains("not-a-dir");
    assertThat(r.out().strip().lines()).hasSize(1);
  }

  @Test
  void reuseListingMountsFromTheSavedCatalog_aFreshMountSeesChanges() throws Exception {
    mount();
    readAllAndCompare();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();
    assertThat(cache.resolve("catalog.bin")).exists();
    Files.writeString(src.resolve("c0/added.jpg"), "new");

    mount("--reuse-listing");
    assertThat(mnt.resolve("c0/added.jpg")).doesNotExist();
    readAllAndCompare();
    assertThat(stats().path("source_reads").asLong()).isZero();
    assertThat(Hintfs.run("unmount", mnt.toString()).rc()).isZero();

    mount();
    assertThat(Files.readString(mnt.resolve("c0/added.jpg"))).isEqualTo("new");
  }

  static int indexOf(byte[] hay, byte[] needle, int from) {
    outer:
    for (int i = from; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
