package org.hintfs.fs.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The training run of the AOT cache (Java 25's {@code -XX:AOTCacheOutput}, JEP 483/514/515): the
 * launcher runs this once per jar, and every later daemon starts with the classes it loaded and
 * linked and the method profiles it recorded. It exercises the real paths a daemon takes in its
 * first minutes, in one JVM, through the kernel: a mount of a local directory, listed, hinted
 * (dataset, seed, losses) and read as misses by several readers, unmounted, then mounted again and
 * read as hits from LMDB (the kernel's pages gone with the first mount, as a later job finds the
 * cache), its stats and {@code status} read, then unmounted. An S3 source's client is not in it: at
 * 100,000 files over S3 it was worth nothing measurable (BENCHMARKS.md, issue 39).
 */
@Command(
    name = "aot-train",
    hidden = true,
    description = "the AOT cache's training run (the launcher runs it; see docs/CONFIGURATION.md)")
final class AotTrainCommand implements Callable<Integer> {
  static final int FILES = 400;

  @Parameters(index = "0", paramLabel = "WORKDIR", description = "scratch directory (emptied)")
  Path work;

  @Override
  public Integer call() throws Exception {
    Path w = work.toAbsolutePath().normalize();
    deleteTree(w);
    Path src = Files.createDirectories(w.resolve("src"));
    train(w, src, dataset(src.resolve("train")));
    deleteTree(w);
    return 0;
  }

  private static List<String> dataset(Path dir) throws IOException {
    Random rnd = new Random(26);
    List<String> files = new ArrayList<>();
    for (int i = 0; i < FILES; i++) {
      String rel = "train/c" + (i % 4) + "/img_" + i + ".jpg";
      Path p = dir.getParent().resolve(rel);
      Files.createDirectories(p.getParent());
      byte[] b = new byte[8_000 + rnd.nextInt(150_000)];
      rnd.nextBytes(b);
      Files.write(p, b);
      files.add(rel);
    }
    return files;
  }

  /**
   * A daemon that reads every file of {@code src} as a miss, hinted; then, as a job started later
   * on the same cache does, a new daemon reading them as hits from LMDB (the kernel's pages and the
   * RAM tier went with the first daemon, so every READ reaches the disk tier), its stats and {@code
   * status} read.
   */
  private static void train(Path w, Path src, List<String> files) throws Exception {
    Path mnt = Files.createDirectories(w.resolve("mnt"));
    mounted(
        w,
        mnt,
        src,
        () -> {
          Path control = mnt.resolve(".hintfs/control");
          hint(control, "dataset train\nseed 7 epoch 0 world 1 rank 0\n");
          read(mnt, files, 1); // misses
          StringBuilder losses = new StringBuilder("loss");
          for (int i = 0; i < 64; i++) {
            losses.append(" #").append(i).append('=').append(i % 7 * 0.25);
          }
          hint(control, losses + "\nepoch 1\n");
        });
    mounted(
        w,
        mnt,
        src,
        () -> {
          hint(mnt.resolve(".hintfs/control"), "dataset train\nseed 7 epoch 1 world 1 rank 0\n");
          read(mnt, files, 2); // hits, from LMDB
          Files.readAllBytes(mnt.resolve(".hintfs/stats"));
          PrintStream out = System.out;
          System.setOut(new PrintStream(OutputStream.nullOutputStream()));
          try {
            Main.run("status", mnt.toString());
          } finally {
            System.setOut(out);
          }
        });
  }

  /** What runs while a training mount is up. */
  @FunctionalInterface
  private interface Work {
    void run() throws Exception;
  }

  /** Mounts {@code src} at {@code mnt} in this JVM, runs {@code work}, unmounts. */
  private static void mounted(Path w, Path mnt, Path src, Work work) throws Exception {
    String[] args = {
      "mount",
      "--foreground",
      src.toString(),
      mnt.toString(),
      "--cache-dir",
      w.resolve("cache").toString()
    };
    AtomicInteger status = new AtomicInteger(-1);
    Thread serving = new Thread(() -> status.set(Main.run(args)), "aot-train");
    serving.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (Mounts.typeAt(mnt).isEmpty()) {
      if (!serving.isAlive() || System.nanoTime() > deadline) {
        throw new UserError("aot-train: the mount did not come up");
      }
      Thread.sleep(20);
    }
    try {
      work.run();
    } finally {
      UnmountCommand.detach(mnt, false);
      serving.join(TimeUnit.SECONDS.toMillis(60));
    }
    if (status.get() != 0) {
      throw new UserError("aot-train: the mount ended with status " + status.get());
    }
  }

  private static void hint(Path control, String lines) throws IOException {
    try (FileChannel ch = FileChannel.open(control, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(lines.getBytes(StandardCharsets.UTF_8)));
    }
  }

  /** Every file once, by 4 readers, in a shuffled order. */
  private static void read(Path mnt, List<String> files, long seed) throws Exception {
    List<String> order = new ArrayList<>(files);
    Collections.shuffle(order, new Random(seed));
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        done.add(
            pool.submit(
                () -> {
                  ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
                  for (int i; (i = next.getAndIncrement()) < order.size(); ) {
                    try (FileChannel ch = FileChannel.open(mnt.resolve(order.get(i)))) {
                      buf.clear();
                      while (ch.read(buf) > 0) {
                        if (!buf.hasRemaining()) {
                          buf.clear();
                        }
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> d : done) {
        d.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** Removes {@code dir} and everything under it, if it exists. */
  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
