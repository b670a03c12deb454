package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.hintfs.fs.stream.Stream;
import org.hintfs.policy.ImageFolderView;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One mount, in-process, under many threads at once: readers with and without an order opening and
 * reading, their hint lines (datasets, orders, losses), evictions and policy switches through the
 * control file, and stats read all along. What must hold: every byte read is the source's; the
 * cache's counters add up (an open is a hit or a miss, once); the cache's policy and accounting
 * agree (nothing both cached and evicted); a reader's opens while its writer's stream lives are
 * that stream's; the default dataset shown is one declaration's; and everything finishes within a
 * timeout (on timeout the failure shows every thread's stack).
 *
 * <p>Owners are real processes ({@code sleep}), children of this JVM: the mount traces streams
 * through {@code /proc}, and a stream whose owner is gone is ended.
 */
class ConcurrencyStressTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int CLASSES = 4;
  private static final int PER_CLASS = 40;
  private static final int SAMPLES = CLASSES * PER_CLASS;
  private static final long RUN_MS = 5_000;
  private static final long TIMEOUT_MS = 30_000;

  @TempDir Path tmp;
  private final Map<String, byte[]> content = new HashMap<>();
  private final List<String> train = new ArrayList<>(); // in ImageFolder order: #i is train.get(i)
  private final List<Process> owners = new ArrayList<>();
  private final Queue<String> failures = new ConcurrentLinkedQueue<>();
  private HintFs fs;

  @BeforeEach
  void setUp() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src"));
    Random r = new Random(7);
    for (int c = 0; c < CLASSES; c++) {
      for (int i = 0; i < PER_CLASS; i++) {
        String rel = String.format("train/c%d/%02d.jpg", c, i);
        byte[] b = new byte[200 + r.nextInt(3000)];
        r.nextBytes(b);
        write(root, rel, b);
        train.add(rel);
      }
    }
    for (int c = 0; c < 3; c++) {
      for (int i = 0; i < 8; i++) {
        byte[] b = new byte[100 + r.nextInt(500)];
        r.nextBytes(b);
        write(root, String.format("other/k%d/%02d.jpg", c, i), b);
      }
    }
    LocalDirSource src = new LocalDirSource(root);
    MountConfig cfg =
        MountConfig.defaults(root.toString(), tmp.resolve("mnt"))
            .withCache(tmp.resolve("cache"), "40%");
    fs = Mount.create(src, Mount.listCatalog(src), cfg);
  }

  private void write(Path root, String rel, byte[] b) throws IOException {
    Path p = root.resolve(rel);
    Files.createDirectories(p.getParent());
    Files.write(p, b);
    content.put("/" + rel, b);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (Process p : owners) {
      p.destroyForcibly();
    }
    if (fs != null) {
      fs.close();
      fs.cache().close();
    }
  }

  /** A live process to own a stream: a child of this JVM, as a rank is of its launcher. */
  private long owner() throws IOException {
    Process p = new ProcessBuilder("sleep", "120").start();
    owners.add(p);
    return p.pid();
  }

  @Test
  void manyThreadsOpeningReadingEvictingAndHinting_keepEveryInvariant() throws Exception {
    int plain = 3;
    int ordered = 2;
    long[] plainPids = new long[plain];
    for (int k = 0; k < plain; k++) {
      plainPids[k] = owner();
    }
    long[] orderedPids = new long[ordered];
    for (int k = 0; k < ordered; k++) {
      orderedPids[k] = owner();
    }
    long flipperPid = owner();
    long adminPid = owner();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong sampleOpens = new AtomicLong(); // opens of dataset files that returned
    AtomicLong allOpens = new AtomicLong(); // every open that returned, virtual files too
    AtomicLong generations = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);
    List<Runnable> work = new ArrayList<>();

    for (int k = 0; k < plain; k++) {
      long pid = plainPids[k];
      java.util.concurrent.atomic.AtomicReference<Generation> current =
          new java.util.concurrent.atomic.AtomicReference<>();
      long seed = k;
      int reader = k;
      // The reader: opens any file of the dataset, from before its first hint on, and counts the
      // opens that started and ended while its writer's stream of the moment lived.
      work.add(
          () -> {
            Random r = new Random(seed);
            while (!stop.get()) {
              Generation g = current.get();
              readAndCheck("/" + train.get(r.nextInt(SAMPLES)), pid, sampleOpens, allOpens);
              if (g != null && !g.ending) {
                g.opens.incrementAndGet(); // its stream was live from before this open to after
              }
            }
          });
      // Its writer (the same process): declares the dataset, which starts its stream, sends
      // losses; then the stream is ended and the next line starts another (as a new run of the
      // rank would), so that opens race many starts.
      work.add(
          () -> {
            Random r = new Random(100 + seed);
            sleepQuietly(r.nextInt(20));
            while (!stop.get()) {
              control(pid, "dataset train\n", allOpens);
              Generation g = new Generation(streamOf(pid));
              current.set(g);
              for (int j = 0; j < 5 && !stop.get(); j++) {
                control(
                    pid,
                    "loss #"
                        + r.nextInt(SAMPLES)
                        + "="
                        + r.nextFloat()
                        + " #"
                        + r.nextInt(SAMPLES)
                        + "="
                        + r.nextFloat()
                        + "\n",
                    allOpens);
                sleepQuietly(1);
              }
              g.ending = true;
              long counted = g.stream.opens.sum();
              long opened = g.opens.get();
              if (counted < opened) {
                failures.add(
                    "reader "
                        + reader
                        + ": "
                        + opened
                        + " opens while its stream lived, the stream counted "
                        + counted);
              }
              generations.incrementAndGet();
              fs.hints().streams().end(g.stream);
            }
          });
    }
    for (int k = 0; k < ordered; k++) {
      long pid = orderedPids[k];
      long seed = 10 + k;
      // A reader that sends its order, reads part of it, and sends the next (a new epoch).
      work.add(
          () -> {
            Random r = new Random(seed);
            control(pid, "dataset train\n", allOpens);
            while (!stop.get()) {
              List<Integer> perm = new ArrayList<>();
              for (int i = 0; i < SAMPLES; i++) {
                perm.add(i);
              }
              java.util.Collections.shuffle(perm, r);
              StringBuilder line = new StringBuilder("order");
              for (int i : perm) {
                line.append(" #").append(i);
              }
              control(pid, line.append('\n').toString(), allOpens);
              int upTo = 20 + r.nextInt(60);
              for (int p = 0; p < upTo && !stop.get(); p++) {
                readAndCheck("/" + train.get(perm.get(p)), pid, sampleOpens, allOpens);
              }
            }
          });
    }
    // Declares the other dataset and this one in turn: the default moves between them.
    work.add(
        () -> {
          int n = 0;
          while (!stop.get()) {
            control(flipperPid, n++ % 2 == 0 ? "dataset other\n" : "dataset train\n", allOpens);
            sleepQuietly(1);
          }
        });
    // Evicts files and whole classes, and switches the policy now and then.
    work.add(
        () -> {
          Random r = new Random(99);
          int n = 0;
          while (!stop.get()) {
            n++;
            String line =
                n % 50 == 0
                    ? (n % 100 == 0 ? "policy clairvoyant\n" : "policy auto\n")
                    : n % 10 == 0
                        ? "evict train/c" + r.nextInt(CLASSES) + "\n"
                        : "evict " + train.get(r.nextInt(SAMPLES)) + "\n";
            control(adminPid, line, allOpens);
            sleepQuietly(1);
          }
        });
    // Reads the stats all along: they add up at every instant, and show one dataset.
    work.add(
        () -> {
          while (!stop.get()) {
            long before = sampleOpens.get();
            JsonNode s = stats(allOpens);
            long opened = s.get("open_hits").asLong() + s.get("open_misses").asLong();
            if (opened < before) {
              failures.add("stats counted " + opened + " opens, " + before + " had returned");
            }
            JsonNode h = s.get("hints");
            String ds = h.get("dataset").isNull() ? "train" : h.get("dataset").asText();
            int samples = h.get("samples").asInt();
            int classes = h.get("classes").asInt();
            boolean one =
                h.get("dataset").isNull()
                    ? samples == 0
                    : ds.equals("train")
                        ? samples == SAMPLES && classes == CLASSES
                        : ds.equals("other") && samples == 24 && classes == 3;
            if (!one) {
              failures.add("dataset " + ds + " shown with " + samples + " samples, " + classes);
            }
            fs.cache().index().checkInvariants();
            sleepQuietly(5);
          }
        });

    ExecutorService pool = Executors.newFixedThreadPool(work.size());
    List<Future<?>> done = new ArrayList<>();
    for (Runnable w : work) {
      done.add(
          pool.submit(
              () -> {
                try {
                  go.await();
                  w.run();
                } catch (Throwable t) {
                  failures.add(t + " at " + java.util.Arrays.toString(t.getStackTrace()));
                  stop.set(true);
                }
                return null;
              }));
    }
    go.countDown();
    Thread.sleep(RUN_MS);
    stop.set(true);
    pool.shutdown();
    if (!pool.awaitTermination(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
      String stacks = threadDump();
      pool.shutdownNow();
      throw new AssertionError("not done within " + TIMEOUT_MS + " ms:\n" + stacks);
    }
    for (Future<?> f : done) {
      f.get();
    }
    assertThat(failures).isEmpty();
    assertThat(fs.hints().awaitApplied(10_000)).isTrue();

    // The counters add up: each open of a sample was a hit or a miss, once.
    JsonNode s = stats(allOpens);
    assertThat(s.get("open_hits").asLong() + s.get("open_misses").asLong())
        .isEqualTo(sampleOpens.get());
    // (the stats' own open counts once it returned: after they were rendered)
    assertThat(s.get("opens").asLong()).isEqualTo(allOpens.get() - 1);
    assertThat(sampleOpens.get()).isGreaterThan(100);
    assertThat(s.get("admin").get("evicted_files").asLong()).isPositive(); // it did evict
    assertThat(s.get("prediction").get("prefetched").asLong()).isPositive(); // and prefetch
    // A reader's opens while its writer's stream lived were that stream's (checked as it ended).
    assertThat(generations.get()).isGreaterThan(10);
    // Nothing both cached and evicted: the policy and the accounting agree, and once every fetch
    // settled, evicting the whole dataset leaves nothing of it.
    fs.cache().index().checkInvariants();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((fs.prefetcher().filesInFlight() > 0
            || fs.cache().fetchesInFlight() > 0
            || fs.missFetchesPending() > 0)
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    for (Stream st : fs.hints().streams().active()) {
      fs.hints().streams().end(st); // no prefetching from here on
    }
    deadline = System.nanoTime() + 10_000_000_000L;
    while ((fs.prefetcher().filesInFlight() > 0
            || fs.cache().fetchesInFlight() > 0
            || fs.missFetchesPending() > 0)
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    fs.cache().flush(); // writes queued for the disk tier are in
    control(adminPid, "evict train\nevict other\n", allOpens);
    assertThat(fs.hints().awaitApplied(10_000)).isTrue();
    assertThat(fs.cache().index().cachedIds()).isEmpty();
    for (int i = 0; i < SAMPLES; i++) {
      assertThat(fs.cache().isCached(fs.catalog().lookup(train.get(i)))).isFalse();
    }
    fs.cache().index().checkInvariants();
  }

  /**
   * Two writers declaring different datasets at once, many times: the default dataset is one of
   * theirs, whole (its root, view and index map agree), never a mix.
   */
  @Test
  void twoWritersDeclaringDatasetsAtOnce_leaveOneWholeDefault() throws Exception {
    Catalog catalog = fs.catalog();
    ImageFolderView trainView = fs.hints().view(catalog, catalog.lookup("train"));
    ImageFolderView otherView = fs.hints().view(catalog, catalog.lookup("other"));
    long a = owner();
    long b = owner();
    AtomicLong opens = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 400; round++) {
        CountDownLatch go = new CountDownLatch(1);
        Future<?> fa =
            pool.submit(
                () -> {
                  go.await();
                  control(a, "dataset train\n", opens);
                  return null;
                });
        Future<?> fb =
            pool.submit(
                () -> {
                  go.await();
                  control(b, "dataset other\n", opens);
                  return null;
                });
        go.countDown();
        fa.get(10, TimeUnit.SECONDS);
        fb.get(10, TimeUnit.SECONDS);
        String dir = fs.hints().datasetDir();
        ImageFolderView v = fs.hints().view();
        assertThat(v)
            .as("round %d: view of %s", round, dir)
            .isSameAs(dir.equals("train") ? trainView : otherView);
        ImageFolderView not = v == trainView ? otherView : trainView;
        assertThat(fs.hints().sampleOf(v.node(1))).as("round %d", round).isEqualTo(1);
        assertThat(fs.hints().sampleOf(not.node(1))).as("round %d", round).isEqualTo(-1);
        // Both were declared: every sample of either has its class.
        assertThat(fs.hints().classOf(trainView.node(SAMPLES - 1))).isEqualTo(CLASSES - 1);
        assertThat(fs.hints().classOf(otherView.node(23))).isEqualTo(2);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private void readAndCheck(String path, long pid, AtomicLong sampleOpens, AtomicLong allOpens) {
    try {
      long fh = fs.open(path, false, pid);
      sampleOpens.incrementAndGet();
      allOpens.incrementAndGet();
      try {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long off = 0;
        int n;
        while ((n = fs.read(fh, off, 1024, out::write)) > 0) {
          off += n;
        }
        if (!java.util.Arrays.equals(out.toByteArray(), content.get(path))) {
          failures.add(path + ": " + out.size() + " bytes read, not the source's");
        }
      } finally {
        fs.release(fh, pid);
      }
    } catch (IOException e) {
      failures.add(path + ": " + e);
    }
  }

  private void control(long pid, String text, AtomicLong allOpens) {
    try {
      long fh = fs.open("/.hintfs/control", true, pid);
      allOpens.incrementAndGet();
      try {
        fs.write(fh, text.getBytes(StandardCharsets.UTF_8), pid);
      } finally {
        fs.release(fh, pid);
      }
    } catch (IOException e) {
      failures.add(text.strip() + ": " + e);
    }
  }

  private JsonNode stats(AtomicLong allOpens) {
    try {
      long fh = fs.open("/.hintfs/stats", false);
      allOpens.incrementAndGet();
      try {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long off = 0;
        int n;
        while ((n = fs.read(fh, off, 65536, out::write)) > 0) {
          off += n;
        }
        return JSON.readTree(out.toByteArray());
      } finally {
        fs.release(fh);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** One stream of a plain reader's writer, and the opens made while it surely lived. */
  private static final class Generation {
    final Stream stream;
    final AtomicLong opens = new AtomicLong();
    volatile boolean ending;

    Generation(Stream stream) {
      this.stream = stream;
    }
  }

  private Stream streamOf(long pid) {
    for (Stream st : fs.hints().streams().active()) {
      if (st.owner() == pid) {
        return st;
      }
    }
    return null;
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Every thread's stack, and the deadlocked ones named. */
  private static String threadDump() {
    var mx = ManagementFactory.getThreadMXBean();
    StringBuilder sb = new StringBuilder();
    long[] dead = mx.findDeadlockedThreads();
    if (dead != null) {
      sb.append("deadlocked: ").append(java.util.Arrays.toString(dead)).append('\n');
    }
    for (ThreadInfo t : mx.dumpAllThreads(true, true)) {
      sb.append(t.getThreadName())
          .append(" (")
          .append(t.getThreadId())
          .append(") ")
          .append(t.getThreadState());
      if (t.getLockName() != null) {
        sb.append(" on ").append(t.getLockName());
      }
      if (t.getLockOwnerName() != null) {
        sb.append(" held by ").append(t.getLockOwnerName());
      }
      sb.append('\n');
      for (StackTraceElement e : t.getStackTrace()) {
        sb.append("    at ").append(e).append('\n');
      }
    }
    return sb.toString();
  }
}
