package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the cache holds is served while the source hangs: S3Proxy stopped (SIGSTOP: its connections
 * stay open and nothing answers), more readers of uncached files than the mount keeps request
 * threads, and the cached files, the directory tree and {@code .hintfs/stats} still read at once.
 */
class HungSourceIT {
  /** Request threads kept by the mount: fewer than the readers that will wait on the source. */
  static final int FUSE_THREADS = 4;

  /**
   * Readers of uncached files during the hang: more than {@link #FUSE_THREADS}, and more than the
   * 12 asynchronous requests the kernel sends a FUSE mount by default (a page-cache read is one).
   */
  static final int MISSERS = 16;

  @TempDir static Path tmp;
  static S3ProxyServer s3;
  static Path src;
  static final List<String> cached = new ArrayList<>();
  static final List<String> uncached = new ArrayList<>();
  Path mnt;

  @BeforeAll
  static void start() throws Exception {
    s3 = new S3ProxyServer(tmp).start();
    src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(40);
    // 8 classes of 8 files, 20-60 KB: classes c0-c3 are prefetched, c4-c7 are not.
    for (int i = 0; i < 64; i++) {
      String rel = "c" + (i % 8) + "/img" + i + ".jpg";
      Files.createDirectories(src.resolve(rel).getParent());
      HostileTree.write(src.resolve(rel), rnd, 20_000 + rnd.nextInt(40_000));
      (i % 8 < 4 ? cached : uncached).add(rel);
    }
    s3.upload("train", "hung/", src);
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  @AfterEach
  void unmount() throws Exception {
    s3.answerAgain();
    if (mnt != null) {
      Hintfs.unmountQuietly(mnt);
    }
  }

  @Test
  void cachedFilesTheTreeAndStats_areServedWhileMoreReadersThanThreadsWaitOnAHungSource()
      throws Exception {
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mountS3(
        S3ProxyServer.credentialsEnv(),
        "s3://train/hung",
        mnt,
        "--endpoint",
        s3.endpoint(),
        "--cache-size",
        "100%",
        "--fuse-threads",
        Integer.toString(FUSE_THREADS),
        // Longer than the whole test: a reader of an uncached file waits for the source, and
        // fails only if it never comes back.
        "--retry-timeout",
        "120");
    Hintfs.Result p =
        Hintfs.run(
            "prefetch",
            "--quiet",
            mnt.resolve("c0").toString(),
            mnt.resolve("c1").toString(),
            mnt.resolve("c2").toString(),
            mnt.resolve("c3").toString());
    assertThat(p.rc()).as(p.out()).isZero();

    ExecutorService missers = Executors.newFixedThreadPool(MISSERS);
    List<Future<byte[]>> missed = new ArrayList<>();
    s3.stopAnswering();
    try {
      for (int i = 0; i < MISSERS; i++) {
        Path f = mnt.resolve(uncached.get(i));
        missed.add(missers.submit(() -> Files.readAllBytes(f)));
      }
      Thread.sleep(1000); // every misser is waiting on the source by now
      assertThat(missed).noneMatch(Future::isDone);

      // Before the change, the first of these waited for the source: every request thread, or
      // every asynchronous slot of the kernel, was held by a reader of an uncached file.
      ExecutorService cachedReaders = Executors.newSingleThreadExecutor();
      Future<Long> served =
          cachedReaders.submit(
              () -> {
                long slowest = 0;
                for (String rel : cached) {
                  long t0 = System.nanoTime();
                  assertThat(Files.readAllBytes(mnt.resolve(rel)))
                      .as(rel)
                      .isEqualTo(Files.readAllBytes(src.resolve(rel)));
                  slowest = Math.max(slowest, System.nanoTime() - t0);
                }
                try (Stream<Path> walk = Files.walk(mnt)) {
                  assertThat(walk.filter(Files::isRegularFile).count()).isEqualTo(64);
                }
                JsonNode st =
                    new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
                assertThat(st.path("fuse_threads").asInt()).isGreaterThan(FUSE_THREADS);
                return slowest;
              });
      // Generous for a loaded CI machine; a read that waited on the source would wait out the hang.
      long slowestNs = served.get(20, TimeUnit.SECONDS);
      cachedReaders.shutdown();
      assertThat(missed).as("the source still hangs").noneMatch(Future::isDone);
      System.out.printf(
          "HungSourceIT: %d cached files read during the hang, slowest %.1f ms%n",
          cached.size(), slowestNs / 1e6);
    } finally {
      s3.answerAgain();
    }
    for (int i = 0; i < MISSERS; i++) {
      assertThat(missed.get(i).get(90, TimeUnit.SECONDS))
          .as(uncached.get(i))
          .isEqualTo(Files.readAllBytes(src.resolve(uncached.get(i))));
    }
    missers.shutdown();
    JsonNode st = new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
    assertThat(st.path("fuse_threads_peak").asInt()).isGreaterThan(MISSERS);
    assertThat(st.path("fuse_threads_at_max").asLong()).isZero();
  }
}
