package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk tier on its own: a real LMDB environment in a temporary directory. */
class LmdbStoreTest {
  private static final long MAP = 64L << 20;

  @TempDir Path dir;

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static LmdbStore open(Path dir) throws Exception {
    return new LmdbStore(dir, MAP, bytes -> {});
  }

  private static List<LmdbStore.Meta> metas(LmdbStore s) {
    List<LmdbStore.Meta> out = new ArrayList<>();
    s.scanMeta(out::add);
    return out;
  }

  @Test
  void aStalledWriter_holdsAtMostTheQueueLimit_refusesPastIt_andTakesPutsAgainOnceItCommits()
      throws Exception {
    byte[] a = random(60_000, 2);
    byte[] b = random(60_000, 3);
    CacheKey ka = CacheKey.of("cls/a.jpg", 0);
    CacheKey kb = CacheKey.of("cls/b.jpg", 0);
    long vh = CacheKey.versionHash("etag");
    try (LmdbStore s = new LmdbStore(dir, MAP, bytes -> {}, 100_000)) {
      try (var stalled = s.holdWriteLock()) {
        assertThat(s.put(ka, vh, a, 0, "cls/a.jpg")).isTrue();
        // 60,000 + 60,000 > 100,000: the second waits for nothing, it is refused.
        assertThat(s.hasRoom(b.length)).isFalse();
        assertThat(s.put(kb, vh, b, 0, "cls/b.jpg")).isFalse();
        assertThat(s.queuedBytes()).isEqualTo(60_000);
        assertThat(s.get(ka, vh, a.length).payload()).isEqualTo(a); // served while queued
        assertThat(s.get(kb, vh, b.length).hit()).isFalse();
      }
      s.flush();
      assertThat(s.queuedBytes()).isZero();
      assertThat(s.put(kb, vh, b, 0, "cls/b.jpg")).isTrue();
      s.flush();
      assertThat(s.get(ka, vh, a.length).payload()).isEqualTo(a);
      assertThat(s.get(kb, vh, b.length).payload()).isEqualTo(b);
    }
  }

  @Test
  void largeQueuedPayloadsWaitOutsideTheHeap_freedOnceWritten_orWhenTheStoreGoesDown()
      throws Exception {
    byte[] a = random(LmdbStore.OFF_HEAP_MIN + 300_000, 5);
    byte[] b = random(LmdbStore.OFF_HEAP_MIN, 6);
    byte[] small = random(LmdbStore.OFF_HEAP_MIN - 1, 7);
    byte[] was = a.clone();
    CacheKey ka = CacheKey.of("s/a.tar", 1);
    CacheKey kb = CacheKey.of("s/b.tar", 1);
    long vh = CacheKey.versionHash("etag");
    try (LmdbStore s = new LmdbStore(dir, MAP, bytes -> {}, 16L << 20)) {
      try (var stalled = s.holdWriteLock()) {
        assertThat(s.put(ka, vh, a, 1, "s/a.tar")).isTrue();
        assertThat(s.put(kb, vh, b, 1, "s/b.tar")).isTrue();
        assertThat(s.queuedNativeBytes()).isEqualTo(a.length + b.length);
        assertThat(s.put(CacheKey.of("s/small", 0), vh, small, 0, "s/small")).isTrue();
        assertThat(s.queuedNativeBytes()).isEqualTo(a.length + b.length); // on the heap
        a[7] ^= 1; // the caller's array is its own again: the queue holds a copy
        assertThat(s.get(ka, vh, was.length).payload()).isEqualTo(was);
      }
      s.flush();
      assertThat(s.queuedNativeBytes()).isZero();
      assertThat(s.get(ka, vh, was.length).payload()).isEqualTo(was);
      assertThat(s.get(kb, vh, b.length).payload()).isEqualTo(b);
      assertThat(s.get(CacheKey.of("s/small", 0), vh, small.length).payload()).isEqualTo(small);
      // A payload made and not taken (refused: no room) is freed by its maker.
      try (LmdbStore tight = new LmdbStore(dir.resolve("tight"), MAP, bytes -> {}, 1)) {
        try (var stalled = tight.holdWriteLock()) {
          assertThat(tight.put(CacheKey.of("s/x", 1), vh, b, 1, "s/x")).isTrue();
          assertThat(tight.put(CacheKey.of("s/y", 1), vh, b, 1, "s/y")).isFalse();
          assertThat(tight.queuedNativeBytes()).isEqualTo(b.length);
        }
      }
      try (var stalled = s.holdWriteLock()) {
        assertThat(s.put(CacheKey.of("s/c.tar", 1), vh, b, 1, "s/c.tar")).isTrue();
        assertThat(s.put(CacheKey.of("s/d.tar", 1), vh, b, 1, "s/d.tar")).isTrue();
        assertThat(s.queuedNativeBytes()).isEqualTo(2L * b.length);
        s.down("test: the disk failed");
      }
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (s.queuedNativeBytes() != 0) {
        assertThat(System.nanoTime()).as("queued payloads freed").isLessThan(deadline);
        Thread.sleep(10);
      }
    }
  }

  @Test
  void nativePayloads_checkedAsTheWriterCopiesThem_butARamCopyThatIsNotTheArrayIsStoredDamaged()
      throws Exception {
    // A block fetched into native memory: the writer takes its CRC32C as it copies it, in pieces
    // (a length that is no multiple of them).
    byte[] fetched = random(LmdbStore.OFF_HEAP_MIN + StoredValue.CHECK_PIECE / 3, 8);
    NativeBytes inRam = NativeBytes.copyOf(fetched, new java.util.concurrent.atomic.AtomicLong());
    // A block fetched as an array whose RAM copy, looked up to share, holds other bytes (another
    // version's, put meanwhile): its CRC32C is the array's, so the entry is never served.
    byte[] array = random(LmdbStore.OFF_HEAP_MIN, 9);
    NativeBytes notIt =
        NativeBytes.copyOf(random(array.length, 10), new java.util.concurrent.atomic.AtomicLong());
    CacheKey kf = CacheKey.of("s/fetched.tar", 1);
    CacheKey ka = CacheKey.of("s/array.tar", 1);
    long vh = CacheKey.versionHash("etag");
    try (LmdbStore s = new LmdbStore(dir, MAP, bytes -> {}, 16L << 20)) {
      LmdbStore.Payload pf = s.payload(inRam);
      LmdbStore.Payload pa = s.payload(array, notIt);
      assertThat(s.put(kf, vh, pf, 1, "s/fetched.tar")).isTrue();
      assertThat(s.put(ka, vh, pa, 1, "s/array.tar")).isTrue();
      inRam.release();
      notIt.release();
      s.flush();
      assertThat(s.get(kf, vh, fetched.length).payload()).isEqualTo(fetched);
      assertThat(s.get(ka, vh, array.length).check()).isEqualTo(StoredValue.Check.CORRUPT);
    }
  }

  @Test
  void aPutIsServedAtOnce_andAfterCommit_andAfterReopen() throws Exception {
    byte[] payload = random(10_000, 1);
    CacheKey key = CacheKey.of("cls/a.jpg", 0);
    long vh = CacheKey.versionHash("etag:10000");
    try (LmdbStore s = open(dir)) {
      s.put(key, vh, payload, 0, "cls/a.jpg");
      assertThat(s.get(key, vh, payload.length).payload()).isEqualTo(payload); // queued
      s.flush();
      assertThat(s.get(key, vh, payload.length).payload()).isEqualTo(payload); // committed
    }
    try (LmdbStore s = open(dir)) {
      LmdbStore.Lookup l = s.get(key, vh, payload.length);
      assertThat(l.hit()).isTrue();
      assertThat(l.payload()).isEqualTo(payload);
      assertThat(metas(s))
          .singleElement()
          .satisfies(
              m -> {
                assertThat(m.path()).isEqualTo("cls/a.jpg");
                assertThat(m.block()).isZero();
                assertThat(m.versionHash()).isEqualTo(vh);
                assertThat(m.charge()).isEqualTo(StoredValue.charge(payload.length));
              });
    }
  }

  @Test
  void largeValuesRewrittenBatchAfterBatch_withGlibcKeepingTheWritersBuffers_readBackAsLastWritten()
      throws Exception {
    // Opening a store has glibc keep the writer's large buffers (Native.keepLargeAllocations): a
    // buffer reused for the next commit still holds the last value's bytes, which must never show.
    int n = 8;
    int len = 4 << 20;
    long vh = CacheKey.versionHash("etag:big");
    try (LmdbStore s = new LmdbStore(dir, 256L << 20, bytes -> {})) {
      assertThat(Native.keepLargeAllocations()).isTrue(); // glibc (the build's and CI's libc)
      for (int round = 0; round < 3; round++) {
        byte[][] written = new byte[n][];
        for (int b = 0; b < n; b++) {
          written[b] = random(len, round * 100L + b);
          s.put(CacheKey.of("big.bin", b), vh, written[b], b, "big.bin");
        }
        s.flush();
        for (int b = 0; b < n; b++) {
          assertThat(s.get(CacheKey.of("big.bin", b), vh, len).payload())
              .as("block %d after round %d", b, round)
              .isEqualTo(written[b]);
        }
      }
    }
  }

  @Test
  void anotherVersionOrLengthIsStale_notServed() throws Exception {
    byte[] payload = random(3_000, 2);
    CacheKey key = CacheKey.of("cls/b.jpg", 0);
    long vh = CacheKey.versionHash("v1:3000");
    try (LmdbStore s = open(dir)) {
      s.put(key, vh, payload, 0, "cls/b.jpg");
      // Both answers hold for a queued put and for a committed one.
      for (int pass = 0; pass < 2; pass++) {
        LmdbStore.Lookup other = s.get(key, CacheKey.versionHash("v2:3000"), payload.length);
        assertThat(other.hit()).isFalse();
        assertThat(other.check()).isEqualTo(StoredValue.Check.STALE);
        assertThat(other.payload()).isNull();
        assertThat(s.get(key, vh, payload.length + 1).hit()).isFalse();
        s.flush();
      }
      assertThat(s.get(CacheKey.of("cls/none.jpg", 0), vh, 1).check()).isNull(); // a plain miss
    }
  }

  @Test
  void aDeleteHidesAtOnce_andIsGoneAfterReopen() throws Exception {
    CacheKey key = CacheKey.of("c/x", 3);
    long vh = CacheKey.versionHash("e:9");
    try (LmdbStore s = open(dir)) {
      s.put(key, vh, random(9, 3), 3, "c/x");
      s.flush();
      s.delete(key);
      assertThat(s.get(key, vh, 9).hit()).isFalse();
    }
    try (LmdbStore s = open(dir)) {
      assertThat(s.get(key, vh, 9).hit()).isFalse();
      assertThat(metas(s)).isEmpty();
    }
  }

  @Test
  void aPayloadDamagedOnDisk_isCorrupt_neverServed() throws Exception {
    byte[] payload = random(20_000, 4);
    CacheKey key = CacheKey.of("cls/c.jpg", 0);
    long vh = CacheKey.versionHash("e:20000");
    // Flip one bit in the middle of the payload, where LMDB stored it in data.mdb.
    storeAndFlip(key, vh, payload, 0, "cls/c.jpg", 10_000, 0x10);
    try (LmdbStore s = open(dir)) {
      LmdbStore.Lookup l = s.get(key, vh, payload.length);
      assertThat(l.hit()).isFalse();
      assertThat(l.check()).isEqualTo(StoredValue.Check.CORRUPT);
      assertThat(s.healthy()).isTrue(); // one bad entry is the entry's problem, not the store's
    }
  }

  /** What a copy out of the map handed over, read back into the heap. */
  private static final class Collect implements NativeSink {
    byte[] got;

    @Override
    public void put(long address, int len) {
      got = new byte[len];
      NativeSink.copy(address, got, 0, len);
    }
  }

  @Test
  void aCopyOutOfTheMap_servesTheCheckedSlice_andNothingOfAStaleOrDamagedEntry() throws Exception {
    byte[] payload = random(150_000, 5); // overflow pages, as a sample's value
    CacheKey key = CacheKey.of("cls/d.jpg", 0);
    long vh = CacheKey.versionHash("e:150000");
    try (LmdbStore s = open(dir)) {
      s.put(key, vh, payload, 0, "cls/d.jpg");
      Collect c = new Collect();
      assertThat(s.copyOut(key, vh, payload.length, 0, 10, c)).isNull(); // queued: on the heap
      assertThat(c.got).isNull();
      s.flush();
      assertThat(s.copyOut(key, vh, payload.length, 131_072, 18_928, c))
          .isEqualTo(StoredValue.Check.OK);
      assertThat(c.got).isEqualTo(java.util.Arrays.copyOfRange(payload, 131_072, 150_000));
      c.got = null;
      assertThat(s.copyOut(key, CacheKey.versionHash("e:other"), payload.length, 0, 10, c))
          .isEqualTo(StoredValue.Check.STALE);
      assertThat(s.copyOut(key, vh, payload.length - 1, 0, 10, c))
          .isEqualTo(StoredValue.Check.STALE);
      assertThat(s.copyOut(CacheKey.of("cls/none.jpg", 0), vh, 10, 0, 10, c)).isNull();
      assertThat(c.got).isNull();
    }
    // One bit flipped in the last payload page: the whole payload is checked, not the slice.
    flipBit(dir, payload, 149_000, 0x01);
    try (LmdbStore s = open(dir)) {
      Collect c = new Collect();
      assertThat(s.copyOut(key, vh, payload.length, 0, 4096, c))
          .isEqualTo(StoredValue.Check.CORRUPT);
      assertThat(c.got).isNull();
      assertThat(s.healthy()).isTrue();
      s.willNeed(key); // advice only: no effect on what is served
      assertThat(s.get(key, vh, payload.length).check()).isEqualTo(StoredValue.Check.CORRUPT);
    }
  }

  /**
   * A block served from the map for one handle ({@link MappedBlock}) has its payload's CRC32C
   * computed once: its first copy out finds a damaged payload and serves nothing; once a copy is
   * checked, later slices of it are served without the sum (its header is still checked: another
   * version is stale), and a new handle checks the value again.
   */
  @Test
  void aMappedBlock_checksItsStoredCopyOnce_andANewOneChecksAgain() throws Exception {
    byte[] payload = random(300_000, 6);
    CacheKey key = CacheKey.of("shard-0.tar", 1);
    long vh = CacheKey.versionHash("e:big");
    storeAndFlip(key, vh, payload, 1, "shard-0.tar", 250_000, 0x04);
    try (LmdbStore s = open(dir)) {
      Collect c = new Collect();
      MappedBlock damaged = mapped(key, vh, payload.length);
      assertThat(s.copyOut(key, vh, payload.length, 0, 4096, c, damaged))
          .isEqualTo(StoredValue.Check.CORRUPT);
      assertThat(c.got).isNull();
      // Still not checked: the next slice computes the sum again and serves nothing either.
      assertThat(s.copyOut(key, vh, payload.length, 4096, 4096, c, damaged))
          .isEqualTo(StoredValue.Check.CORRUPT);
      assertThat(c.got).isNull();
    }
    flipBit(dir, payload, 250_000, 0x04); // mended
    try (LmdbStore s = open(dir)) {
      Collect c = new Collect();
      MappedBlock m = mapped(key, vh, payload.length);
      assertThat(s.copyOut(key, vh, payload.length, 0, 4096, c, m)).isEqualTo(StoredValue.Check.OK);
      assertThat(c.got).isEqualTo(java.util.Arrays.copyOf(payload, 4096));
      // Damaged under the running store (the map shares the file's pages): the checked copy's
      // later slices are served without the sum, as the kernel's READs of one handle are.
      flipBit(dir, payload, 250_000, 0x04);
      assertThat(s.copyOut(key, vh, payload.length, 200_000, 100_000, c, m))
          .isEqualTo(StoredValue.Check.OK);
      assertThat(s.copyOut(key, CacheKey.versionHash("e:other"), payload.length, 0, 1, c, m))
          .isEqualTo(StoredValue.Check.STALE);
      MappedBlock another = mapped(key, vh, payload.length);
      c.got = null;
      assertThat(s.copyOut(key, vh, payload.length, 0, 4096, c, another))
          .isEqualTo(StoredValue.Check.CORRUPT);
      assertThat(c.got).isNull();
    }
  }

  @Test
  void aFullMapAsksForRoom_andPausesAdmissionIfNoneIsMade_servingWhatItHolds() throws Exception {
    AtomicLong asked = new AtomicLong();
    CacheKey first = CacheKey.of("first", 0);
    long vh = CacheKey.versionHash("e");
    List<String> notStored = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean room =
        new java.util.concurrent.atomic.AtomicBoolean();
    try (LmdbStore s = new LmdbStore(dir, 1L << 20, asked::addAndGet)) {
      s.account(
          new LmdbStore.Accounting() {
            @Override
            public void notStored(String path, int block, CacheKey key, int length) {
              notStored.add(path);
            }

            @Override
            public boolean space(long usable, long total, long fileBytes) {
              return room.get();
            }
          });
      assertThat(s.put(first, vh, random(64_000, 99), 0, "first")).isTrue();
      s.flush();
      boolean[] taken = new boolean[64];
      for (int i = 0; i < 64; i++) {
        taken[i] = s.put(CacheKey.of("f/" + i, 0), vh, random(64_000, i), 0, "f/" + i);
      }
      s.flush();
      assertThat(asked.get()).isPositive(); // the cache was asked to evict
      // It evicted nothing: admission pauses, the store stays up and serves what it holds.
      assertThat(s.healthy()).isTrue();
      assertThat(s.admitting()).isFalse();
      assertThat(s.health()).startsWith("full since ").contains("map is full");
      assertThat(s.get(first, vh, 64_000).hit()).isTrue();
      // Each put taken is stored (those committed before the map filled) or told to the
      // accounting as not stored, and then not served; a put refused (paused already) is neither.
      assertThat(notStored).isNotEmpty();
      for (int i = 0; i < 64; i++) {
        boolean hit = s.get(CacheKey.of("f/" + i, 0), vh, 64_000).hit();
        assertThat(hit && notStored.contains("f/" + i)).as("f/" + i).isFalse();
        assertThat(hit || notStored.contains("f/" + i)).as("f/" + i).isEqualTo(taken[i]);
      }
      assertThat(s.put(CacheKey.of("late", 0), vh, random(1000, 7), 0, "late")).isFalse();
      // Room again (the accounting says so at the writer's next look): admission resumes.
      room.set(true);
      long deadline = System.nanoTime() + 3 * LmdbStore.WATCH_MILLIS * 1_000_000;
      while (!s.admitting() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(s.health()).isEqualTo("ok");
      assertThat(s.put(CacheKey.of("late", 0), vh, random(1000, 7), 0, "late")).isTrue();
      s.flush();
      assertThat(s.get(CacheKey.of("late", 0), vh, 1000).hit()).isTrue();
    }
  }

  @Test
  void awaitRoom_waitsForTheWritersCommit_notForATimer() throws Exception {
    long vh = CacheKey.versionHash("e");
    try (LmdbStore s = new LmdbStore(dir, 1L << 30, b -> {}, 1 << 20)) {
      var stalled = s.holdWriteLock(); // the writer blocks in its commit, as on a stalled disk
      // 3 puts of 300 kB: 900 kB queued, over half the 1 MiB bound.
      for (int i = 0; i < 3; i++) {
        assertThat(s.put(CacheKey.of("f/" + i, 0), vh, random(300_000, i), 0, "f/" + i)).isTrue();
      }
      assertThat(s.awaitRoom(100)).isFalse();
      java.util.concurrent.CompletableFuture<Double> waited =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                long t0 = System.nanoTime();
                try {
                  return s.awaitRoom(10_000) ? (System.nanoTime() - t0) / 1e9 : -1.0;
                } catch (InterruptedException e) {
                  return -2.0;
                }
              });
      Thread.sleep(200);
      stalled.close(); // on the thread that took LMDB's write lock
      // Woken by the commit (200 ms and a commit), not at the end of the 10 s.
      assertThat(waited.get()).isBetween(0.0, 5.0);
      assertThat(s.queuedBytes()).isLessThanOrEqualTo(512 * 1024);
    }
  }

  /** Stores 40 entries of 64 kB (f/0..f/39) and closes the store. */
  private void storeForty(long vh) throws Exception {
    try (LmdbStore s = open(dir)) {
      for (int i = 0; i < 40; i++) {
        s.put(CacheKey.of("f/" + i, 0), vh, random(64_000, i), 0, "f/" + i);
      }
      s.flush();
    }
  }

  /** The one file moved aside beside the new cache, which must be {@code length} bytes long. */
  private Path movedAside(long length) throws Exception {
    try (var files = Files.list(dir)) {
      List<Path> aside =
          files.filter(f -> f.getFileName().toString().startsWith("data.mdb.damaged-")).toList();
      assertThat(aside).hasSize(1);
      assertThat(Files.size(aside.get(0))).isEqualTo(length);
      return aside.get(0);
    }
  }

  /** A fresh store over the damaged one's place: it stores and serves. */
  private static void storesAfresh(LmdbStore s, long vh) throws Exception {
    assertThat(s.get(CacheKey.of("f/1", 0), vh, 64_000).hit()).isFalse();
    assertThat(s.put(CacheKey.of("g", 0), vh, random(5_000, 3), 0, "g")).isTrue();
    s.flush();
    assertThat(s.get(CacheKey.of("g", 0), vh, 5_000).payload()).isEqualTo(random(5_000, 3));
  }

  @Test
  void aTruncatedDataFile_isMovedAside_andAFreshCacheStarts() throws Exception {
    long vh = CacheKey.versionHash("e");
    storeForty(vh);
    Path db = dir.resolve("data.mdb");
    long half = Files.size(db) / 2;
    try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
      f.setLength(half);
    }
    // Without the check, the first read of a page past the end of the file is a SIGBUS.
    try (LmdbStore s = open(dir)) {
      assertThat(s.health())
          .startsWith("ok; at mount the cache in " + dir + " was damaged (truncated: ")
          .contains("moved aside to " + dir.resolve("data.mdb.damaged-"));
      movedAside(half);
      storesAfresh(s, vh);
    }
  }

  @Test
  void aDataFileWithRandomBytesOverItsHead_isMovedAside_andAFreshCacheStarts() throws Exception {
    long vh = CacheKey.versionHash("e");
    storeForty(vh);
    Path db = dir.resolve("data.mdb");
    long size = Files.size(db);
    try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
      f.write(random(16_384, 11)); // both meta pages and the first tree pages
    }
    try (LmdbStore s = open(dir)) {
      assertThat(s.health()).startsWith("ok; at mount the cache in " + dir + " was damaged (");
      movedAside(size);
      storesAfresh(s, vh);
    }
  }

  /**
   * Flips {@code mask}'s bits of the byte {@code at} into {@code payload}, where data.mdb holds it.
   */
  /**
   * Stores {@code payload} and closes the store, then flips bits {@code mask} of byte {@code at}.
   */
  private void storeAndFlip(
      CacheKey key, long vh, byte[] payload, int block, String path, int at, int mask)
      throws Exception {
    try (LmdbStore s = open(dir)) {
      s.put(key, vh, payload, block, path);
      s.flush();
    }
    flipBit(dir, payload, at, mask);
  }

  /** mincore(2), to see which pages of a file the page cache holds. */
  public interface Mincore {
    int mincore(long addr, long length, byte[] vec);
  }

  private static final Mincore MINCORE = jnr.ffi.LibraryLoader.create(Mincore.class).load("c");

  /** How many pages of {@code file} are in the page cache, of how many (without reading it). */
  private static int[] residentPages(Path file) throws Exception {
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file)) {
      long size = ch.size();
      java.nio.MappedByteBuffer m =
          ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, size);
      int pages = (int) ((size + 4095) / 4096);
      byte[] vec = new byte[pages];
      assertThat(MINCORE.mincore(NativeSink.address(m), size, vec)).isZero();
      int in = 0;
      for (byte b : vec) {
        in += b & 1;
      }
      return new int[] {in, pages};
    }
  }

  @Test
  void aLargeFilesBlock_leavesThePageCacheOnceCommitted_andReadsBackWhole() throws Exception {
    byte[] streamed = random(4 << 20, 11);
    byte[] kept = random(4 << 20, 12);
    CacheKey ks = CacheKey.of("shards/a.tar", 1);
    CacheKey kk = CacheKey.of("shards/b.tar", 1);
    long vh = CacheKey.versionHash("etag");
    try (LmdbStore s = open(dir)) {
      LmdbStore.Payload ps = s.payload(streamed);
      assertThat(s.put(ks, vh, ps, 1, "shards/a.tar", true)).isTrue();
      ps.releaseUnlessTaken();
      assertThat(s.put(kk, vh, kept, 1, "shards/b.tar")).isTrue();
      s.flush();
      assertThat(s.uncachedBytes()).isGreaterThanOrEqualTo(streamed.length);
      int[] r = residentPages(dir.resolve("data.mdb"));
      // The kept value's 1,024 pages are still cached (what is written stays, unless dropped);
      // the uncached one's are gone, but for a few at its ends: the kernel keeps a large folio
      // that holds pages outside the range too (ext4's, on this kernel: 1,018 of 1,025 went).
      assertThat(r[0]).isGreaterThanOrEqualTo(1024).isLessThanOrEqualTo(r[1] - 900);
      assertThat(s.get(ks, vh, streamed.length).payload()).isEqualTo(streamed); // from the disk
      assertThat(s.get(kk, vh, kept.length).payload()).isEqualTo(kept);
    }
  }

  /** Block 1 of a file, as a handle reading it from the map holds it (no catalog needed). */
  private static MappedBlock mapped(CacheKey key, long versionHash, int length) {
    return new MappedBlock(new Unit(null, 0, 1, length, false, key, versionHash));
  }

  private static void flipBit(Path dir, byte[] payload, int at, int mask) throws Exception {
    Path file = dir.resolve("data.mdb");
    int start = indexOf(Files.readAllBytes(file), java.util.Arrays.copyOfRange(payload, 0, 64));
    assertThat(start).isNotNegative();
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(start + at);
      int b = f.read();
      f.seek(start + at);
      f.write(b ^ mask);
    }
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
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
