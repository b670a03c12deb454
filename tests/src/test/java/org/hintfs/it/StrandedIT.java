package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mount never leaves its user stranded: a daemon killed with -9 is replaced by the next {@code
 * hintfs mount} (cache reused), a non-empty mountpoint is refused in one line, a cache dir in use
 * names the mount that holds it, {@code status --watch MNT} takes the options in that order, and a
 * trace is on disk within a second of each open, hint or none.
 */
class StrandedIT {
  @TempDir Path tmp;
  Path src;
  Path mnt;
  Path cache;

  @BeforeEach
  void dataset() throws Exception {
    src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(7);
    for (int i = 0; i < 8; i++) {
      Path f = src.resolve("c" + (i % 2) + "/f" + i + ".jpg");
      Files.createDirectories(f.getParent());
      HostileTree.write(f, rnd, 5_000);
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    cache = tmp.resolve("cache");
  }

  @AfterEach
  void tearDown() {
    Hintfs.unmountQuietly(mnt);
  }

  @Test
  void aDaemonKilledWithSigkill_isReplacedByTheNextMount_andTheCacheIsReused() throws Exception {
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString(), "--ram-cache", "0");
    byte[] want = Files.readAllBytes(src.resolve("c0/f0.jpg"));
    assertThat(Files.readAllBytes(mnt.resolve("c0/f0.jpg"))).isEqualTo(want);
    // The store's writer commits in the background: wait until the file is on disk. The index
    // counts it cached when it is queued; the queue empties after the commit.
    long deadline = System.nanoTime() + 30_000_000_000L;
    while ((stats().path("cached_files").asLong() < 1
            || stats().path("write_queue_bytes").asLong() > 0)
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(stats().path("cached_files").asLong()).isEqualTo(1);
    assertThat(stats().path("write_queue_bytes").asLong()).isZero();
    List<Long> daemons = Hintfs.daemonsFor(mnt);
    assertThat(daemons).hasSize(1);
    ProcessHandle daemon = ProcessHandle.of(daemons.get(0)).orElseThrow();
    assertThat(Hintfs.exec(List.of("kill", "-9", "" + daemon.pid()), 10).rc()).isZero();
    daemon.onExit().get();
    // The kernel's mount is still there, with nobody behind it.
    assertThat(Hintfs.isMounted(mnt)).isTrue();

    Hintfs.Result r =
        Hintfs.run("mount", src.toString(), mnt.toString(), "--cache-dir", cache.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("whose daemon had died (transport endpoint is not connected); unmounted it");
    assertThat(Files.readAllBytes(mnt.resolve("c0/f0.jpg"))).isEqualTo(want);
    // Served from the disk cache the killed daemon filled: no request to the source.
    JsonNode s = stats();
    assertThat(s.path("disk_hits").asLong()).isEqualTo(1);
    assertThat(s.path("source_reads").asLong()).isZero();
  }

  @Test
  void theTraceStartsAtTheFirstOpenWithNoHint_andADaemonKilledWithSigkillLosesNoneOfIt()
      throws Exception {
    Path trace = tmp.resolve("run.trace");
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString(), "--trace", trace.toString());
    // ImageFolder numbering: classes c0, c1 sorted; c0 holds f0 f2 f4 f6 (0-3), c1 f1 f3 f5 f7.
    String[] opened = {"c1/f3.jpg", "c0/f0.jpg", "c0/f6.jpg", "c1/f7.jpg"};
    int[] sample = {5, 0, 3, 7};
    for (String f : opened) {
      assertThat(Files.readAllBytes(mnt.resolve(f))).isEqualTo(Files.readAllBytes(src.resolve(f)));
    }
    Thread.sleep(1500); // written within a second
    long daemon = Hintfs.daemonsFor(mnt).get(0);
    assertThat(Hintfs.exec(List.of("kill", "-9", "" + daemon), 10).rc()).isZero();
    ProcessHandle.of(daemon).ifPresent(p -> p.onExit().join());
    List<String> lines =
        Files.readAllLines(trace).stream().filter(l -> !l.startsWith("#")).toList();
    assertThat(lines).hasSize(opened.length);
    String stream = null;
    for (int k = 0; k < opened.length; k++) {
      String[] f = lines.get(k).split(" ");
      assertThat(f).as(lines.get(k)).hasSize(5);
      assertThat(f[0]).isEqualTo("0");
      assertThat(f[1]).isEqualTo("" + sample[k]);
      assertThat(f[2]).isEqualTo("" + Files.size(src.resolve(opened[k])));
      assertThat(f[3]).isEqualTo(opened[k].substring(1, 2));
      assertThat(f[4]).startsWith("stream=");
      stream = stream == null ? f[4] : stream;
      assertThat(f[4]).isEqualTo(stream); // one reader, one stream
    }
    Hintfs.Result r = Hintfs.run("simulate", "--trace", trace.toString(), "--policies", "lru");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).contains("lru");
  }

  @Test
  void aNonEmptyMountpointIsRefusedInOneLine_unlessAllowed() throws Exception {
    Files.writeString(mnt.resolve("precious.txt"), "hidden by a mount");
    Hintfs.Result r =
        Hintfs.run("mount", src.toString(), mnt.toString(), "--cache-dir", cache.toString());
    assertThat(r.rc()).isEqualTo(1);
    assertThat(r.out().strip().lines()).hasSize(1);
    assertThat(r.out()).startsWith("hintfs: mountpoint " + mnt + " is not empty");
    assertThat(Hintfs.isMounted(mnt)).isFalse();

    Hintfs.mount(src, mnt, "--cache-dir", cache.toString(), "-o", "nonempty");
    assertThat(Files.exists(mnt.resolve("c1/f1.jpg"))).isTrue();
    Hintfs.unmountQuietly(mnt);
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString(), "--allow-nonempty");
    assertThat(Files.exists(mnt.resolve("precious.txt"))).isFalse();
    Hintfs.unmountQuietly(mnt);
    assertThat(Files.readString(mnt.resolve("precious.txt"))).isEqualTo("hidden by a mount");
  }

  @Test
  void aCacheDirInUse_namesTheMountThatHoldsIt() throws Exception {
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString());
    long pid = Hintfs.daemonsFor(mnt).get(0);
    Path other = Files.createDirectories(tmp.resolve("other"));
    Hintfs.Result r =
        Hintfs.run("mount", src.toString(), other.toString(), "--cache-dir", cache.toString());
    assertThat(r.rc()).isEqualTo(1);
    assertThat(r.out().strip())
        .isEqualTo(
            "hintfs: cache dir "
                + cache
                + " is in use by another hintfs mount (mounted at "
                + mnt
                + ", pid "
                + pid
                + "); unmount it, or give this mount its own --cache-dir");
  }

  @Test
  void cacheSizeZeroIsRefused_andStatusNamesTheCapacitysBasis() throws Exception {
    Hintfs.Result r =
        Hintfs.run(
            "mount",
            src.toString(),
            mnt.toString(),
            "--cache-dir",
            cache.toString(),
            "--cache-size",
            "0");
    assertThat(r.rc()).isEqualTo(1);
    assertThat(r.out().strip())
        .isEqualTo(
            "hintfs: --cache-size 0 holds nothing: for a mount without a disk cache use"
                + " --no-disk-cache");
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString(), "--cache-size", "50%");
    assertThat(stats().path("cache_capacity_basis").asText()).isEqualTo("--cache-size 50%");
    Hintfs.Result st = Hintfs.run("status", mnt.toString());
    assertThat(st.out()).contains("capacity: --cache-size 50%");
  }

  @Test
  void statusWatchTakesTheMountpointAfterIt() throws Exception {
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString());
    // Redraws until killed: the timeout ends it.
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "timeout", "3", Hintfs.LAUNCHER.toString(), "status", "--watch", mnt.toString()),
            30);
    assertThat(r.out()).contains("source:").contains("(every 2.0 s; Ctrl-C ends)");
    Hintfs.Result r2 =
        Hintfs.exec(
            List.of(
                "timeout",
                "2",
                Hintfs.LAUNCHER.toString(),
                "status",
                "--watch",
                "0.5",
                mnt.toString()),
            30);
    assertThat(r2.out()).contains("(every 0.5 s; Ctrl-C ends)");
  }

  JsonNode stats() throws Exception {
    return new ObjectMapper().readTree(Files.readString(mnt.resolve(".hintfs/stats")));
  }
}
