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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mounting an S3 bucket for real: FUSE, S3Proxy on loopback, and a PyTorch client. */
class S3MountIT {
  @TempDir static Path tmp;
  static S3ProxyServer s3;
  static Path src;
  static Path flat;
  static List<String> flatFiles = new ArrayList<>();
  Path mnt;

  @BeforeAll
  static void start() throws Exception {
    s3 = new S3ProxyServer(tmp).start();
    src = HostileTree.create(tmp, 1234);
    s3.upload("train", "hostile/", src);
    // 200 files of 20-120 KB in 10 classes, for the epoch tests.
    flat = Files.createDirectories(tmp.resolve("flat"));
    Random rnd = new Random(5);
    for (int i = 0; i < 200; i++) {
      String rel = "c" + (i % 10) + "/img" + i + ".jpg";
      Files.createDirectories(flat.resolve(rel).getParent());
      HostileTree.write(flat.resolve(rel), rnd, 20_000 + rnd.nextInt(100_000));
      flatFiles.add(rel);
    }
    s3.upload("train", "flat/", flat);
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  @AfterEach
  void unmount() throws Exception {
    if (mnt != null) {
      Hintfs.unmountQuietly(mnt);
    }
  }

  Path newMountpoint(String name) throws IOException {
    mnt = Files.createDirectories(tmp.resolve(name));
    return mnt;
  }

  JsonNode stats() throws IOException {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }

  @Test
  void imageFolderAndADataLoaderOnAnS3MountSeeExactlyTheDirectorySource() throws Exception {
    newMountpoint("mnt-torch");
    Hintfs.mountS3(
        S3ProxyServer.credentialsEnv(), "s3://train/hostile", mnt, "--endpoint", s3.endpoint());
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                PyTorchClientIT.PYTHON,
                PyTorchClientIT.SCRIPT.toString(),
                mnt.resolve("train").toString(),
                src.resolve("train").toString()),
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    JsonNode n =
        new ObjectMapper().readTree(r.out().strip().lines().reduce((a, b) -> b).orElseThrow());
    assertThat(n.path("classes").toString())
        .isEqualTo("[\".hidden_class\",\"cat\",\"dog\",\"linked\",\"日本 語\"]");
    assertThat(n.path("samples").asInt()).isEqualTo(32);
    assertThat(n.path("loaded").asInt()).isEqualTo(32);
    JsonNode st = stats();
    assertThat(st.path("source").asText()).isEqualTo("s3://train/hostile/@" + s3.endpoint());
    assertThat(st.path("source_requests").path("gets").asLong()).isPositive();
    // The credentials never show in stats.
    assertThat(st.toString()).doesNotContain(S3ProxyServer.SECRET_KEY);
  }

  @Test
  void wrongKeysAMissingBucketAndADeadServerEachFailTheMountWithOneClearLine() throws Exception {
    newMountpoint("mnt-bad");
    Map<String, String> badSecret = S3ProxyServer.credentialsEnv();
    badSecret.put("AWS_SECRET_ACCESS_KEY", "not-the-secret");
    assertMountFails(badSecret, "s3://train/flat", s3.endpoint(), "the secret key is wrong");
    Map<String, String> badKey = S3ProxyServer.credentialsEnv();
    badKey.put("AWS_ACCESS_KEY_ID", "somebody-else");
    assertMountFails(
        badKey, "s3://train/flat", s3.endpoint(), "(SignatureDoesNotMatch|InvalidAccessKeyId)");
    assertMountFails(
        S3ProxyServer.credentialsEnv(),
        "s3://missing-bucket/x",
        s3.endpoint(),
        "bucket 'missing-bucket' does not exist");
    assertMountFails(
        S3ProxyServer.credentialsEnv(),
        "s3://train/flat",
        "http://127.0.0.1:1",
        "cannot reach the S3 endpoint http://127.0.0.1:1");
    assertThat(Hintfs.isMounted(mnt)).isFalse();
  }

  private void assertMountFails(
      Map<String, String> env, String source, String endpoint, String regex) throws Exception {
    Hintfs.Result r =
        Hintfs.runWithEnv(
            env,
            "mount",
            source,
            mnt.toString(),
            "--endpoint",
            endpoint,
            "--cache-dir",
            tmp.resolve("bad-cache").toString());
    assertThat(r.rc()).as(r.out()).isNotZero();
    String out = r.out().strip();
    assertThat(out.lines().count()).as(out).isEqualTo(1);
    assertThat(out).as(out).startsWith("hintfs: ").containsPattern(regex);
    assertThat(out).doesNotContain(S3ProxyServer.SECRET_KEY);
  }

  @Test
  void killTheServerMidEpoch_cachedReadsGoOn_uncachedFailWithEioInBoundedTime_thenRecover()
      throws Exception {
    newMountpoint("mnt-kill");
    mountFlat(s3.endpoint(), "--retry-timeout", "3");
    List<String> firstHalf = flatFiles.subList(0, 100);
    List<String> secondHalf = flatFiles.subList(100, 200);
    for (String f : firstHalf) {
      assertThat(Files.readAllBytes(mnt.resolve(f))).isEqualTo(Files.readAllBytes(flat.resolve(f)));
    }
    // The background writer persists what was fetched; wait until all of it is cached.
    waitFor(() -> stats().path("cached_files").asLong() >= 100);
    s3.kill();
    try {
      dropPageCache();
      long hitsBefore = stats().path("hits").asLong();
      for (String f : firstHalf) {
        assertThat(Files.readAllBytes(mnt.resolve(f)))
            .as(f)
            .isEqualTo(Files.readAllBytes(flat.resolve(f)));
      }
      assertThat(stats().path("hits").asLong()).isGreaterThanOrEqualTo(hitsBefore + 100);
      // An uncached file: EIO after the 3 s retry time (and the fetcher adds no retries of its
      // own).
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> Files.readAllBytes(mnt.resolve(secondHalf.get(0))))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("Input/output error");
      double seconds = (System.nanoTime() - t0) / 1e9;
      System.out.println("EIO after " + seconds + " s with --retry-timeout 3");
      // At most the retry time plus one request (a refused connection answers at once) and the
      // open's own round trips: a reader is never held for several retry times.
      assertThat(seconds).isBetween(2.5, 5.0);
      assertThat(stats().path("source_requests").path("failed_after_retries").asLong())
          .isPositive();
    } finally {
      s3.start();
    }
    for (String f : secondHalf) {
      assertThat(Files.readAllBytes(mnt.resolve(f)))
          .as(f)
          .isEqualTo(Files.readAllBytes(flat.resolve(f)));
    }
  }

  @Test
  void refreshUsesTheMountsCredentials_andASourceThatIsGoneLeavesTheMountServing()
      throws Exception {
    newMountpoint("mnt-refresh");
    mountFlat(s3.endpoint(), "--retry-timeout", "2");
    String f = flatFiles.get(0);
    assertThat(Files.readAllBytes(mnt.resolve(f))).isEqualTo(Files.readAllBytes(flat.resolve(f)));
    long pid = stats().path("pid").asLong();
    S3ProxyServer.put(s3.client(), "train", "flat/c0/added.jpg", new byte[] {7, 8, 9});
    try {
      // From a shell with no credentials, and from one with wrong ones: the mount's own are used
      // (before the fix the first failed its preflight after unmounting: no mount at all).
      Hintfs.Result r = Hintfs.run("refresh", mnt.toString());
      assertThat(r.rc()).as(r.out()).isZero();
      assertThat(r.out()).contains("refreshed " + mnt + ": 201 files").contains("was 200");
      r =
          Hintfs.runWithEnv(
              Map.of("AWS_ACCESS_KEY_ID", "wrong", "AWS_SECRET_ACCESS_KEY", "wrong"),
              "refresh",
              mnt.toString());
      assertThat(r.rc()).as(r.out()).isZero();
      assertThat(stats().path("pid").asLong()).isNotEqualTo(pid);
      assertThat(Files.readAllBytes(mnt.resolve("c0/added.jpg"))).containsExactly(7, 8, 9);
      // The source gone: refused in one line, and the old daemon keeps serving what it has.
      pid = stats().path("pid").asLong();
      s3.kill();
      r = Hintfs.run("refresh", mnt.toString());
      assertThat(r.rc()).isNotZero();
      assertThat(r.out().strip().lines()).hasSize(1);
      assertThat(r.out()).startsWith("hintfs: not refreshed, the mount is as it was: ");
      assertThat(Hintfs.isMounted(mnt)).isTrue();
      assertThat(stats().path("pid").asLong()).isEqualTo(pid);
      assertThat(Files.readAllBytes(mnt.resolve("c0/added.jpg"))).containsExactly(7, 8, 9);
    } finally {
      s3.start();
      s3.client()
          .removeObject(
              io.minio.RemoveObjectArgs.builder()
                  .bucket("train")
                  .object("flat/c0/added.jpg")
                  .build());
    }
  }

  @Test
  void anOutageShorterThanTheRetryTime_isNeverSeenByAReader() throws Exception {
    newMountpoint("mnt-outage");
    mountFlat(s3.endpoint(), "--retry-timeout", "20");
    // Four readers go through the files while the server is gone for 8 s in the middle.
    java.util.concurrent.ExecutorService readers =
        java.util.concurrent.Executors.newFixedThreadPool(4);
    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
    java.util.concurrent.atomic.AtomicInteger read =
        new java.util.concurrent.atomic.AtomicInteger();
    for (int r = 0; r < 4; r++) {
      int first = r;
      done.add(
          readers.submit(
              () -> {
                for (int i = first; i < flatFiles.size(); i += 4) {
                  String f = flatFiles.get(i);
                  assertThat(Files.readAllBytes(mnt.resolve(f)))
                      .as(f)
                      .isEqualTo(Files.readAllBytes(flat.resolve(f)));
                  read.incrementAndGet();
                  Thread.sleep(20); // an epoch that spans the outage
                }
                return null;
              }));
    }
    waitFor(() -> read.get() >= 40);
    s3.kill();
    Thread.sleep(8_000);
    int readDuringOutage = read.get();
    s3.start();
    for (var d : done) {
      d.get(120, java.util.concurrent.TimeUnit.SECONDS); // no reader saw an error
    }
    readers.shutdown();
    assertThat(read.get()).isEqualTo(200);
    assertThat(readDuringOutage).isLessThan(200); // the outage really fell in the epoch
    JsonNode s = stats();
    assertThat(s.path("errors").has("EIO")).as(s.path("errors").toString()).isFalse();
    assertThat(s.path("source_requests").path("retries").asLong()).isPositive();
  }

  @Test
  void eightReadersBehindA10msProxyKeepMoreThanFiveGetsInFlight() throws Exception {
    try (DelayProxy proxy = new DelayProxy("127.0.0.1", s3.port(), 10)) {
      newMountpoint("mnt-proxy");
      mountFlat(proxy.endpoint(), "--ram-cache", "0");
      proxy.resetMaxInFlight();
      readWithEightThreads(flatFiles);
      int atProxy = proxy.maxInFlight();
      long inHintfs = stats().path("source_requests").path("max_requests_in_flight").asLong();
      System.out.printf("max GETs in flight: %d at the proxy, %d in hintfs%n", atProxy, inHintfs);
      assertThat(atProxy).isGreaterThan(5);
      assertThat(inHintfs).isGreaterThan(5);
      assertThat(stats().path("misses").asLong()).isEqualTo(200);
    }
  }

  @Test
  void maxFetches_boundsTheGetsInFlight_andLetsAHintedPrefetchPastSixtyFour() throws Exception {
    try (DelayProxy proxy = new DelayProxy("127.0.0.1", s3.port(), 50)) {
      // A small bound holds for 8 readers' misses.
      newMountpoint("mnt-fetches-4");
      mountFlat(proxy.endpoint(), "--ram-cache", "0", "--max-fetches", "4");
      proxy.resetMaxInFlight();
      readWithEightThreads(flatFiles.subList(0, 80));
      assertThat(proxy.maxInFlight()).isBetween(2, 4);
      JsonNode s4 = stats();
      assertThat(s4.path("source_requests").path("max_requests_in_flight").asLong())
          .isBetween(2L, 4L);
      assertThat(s4.path("fetches_peak").asLong()).isBetween(2L, 4L);
      assertThat(s4.path("fetches_limit").asLong()).isEqualTo(4);
      Hintfs.unmountQuietly(mnt);
    }
    // A large one lets the prefetcher run ahead of an order with more GETs at once than the 64
    // that were fixed before: a source 50 ms away needs them to keep a reader fed. The proxy holds
    // each request 1 s here, longer than this 2-core VM takes to send the first hundred (their
    // signing runs in a fresh JVM; at 300 ms the peak ranged 59-92 over 7 runs, with this jar and
    // the one before it alike: the CPU's), so that what is measured is the bound. Of the 150, a
    // quarter (37) is kept for readers' misses: prefetches may hold 113.
    try (DelayProxy proxy = new DelayProxy("127.0.0.1", s3.port(), 1000)) {
      newMountpoint("mnt-fetches-150");
      mountFlat(proxy.endpoint(), "--ram-cache", "0", "--max-fetches", "150");
      proxy.resetMaxInFlight();
      Files.writeString(
          mnt.resolve(".hintfs/control"),
          "order " + String.join(" ", flatFiles) + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.WRITE);
      waitFor(() -> stats().path("prediction").path("prefetched").asLong() >= 100);
      waitFor(() -> stats().path("prediction").path("files_in_flight").asLong() == 0);
      System.out.printf(
          "--max-fetches 150: %d GETs in flight at most at the proxy, %d prefetched%n",
          proxy.maxInFlight(), stats().path("prediction").path("prefetched").asLong());
      assertThat(proxy.maxInFlight()).isGreaterThan(64);
      assertThat(stats().path("fetches_peak").asLong()).isGreaterThan(64);
      assertThat(stats().path("fetches_limit").asLong()).isEqualTo(150);
      for (String f : flatFiles.subList(0, 100)) { // fetched ahead: the right bytes
        assertThat(Files.readAllBytes(mnt.resolve(f)))
            .as(f)
            .isEqualTo(Files.readAllBytes(flat.resolve(f)));
      }
      JsonNode s = stats();
      assertThat(s.path("errors").has("EIO")).as(s.path("errors").toString()).isFalse();
    }
  }

  /**
   * Mounts s3://train/flat at {@code mnt} with the server's credentials, through {@code endpoint}.
   */
  /** Reads {@code files} of the flat tree through the mount from 8 threads, each byte checked. */
  void readWithEightThreads(List<String> files) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> ok = new ArrayList<>();
      for (String f : files) {
        ok.add(
            pool.submit(
                () ->
                    Arrays.equals(
                        Files.readAllBytes(mnt.resolve(f)), Files.readAllBytes(flat.resolve(f)))));
      }
      for (Future<Boolean> f : ok) {
        assertThat(f.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  void mountFlat(String endpoint, String... more) throws Exception {
    List<String> args = new ArrayList<>(List.of("--endpoint", endpoint));
    args.addAll(List.of(more));
    Hintfs.mountS3(
        S3ProxyServer.credentialsEnv(), "s3://train/flat", mnt, args.toArray(String[]::new));
  }

  interface Check {
    boolean ok() throws Exception;
  }

  static void waitFor(Check c) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!c.ok()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met in 30 s");
      }
      Thread.sleep(50);
    }
  }

  /** As root, so the second read reaches hintfs instead of the kernel's page cache. */
  static void dropPageCache() {
    try {
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    } catch (IOException notRoot) {
      // the kernel may then serve some reads itself; the test still checks bytes
    }
  }
}
