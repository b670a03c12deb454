package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.hintfs.backing.SourceObject;
import org.hintfs.backing.s3.S3Options;
import org.hintfs.backing.s3.S3Source;
import org.hintfs.fs.serve.HintFs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The miss path's warm-up at mount, for an S3 source (the read path's is {@link
 * org.hintfs.fs.serve.WarmUp}, which needs cached files). Before the first reader, the daemon makes
 * up to {@link #GETS} GETs with If-Match of synthetic objects from an in-process S3 ({@link
 * TrainingS3} on loopback, no network), through a client built as the mount's is ({@link S3Source}:
 * the same minio and OkHttp code, the same connection limit) from {@link #THREADS} threads, each
 * body checksummed as an admission does. The JIT then compiles the client's path before a reader's
 * first miss waits on it. Never a request to the mount's endpoint, counted nowhere (its client is
 * not the mount's). It stops at a reader's first open, after {@link #BUDGET_MILLIS}, or at {@link
 * #GETS}; a mount whose cache holds every file does not run it.
 */
final class MissWarmUp {
  private static final Logger log = LoggerFactory.getLogger(MissWarmUp.class);

  /** GETs at most. */
  static final int GETS = 2_000;

  /** Time spent at most, from the start (the listing and the server included). */
  static final long BUDGET_MILLIS = 3_000;

  /** Readers at once, as many as a DataLoader's workers commonly are. */
  static final int THREADS = 8;

  /** Synthetic objects served, of the dataset's mean file size (4 KiB to 1 MiB). */
  static final int OBJECTS = 16;

  private MissWarmUp() {}

  /** What a run did: GETs made, milliseconds, and why it stopped. */
  record Result(int gets, long millis, String stopped) {}

  /**
   * Starts the warm-up for {@code fs} on a daemon thread of minimum priority, unless its cache
   * already holds every file; {@code options} are the mount's (the connection limit is taken).
   */
  static Thread start(HintFs fs, S3Options options) {
    if (fs.catalog().fileCount() == 0
        || fs.cache().index().cachedFiles() >= fs.catalog().fileCount()) {
      return null;
    }
    long mean = fs.catalog().totalBytes() / fs.catalog().fileCount();
    int size = (int) Math.max(4 << 10, Math.min(1 << 20, mean));
    Thread t =
        new Thread(
            () -> {
              try {
                Result r =
                    run(
                        size,
                        options.maxConnections(),
                        () -> org.hintfs.fs.serve.WarmUp.sampleOpens(fs) != 0);
                log.info(
                    "miss warm-up: {} GETs of {} B from an in-process S3 in {} ms ({})",
                    r.gets(),
                    size,
                    r.millis(),
                    r.stopped());
              } catch (Exception | LinkageError e) {
                log.debug("miss warm-up ended early", e);
              }
            },
            "miss-warm-up");
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
    return t;
  }

  /**
   * One warm-up: {@link #OBJECTS} objects of {@code size} bytes in a temporary directory, served
   * in-process, read by {@link #THREADS} threads until {@code readerCame}, the budget or {@link
   * #GETS}; everything it made is removed.
   */
  static Result run(int size, int connections, java.util.function.BooleanSupplier readerCame)
      throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
    Path dir = Files.createTempDirectory("hintfs-miss-warm-up");
    // An unmount during the warm-up ends the JVM before the finally below: removed at exit then
    // (in the reverse order of these registrations: files, class directories, the directory).
    dir.toFile().deleteOnExit();
    try {
      Random rnd = new Random(size);
      byte[] body = new byte[size];
      for (int c = 0; c < 4; c++) {
        Files.createDirectory(dir.resolve("c" + c)).toFile().deleteOnExit();
      }
      for (int i = 0; i < OBJECTS; i++) {
        rnd.nextBytes(body);
        Path f = dir.resolve("c" + (i % 4)).resolve(i + ".jpg");
        f.toFile().deleteOnExit();
        Files.write(f, body);
      }
      try (TrainingS3 s3 = new TrainingS3("warm-up", "ds/", dir);
          S3Source src =
              S3Source.open(
                  "s3://warm-up/ds",
                  new S3Options(
                      s3.endpoint(),
                      "us-east-1",
                      true,
                      Duration.ofSeconds(1),
                      connections,
                      Map.of(
                          "AWS_ACCESS_KEY_ID", "warm-up", "AWS_SECRET_ACCESS_KEY", "warm-up")))) {
        List<SourceObject> objects = new ArrayList<>();
        src.list(
            o -> {
              if (!o.directory()) {
                objects.add(o);
              }
            });
        if (objects.isEmpty()) {
          return new Result(0, millisSince(t0), "nothing listed");
        }
        AtomicInteger gets = new AtomicInteger();
        AtomicReference<String> stopped = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        for (int k = 0; k < THREADS; k++) {
          int first = k;
          Thread r =
              new Thread(
                  () -> {
                    CRC32C crc = new CRC32C();
                    for (int i = first; ; i += THREADS) {
                      if (readerCame.getAsBoolean()) {
                        stopped.compareAndSet(null, "a reader came");
                        return;
                      }
                      if (System.nanoTime() > deadline) {
                        stopped.compareAndSet(null, "out of time");
                        return;
                      }
                      if (gets.incrementAndGet() > GETS) {
                        return;
                      }
                      SourceObject o = objects.get(i % objects.size());
                      byte[] b = new byte[(int) o.size()];
                      try {
                        src.read(o.path(), o.versionTag(), 0, ByteBuffer.wrap(b));
                      } catch (IOException e) {
                        stopped.compareAndSet(null, "a GET failed: " + e.getMessage());
                        return;
                      }
                      crc.reset();
                      crc.update(b, 0, b.length);
                    }
                  },
                  "miss-warm-up-" + k);
          r.setDaemon(true);
          r.setPriority(Thread.MIN_PRIORITY);
          readers.add(r);
          r.start();
        }
        for (Thread r : readers) {
          r.join();
        }
        return new Result(
            Math.min(gets.get(), GETS),
            millisSince(t0),
            stopped.get() == null ? "all made" : stopped.get());
      }
    } finally {
      AotTrainCommand.deleteTree(dir);
    }
  }

  private static long millisSince(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }
}
