package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files in blocks read by many handles at once while both tiers evict under them: a RAM tier of
 * four blocks and a disk tier of half the data, an admin's {@code evict} now and then. Reads come
 * sequential, out of order within a handle's window, and at random offsets, on several threads per
 * handle. Every byte must be the source's, and once the handles are closed and the cache is closed,
 * no native memory a handle or the read-ahead held is left (the references of blocks served where
 * they lie: {@code MappedBlock}).
 */
class BlockReadStressTest {
  private static final int BLOCK = 65_536;
  private static final long RUN_MS = 4_000;

  /** Bytes handed over where they lie (RAM tier, map, read ahead), not through an array. */
  private static final AtomicLong NATIVE = new AtomicLong();

  @TempDir Path tmp;

  @Test
  void manyHandlesReadingBlocksWhileTheTiersEvict_getEveryByteRight_andLeakNothing()
      throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src/shards"));
    byte[][] data = new byte[6][];
    Random r = new Random(11);
    for (int i = 0; i < data.length; i++) {
      data[i] = new byte[BLOCK * (6 + i) + r.nextInt(BLOCK)];
      r.nextBytes(data[i]);
      Files.write(root.resolve("s" + i + ".tar"), data[i]);
    }
    LocalDirSource src = new LocalDirSource(tmp.resolve("src"));
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt")).toBuilder()
            .cache(tmp.resolve("cache"), "50%")
            .ramCacheBytes(4L * BLOCK)
            .units(100_000, BLOCK)
            .build();
    HintFs fs = Mount.create(src, Mount.listCatalog(src), cfg);
    Queue<String> failures = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong reads = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(7);
    ExecutorService second = Executors.newFixedThreadPool(6); // each reader's second READ
    try {
      for (int t = 0; t < 6; t++) {
        long seed = t;
        pool.execute(
            () -> {
              Random q = new Random(seed);
              while (!stop.get()) {
                int f = q.nextInt(data.length);
                try {
                  readOnce(fs, "/shards/s" + f + ".tar", data[f], q, second, reads);
                } catch (Throwable e) {
                  failures.add("s" + f + ": " + e);
                  return;
                }
              }
            });
      }
      pool.execute(
          () -> {
            Random q = new Random(99);
            while (!stop.get()) {
              try {
                fs.cache().evictFile(fs.resolve("/shards/s" + q.nextInt(data.length) + ".tar"));
                Thread.sleep(50);
              } catch (Exception e) {
                failures.add("evict: " + e);
                return;
              }
            }
          });
      Thread.sleep(RUN_MS);
    } finally {
      stop.set(true);
      pool.shutdown();
      assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      second.shutdown();
    }
    assertThat(failures).isEmpty();
    assertThat(reads.get()).isGreaterThan(100);
    assertThat(NATIVE.get()).as("bytes served where they lie").isPositive();
    assertThat(fs.cache().stats().ramHits.sum()).isPositive();
    assertThat(fs.cache().stats().diskHits.sum()).isPositive();
    assertThat(fs.readAheadUsed()).isPositive();
    assertThat(fs.readAheadDropped()).isPositive();
    assertThat(fs.openHandles()).isZero();
    fs.close();
    fs.cache().close();
    assertThat(fs.cache().ramNativeBytes()).as("native memory left").isZero();
  }

  /**
   * One handle's reads of a file: sequential in READs of 128 KiB sent two at a time from two
   * threads (the kernel's READs a little out of order), or 20 READs at random offsets.
   */
  private static void readOnce(
      HintFs fs, String path, byte[] want, Random q, ExecutorService pool, AtomicLong reads)
      throws Exception {
    long fh = fs.open(path, false);
    try {
      if (q.nextBoolean()) {
        int chunk = 131_072;
        for (long off = 0; off < want.length; off += 2L * chunk) {
          long second = off + chunk;
          var other = pool.submit(() -> check(fs, fh, second, chunk, want));
          check(fs, fh, off, chunk, want);
          other.get(30, TimeUnit.SECONDS);
          reads.addAndGet(2);
        }
      } else {
        for (int i = 0; i < 20; i++) {
          int len = 1 + q.nextInt(200_000);
          check(fs, fh, q.nextInt(want.length), len, want);
          reads.incrementAndGet();
        }
      }
    } finally {
      fs.release(fh);
    }
  }

  private static Void check(HintFs fs, long fh, long off, int len, byte[] want) throws Exception {
    byte[] got = new byte[len];
    int[] at = {0};
    HintFs.ByteSink sink =
        new HintFs.ByteSink() {
          @Override
          public void put(byte[] b, int o, int l) {
            System.arraycopy(b, o, got, at[0], l);
            at[0] += l;
          }

          @Override
          public void putNative(long address, int l) {
            NATIVE.addAndGet(l);
            org.hintfs.fs.store.NativeSink.copy(address, got, at[0], l);
            at[0] += l;
          }
        };
    int n = fs.read(fh, off, len, sink);
    int expect = (int) Math.max(0, Math.min(len, want.length - off));
    if (n != expect || at[0] != n) {
      throw new AssertionError(
          "read " + off + "+" + len + ": " + n + " bytes, " + at[0] + " given");
    }
    if (n > 0 && !Arrays.equals(got, 0, n, want, (int) off, (int) off + n)) {
      throw new AssertionError("bytes differ at " + off + "+" + n);
    }
    return null;
  }
}
