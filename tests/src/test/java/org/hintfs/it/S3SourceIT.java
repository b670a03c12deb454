package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.minio.MinioClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceObject;
import org.hintfs.backing.SourceUnavailableException;
import org.hintfs.backing.s3.S3Options;
import org.hintfs.backing.s3.S3Source;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link S3Source} against a real S3 server (S3Proxy on loopback, authentication on). */
class S3SourceIT {
  @TempDir static Path tmp;
  static S3ProxyServer s3;
  static final Map<String, byte[]> objects = new TreeMap<>();

  @BeforeAll
  static void start() throws Exception {
    s3 = new S3ProxyServer(tmp).start();
    MinioClient c = s3.client();
    c.makeBucket(io.minio.MakeBucketArgs.builder().bucket("data").build());
    Random rnd = new Random(7);
    String[] names = {
      "train/cat/1.jpg",
      "train/cat/2.JPG",
      "train/dog/ü 3.jpg",
      "train/日本 語/4.png",
      "train/dog/empty.jpg",
      "val/cat/5.jpg",
      "big/shard-0.tar",
    };
    for (String n : names) {
      int size =
          n.startsWith("big/") ? 3_000_000 : n.contains("empty") ? 0 : 1 + rnd.nextInt(50_000);
      byte[] b = new byte[size];
      rnd.nextBytes(b);
      objects.put(n, b);
      S3ProxyServer.put(c, "data", "sets/one/" + n, b);
    }
    for (int i = 0; i < 80; i++) {
      byte[] b = new byte[1000 + i];
      rnd.nextBytes(b);
      String n = "many/c" + (i % 8) + "/f" + i + ".jpg";
      objects.put(n, b);
      S3ProxyServer.put(c, "data", "sets/one/" + n, b);
    }
    // A sibling prefix that shares the first characters must not leak into the listing.
    S3ProxyServer.put(c, "data", "sets/one-more/x.jpg", new byte[] {1});
    S3ProxyServer.put(c, "data", "sets/onex", new byte[] {2});
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  static S3Options options(Map<String, String> env, Duration retry) {
    return new S3Options(s3.endpoint(), null, false, retry, 128, env);
  }

  static S3Source open(String spec) throws Exception {
    return S3Source.open(spec, options(S3ProxyServer.credentialsEnv(), Duration.ofSeconds(5)));
  }

  @Test
  void theListingAndEveryByteMatchWhatWasUploaded() throws Exception {
    try (S3Source src = open("s3://data/sets/one")) {
      Map<String, SourceObject> listed = new TreeMap<>();
      src.list(o -> listed.put(o.path(), o));
      assertThat(listed.keySet()).containsExactlyElementsOf(objects.keySet());
      for (Map.Entry<String, byte[]> e : objects.entrySet()) {
        SourceObject o = listed.get(e.getKey());
        assertThat(o.size()).as(e.getKey()).isEqualTo(e.getValue().length);
        assertThat(o.versionTag()).as(e.getKey()).matches("[0-9a-f]{32}(-[0-9]+)?:" + o.size());
        byte[] whole = src.readRange(o.path(), o.versionTag(), 0, (int) o.size());
        assertThat(whole).as(e.getKey()).isEqualTo(e.getValue());
        assertThat(src.stat(o.path()).versionTag()).isEqualTo(o.versionTag());
      }
      // Ranged reads at odd offsets, and past the end.
      byte[] big = objects.get("big/shard-0.tar");
      String tag = listed.get("big/shard-0.tar").versionTag();
      Random rnd = new Random(3);
      for (int i = 0; i < 40; i++) {
        int off = rnd.nextInt(big.length);
        int len = 1 + rnd.nextInt(300_000);
        byte[] got = src.readRange("big/shard-0.tar", tag, off, len);
        int expect = Math.min(len, big.length - off);
        assertThat(got).hasSize(expect);
        assertThat(ByteBuffer.wrap(got)).isEqualTo(ByteBuffer.wrap(big, off, expect));
      }
      // Into native memory (a block read ahead): through small chunks, every byte, the position
      // moved by what was read, short only at the end.
      for (int off : new int[] {0, 12_345, big.length - 200_000}) {
        ByteBuffer direct = ByteBuffer.allocateDirect(300_000);
        direct.position(7);
        int want = Math.min(direct.remaining(), big.length - off);
        assertThat(src.read("big/shard-0.tar", tag, off, direct)).isEqualTo(want);
        assertThat(direct.position()).isEqualTo(7 + want);
        assertThat(direct.flip().position(7)).isEqualTo(ByteBuffer.wrap(big, off, want));
      }
      // ... straight from the socket (PlainHttpGets), not through minio-java.
      assertThat(src.counters().get("plainGets")).isEqualTo(3);
      assertThat(src.counters().get("plainAskedAgain")).isZero();
      // One presigned URL for the key's three GETs (the range is a header the signature leaves
      // out).
      assertThat(src.counters().get("presigns")).isEqualTo(1);
      assertThat(src.read("big/shard-0.tar", tag, big.length + 10, ByteBuffer.allocate(10)))
          .isZero();
      assertThat(src.stat("train").directory()).isTrue();
      assertThatThrownBy(() -> src.stat("train/nope.jpg")).isInstanceOf(NoSuchFileException.class);
      assertThat(src.describe()).isEqualTo("s3://data/sets/one/@" + s3.endpoint());
      assertThat(src.counters().get("gets")).isGreaterThanOrEqualTo(objects.size() + 40L);
    }
  }

  @Test
  void anObjectChangedSinceTheListingIsRefusedNotServed() throws Exception {
    MinioClient c = s3.client();
    S3ProxyServer.put(c, "data", "changing/a.jpg", "first".getBytes(StandardCharsets.UTF_8));
    try (S3Source src = open("s3://data/changing")) {
      List<SourceObject> listed = new ArrayList<>();
      src.list(listed::add);
      String tag = listed.get(0).versionTag();
      assertThat(new String(src.readRange("a.jpg", tag, 0, 5), StandardCharsets.UTF_8))
          .isEqualTo("first");
      S3ProxyServer.put(c, "data", "changing/a.jpg", "other".getBytes(StandardCharsets.UTF_8));
      assertThatThrownBy(() -> src.readRange("a.jpg", tag, 0, 5))
          .isInstanceOf(ObjectChangedException.class);
      assertThat(new String(src.readRange("a.jpg", null, 0, 5), StandardCharsets.UTF_8))
          .isEqualTo("other");
    }
  }

  @Test
  void readsIntoNativeMemory_answersTheyDoNotRead_areAskedAgainThroughMinio() throws Exception {
    MinioClient c = s3.client();
    S3ProxyServer.put(c, "data", "native/a.bin", "first version".getBytes(StandardCharsets.UTF_8));
    try (S3Source src = open("s3://data/native")) {
      List<SourceObject> listed = new ArrayList<>();
      src.list(listed::add);
      String tag = listed.get(0).versionTag();
      ByteBuffer dst = ByteBuffer.allocateDirect(64);
      assertThat(src.read("a.bin", tag, 6, dst)).isEqualTo(7);
      assertThat(StandardCharsets.UTF_8.decode(dst.flip()).toString()).isEqualTo("version");
      // Past the end (416), a missing key (404): each as the minio path answers it.
      assertThat(src.read("a.bin", tag, 500, ByteBuffer.allocateDirect(8))).isZero();
      assertThat(src.counters().get("presigns")).as("a.bin's URL used again").isEqualTo(1);
      assertThatThrownBy(() -> src.read("gone.bin", null, 0, ByteBuffer.allocateDirect(8)))
          .isInstanceOf(NoSuchFileException.class);
      assertThat(src.counters().get("plainAskedAgain")).isEqualTo(2);
      // An answer not read plainly drops the key's URL: the next GET signs a new one.
      ByteBuffer again = ByteBuffer.allocateDirect(64);
      assertThat(src.read("a.bin", tag, 0, again)).isEqualTo(13);
      assertThat(src.counters().get("presigns")).isEqualTo(3);
      // Changed since the listing: refused, never read into the buffer.
      S3ProxyServer.put(
          c, "data", "native/a.bin", "other version".getBytes(StandardCharsets.UTF_8));
      ByteBuffer changed = ByteBuffer.allocateDirect(64);
      assertThatThrownBy(() -> src.read("a.bin", tag, 0, changed))
          .isInstanceOf(ObjectChangedException.class);
      assertThat(changed.position()).isZero();
      ByteBuffer now = ByteBuffer.allocateDirect(64);
      assertThat(src.read("a.bin", null, 0, now)).isEqualTo(13);
      assertThat(StandardCharsets.UTF_8.decode(now.flip()).toString()).isEqualTo("other version");
      assertThat(src.counters().get("plainGets")).isEqualTo(6);
    }
  }

  @Test
  void wrongKeysAMissingBucketAndADeadEndpointEachFailWithTheirOwnMessage() throws Exception {
    Map<String, String> badSecret = S3ProxyServer.credentialsEnv();
    badSecret.put("AWS_SECRET_ACCESS_KEY", "wrong");
    assertThatThrownBy(() -> S3Source.open("s3://data/sets/one", options(badSecret, Duration.ZERO)))
        .isInstanceOf(AccessDeniedException.class)
        .hasMessageContaining("secret key is wrong");
    Map<String, String> badKey = S3ProxyServer.credentialsEnv();
    badKey.put("AWS_ACCESS_KEY_ID", "nobody");
    assertThatThrownBy(() -> S3Source.open("s3://data/sets/one", options(badKey, Duration.ZERO)))
        .isInstanceOf(AccessDeniedException.class)
        .hasMessageMatching(".*(access key is not known|secret key is wrong).*");
    assertThatThrownBy(() -> open("s3://no-such-bucket/x"))
        .isInstanceOf(NoSuchFileException.class)
        .hasMessageContaining("bucket 'no-such-bucket' does not exist");
    S3Options dead =
        new S3Options(
            "http://127.0.0.1:1", null, false, Duration.ZERO, 8, S3ProxyServer.credentialsEnv());
    assertThatThrownBy(() -> S3Source.open("s3://data/sets/one", dead))
        .isInstanceOf(SourceUnavailableException.class)
        .hasMessageContaining("cannot reach the S3 endpoint http://127.0.0.1:1");
    assertThatThrownBy(() -> open("s3://Bad_Bucket/x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a valid bucket name");
  }

  @Test
  void credentialsComeFromAProfileFileToo() throws Exception {
    Path creds = tmp.resolve("credentials");
    Files.writeString(
        creds,
        "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
            + "[train]\naws_access_key_id = "
            + S3ProxyServer.ACCESS_KEY
            + "\naws_secret_access_key = "
            + S3ProxyServer.SECRET_KEY
            + "\n");
    Map<String, String> env = new HashMap<>();
    env.put("AWS_SHARED_CREDENTIALS_FILE", creds.toString());
    env.put("AWS_PROFILE", "train");
    try (S3Source src = S3Source.open("s3://data/sets/one", options(env, Duration.ZERO))) {
      List<SourceObject> listed = new ArrayList<>();
      src.list(listed::add);
      assertThat(listed).hasSize(objects.size());
    }
    env.put("AWS_PROFILE", "default");
    assertThatThrownBy(() -> S3Source.open("s3://data/sets/one", options(env, Duration.ZERO)))
        .isInstanceOf(AccessDeniedException.class);
    env.put("AWS_PROFILE", "missing");
    assertThatThrownBy(() -> S3Source.open("s3://data/sets/one", options(env, Duration.ZERO)))
        .hasMessageContaining("profile 'missing' is not in " + creds);
  }

  @Test
  void aDeadServerFailsReadsAfterTheRetryTime_andTheyWorkOnceItIsBack() throws Exception {
    S3Source src =
        S3Source.open(
            "s3://data/sets/one", options(S3ProxyServer.credentialsEnv(), Duration.ofSeconds(2)));
    try (src) {
      byte[] expect = objects.get("train/cat/1.jpg");
      assertThat(src.readRange("train/cat/1.jpg", null, 0, expect.length)).isEqualTo(expect);
      s3.kill();
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> src.readRange("train/cat/1.jpg", null, 0, expect.length))
          .isInstanceOfSatisfying(
              SourceUnavailableException.class, e -> assertThat(e.retried()).isTrue());
      double seconds = (System.nanoTime() - t0) / 1e9;
      // 2 s of retries and a last attempt; no hang.
      assertThat(seconds).isBetween(1.9, 8.0);
      assertThat(src.counters().get("retries")).isGreaterThan(2);
      s3.start();
      assertThat(src.readRange("train/cat/1.jpg", null, 0, expect.length)).isEqualTo(expect);
    } finally {
      if (!isUp()) {
        s3.start();
      }
    }
  }

  private static boolean isUp() {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", s3.port())) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void manyGetsAreInFlightAtOnceBehindA10msProxy() throws Exception {
    try (DelayProxy proxy = new DelayProxy("127.0.0.1", s3.port(), 10);
        S3Source src = behind(proxy, 128)) {
      readAllAtOnce(src, proxy, 32);
      // Measured at the proxy, outside hintfs: OkHttp's default dispatcher would cap this at 5.
      assertThat(proxy.maxInFlight()).isGreaterThan(5);
      assertThat(src.counters().get("maxRequestsInFlight")).isGreaterThan(5);
    }
  }

  @Test
  void requestsWaitingForAnAnswerStayWithinTheConnectionLimit() throws Exception {
    // Each request runs on its caller's thread; a limit on those in flight still holds.
    try (DelayProxy proxy = new DelayProxy("127.0.0.1", s3.port(), 10);
        S3Source src = behind(proxy, 3)) {
      readAllAtOnce(src, proxy, 16);
      assertThat(proxy.maxInFlight()).isBetween(2, 3);
    }
  }

  private static S3Source behind(DelayProxy proxy, int maxConnections) throws Exception {
    return S3Source.open(
        "s3://data/sets/one",
        new S3Options(
            proxy.endpoint(),
            null,
            false,
            Duration.ofSeconds(5),
            maxConnections,
            S3ProxyServer.credentialsEnv()));
  }

  /** Reads every listed object whole from {@code threads} threads, checking each one's bytes. */
  private static void readAllAtOnce(S3Source src, DelayProxy proxy, int threads) throws Exception {
    List<SourceObject> listed = new ArrayList<>();
    src.list(listed::add);
    proxy.resetMaxInFlight();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Boolean>> ok = new ArrayList<>();
      for (SourceObject o : listed) {
        ok.add(
            pool.submit(
                () ->
                    java.util.Arrays.equals(
                        src.readRange(o.path(), o.versionTag(), 0, (int) o.size()),
                        objects.get(o.path()))));
      }
      for (Future<Boolean> f : ok) {
        assertThat(f.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
