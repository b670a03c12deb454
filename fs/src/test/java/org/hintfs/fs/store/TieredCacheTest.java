package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.hintfs.backing.FaultInjectingSource;
import org.hintfs.backing.InMemorySource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.hintfs.policy.LruPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cache with a real LMDB environment on disk and an in-memory source. */
class TieredCacheTest {
  @TempDir Path tmp;

  static final int LIMIT = 50_000; // whole-object limit
  static final int BLOCK = 16_384;

  static InMemorySource dataset(long seed, int files, int maxSize) {
    Random rnd = new Random(seed);
    InMemorySource src = new InMemorySource("mem:test");
    for (int i = 0; i < files; i++) {
      byte[] b = new byte[rnd.nextInt(maxSize)];
      rnd.nextBytes(b);
      src.put("c" + (i % 3) + "/f" + i, b);
    }
    return src;
  }

  static TieredCache open(
      org.hintfs.backing.DatasetSource src, Catalog cat, Path dir, long capacity) {
    return open(src, cat, dir, new TieredCache.Config(capacity, "test", 1 << 20, LIMIT, BLOCK, 16));
  }

  /** An LRU cache over {@code src} with these sizes, its disk tier in {@code dir}. */
  static TieredCache open(
      org.hintfs.backing.DatasetSource src, Catalog cat, Path dir, TieredCache.Config config) {
    return TieredCache.open(src, cat, new LruPolicy(cat.entryCount()), dir, config);
  }

  @Test
  void aDiskBehindTheSource_servesEveryByte_storesOnlyWhatTheWriteQueueHolds() throws Exception {
    InMemorySource src = dataset(21, 60, 40_000);
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    // No RAM tier: what is not stored is not kept anywhere. 100 KB of queue: the files (0-40 KB)
    // that fit wait for the stalled writer, the rest are served without being stored.
    try (TieredCache c = openWithoutRam(src, cat, tmp.resolve("slow"), 100_000)) {
      try (var stalled = c.store().holdWriteLock()) {
        for (int id : ids) {
          assertThat(c.read(id, 0))
              .isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
          assertThat(c.writeQueuedBytes()).isLessThanOrEqualTo(100_000);
        }
        long skipped = c.stats().writeQueueFull.sum();
        long storedBytes = 0;
        for (int id : ids) {
          storedBytes += c.isCached(id) ? cat.size(id) : 0;
        }
        // The 60 files hold ~1.2 MB: what waits for the writer is at most the queue's 100 KB.
        assertThat(storedBytes).isPositive().isLessThanOrEqualTo(100_000);
        assertThat(skipped).isGreaterThan(ids.size() / 2);
        // What the index holds is what the store holds: nothing it refused counts as cached.
        assertThat(c.index().cachedFiles()).isEqualTo(ids.size() - skipped);
      }
      c.flush();
      assertThat(c.writeQueuedBytes()).isZero();
      long misses = c.misses();
      long refused = c.stats().writeQueueFull.sum();
      for (int id : ids) {
        assertThat(c.read(id, 0))
            .isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
        c.flush(); // a disk that keeps up
      }
      // Each file refused before is fetched once more, and stored this time.
      assertThat(c.misses() - misses).isEqualTo(refused);
      assertThat(c.stats().writeQueueFull.sum()).isEqualTo(refused);
      assertThat(c.index().cachedFiles()).isEqualTo(ids.size());
    }
  }

  /**
   * 8 readers of 8 shards outran the disk writer: the blocks it refused were held only by the RAM
   * tier, which let go of them before the read again, and they were fetched a second time. Now each
   * refused block is held (up to the write queue's size again) and offered again once the writer
   * has room: a daemon started later on the same cache reads the whole file from disk.
   */
  @Test
  void anIndexRecordWhoseEntryIsMissing_isDroppedAtItsFirstRead_andTheFileStoredAgain()
      throws Exception {
    InMemorySource src = dataset(5, 10, 40_000);
    Catalog cat = Mount.listCatalog(src);
    int id = files(cat).get(3);
    Path dir = tmp.resolve("mismatch");
    try (TieredCache c = openWithoutRam(src, cat, dir, 1 << 20)) {
      for (int f : files(cat)) {
        c.read(f, 0);
      }
      c.flush();
    }
    // Its data entry deleted, its meta record kept: an index that does not match its data.
    try (org.lmdbjava.Env<java.nio.ByteBuffer> env =
        org.lmdbjava.Env.create().setMapSize(1L << 30).setMaxDbs(2).open(dir.toFile())) {
      var data = env.openDbi("data");
      java.nio.ByteBuffer k = java.nio.ByteBuffer.allocateDirect(CacheKey.LENGTH);
      try (var txn = env.txnWrite()) {
        assertThat(data.delete(txn, CacheKey.of(cat.path(id), 0).into(k))).isTrue();
        txn.commit();
      }
    }
    byte[] want = src.readRange(cat.path(id), null, 0, (int) cat.size(id));
    try (TieredCache c = openWithoutRam(src, cat, dir, 1 << 20)) {
      assertThat(c.read(id, 0)).isEqualTo(want); // from the source: 1 miss
      c.flush();
      assertThat(c.read(id, 0)).isEqualTo(want); // stored again: from the disk
      assertThat(c.misses()).isEqualTo(1);
    }
  }

  @Test
  void blocksRefusedForAFullWriteQueue_areStoredWhenTheWriterHasRoom() throws Exception {
    LargeFile f = new LargeFile("shards/shard-0.tar", 36 * BLOCK + 1234, 31);
    // The writer's queue holds 20 blocks; the other 17 units are refused while it is held.
    TieredCache.Config cfg =
        new TieredCache.Config(1 << 30, "test", 1 << 20, LIMIT, BLOCK, 16, 20 * BLOCK);
    try (TieredCache c = open(f.src, f.cat, tmp.resolve("owed"), cfg)) {
      assertThat(c.isBlocked(f.id)).isTrue();
      try (var stalled = c.store().holdWriteLock()) {
        assertThat(readFile(c, f.cat, f.id)).isEqualTo(f.bytes);
        assertThat(c.stats().writeQueueFull.sum()).isEqualTo(17);
        assertThat(c.owedBlocks()).isEqualTo(17);
        assertThat(c.owedBytes()).isEqualTo(16L * BLOCK + 1234);
        assertThat(c.isFullyCached(f.id)).isFalse();
      }
      awaitRepaid(c);
      assertThat(c.stats().writeQueueRepaid.sum()).isEqualTo(17);
      assertThat(c.owedBytes()).isZero();
      assertThat(c.isFullyCached(f.id)).isTrue();
      assertThat(c.misses()).isEqualTo(37);
    }
    try (TieredCache again = open(f.src, f.cat, tmp.resolve("owed"), cfg)) {
      assertThat(readFile(again, f.cat, f.id)).isEqualTo(f.bytes);
      assertThat(again.misses()).isZero();
    }
  }

  /**
   * A block's key is its file and index, not its offset: a disk cache cut in one block size and
   * mounted with another would serve other bytes of the file under the same key. Its blocks are
   * dropped at the mount (their length or their salted key says they are of another size), its
   * whole files stay, and every byte read comes from where it belongs.
   */
  @Test
  void aDiskCacheCutInAnotherBlockSize_dropsItsBlocks_keepsItsWholeFiles() throws Exception {
    LargeFile f = new LargeFile("shards/shard-3.tar", 10 * BLOCK + 1234, 34);
    byte[] small = new byte[4000];
    new Random(35).nextBytes(small);
    f.src.put("small.bin", small);
    Catalog cat = Mount.listCatalog(f.src);
    int big = cat.lookup("shards/shard-3.tar");
    int whole = cat.lookup("small.bin");
    Path dir = tmp.resolve("resized");
    java.util.function.IntFunction<TieredCache.Config> sized =
        bs -> new TieredCache.Config(1 << 30, "test", 1 << 20, LIMIT, bs, 16);
    try (TieredCache c = open(f.src, cat, dir, sized.apply(BLOCK))) {
      assertThat(readFile(c, cat, big)).isEqualTo(f.bytes);
      assertThat(c.read(whole, 0)).isEqualTo(small);
      c.flush();
      assertThat(c.isFullyCached(big)).isTrue();
    }
    // Twice the size: block 1 is now bytes 2-4 x BLOCK, which the old block 2 held.
    try (TieredCache c = open(f.src, cat, dir, sized.apply(2 * BLOCK))) {
      assertThat(c.isCached(whole)).isTrue();
      for (int b = 0; b < 6; b++) {
        assertThat(c.index().isStored(big, b)).as("block %d", b).isFalse();
      }
      assertThat(readFile(c, cat, big, 2 * BLOCK)).isEqualTo(f.bytes);
      assertThat(c.read(whole, 0)).isEqualTo(small);
      assertThat(c.misses()).as("the 6 blocks of the new size, not the whole file").isEqualTo(6);
      c.flush();
    }
    // The same size again: nothing dropped, nothing fetched; the old size's entries are gone.
    try (TieredCache c = open(f.src, cat, dir, sized.apply(2 * BLOCK))) {
      assertThat(readFile(c, cat, big, 2 * BLOCK)).isEqualTo(f.bytes);
      assertThat(c.misses()).isZero();
      assertThat(c.index().cachedFiles()).isEqualTo(2);
    }
  }

  /**
   * A file of 12 MiB in 8 MiB blocks: block 1 is its last 4 MiB. In 4 MiB blocks (the size before
   * --block-size, and of every build before it) block 1 is also 4 MiB long, its middle third: the
   * same key and length, other bytes. The 8 MiB size salts the keys past block 0, so a mount in 4
   * MiB (or a build before --block-size) never finds that block under its key.
   */
  @Test
  void blocksOfAnotherSize_areNeverFoundUnderTheFirstSizesKeys() throws Exception {
    int mib = 1 << 20;
    LargeFile f = new LargeFile("shards/twelve.tar", 12 * mib, 36);
    Path dir = tmp.resolve("unrecorded");
    java.util.function.IntFunction<TieredCache.Config> sized =
        bs -> new TieredCache.Config(1 << 30, "test", 0, LIMIT, bs, 16);
    try (TieredCache c = open(f.src, f.cat, dir, sized.apply(8 * mib))) {
      assertThat(readFile(c, f.cat, f.id, 8 * mib)).isEqualTo(f.bytes);
      c.flush();
      assertThat(c.index().isStored(f.id, 1)).isTrue();
    }
    // A build before --block-size looks block 1 up under its 4 MiB key, unsalted: not there.
    long vh = CacheKey.versionHash(f.cat.versionTag(f.id));
    try (LmdbStore s = new LmdbStore(dir, 4L << 30, bytes -> {})) {
      assertThat(s.get(CacheKey.of("shards/twelve.tar", 1), vh, 4 * mib).check()).isNull();
      assertThat(s.get(CacheKey.of("shards/twelve.tar", 1, 8 * mib), vh, 4 * mib).check())
          .isEqualTo(StoredValue.Check.OK);
    }
    // This build mounted in 4 MiB: the block of 8 MiB dropped at the mount, every byte right.
    try (TieredCache c = open(f.src, f.cat, dir, sized.apply(Units.FIRST_BLOCK_SIZE))) {
      assertThat(c.index().isStored(f.id, 1)).isFalse();
      assertThat(c.read(f.id, 1)).isEqualTo(Arrays.copyOfRange(f.bytes, 4 * mib, 8 * mib));
      assertThat(readFile(c, f.cat, f.id, 4 * mib)).isEqualTo(f.bytes);
    }
  }

  /**
   * The blocks held for the writer are bounded by the write queue's size: the oldest go first, and
   * the next read fetches them (no RAM tier here, so nothing else holds them).
   */
  @Test
  void heldRefusedBlocks_areBoundedByTheWriteQueue_theOldestFetchedAgain() throws Exception {
    LargeFile f = new LargeFile("shards/shard-1.tar", 40 * BLOCK, 32);
    try (TieredCache c = openWithoutRam(f.src, f.cat, tmp.resolve("bound"), 4 * BLOCK)) {
      try (var stalled = c.store().holdWriteLock()) {
        assertThat(readFile(c, f.cat, f.id)).isEqualTo(f.bytes);
        assertThat(c.stats().writeQueueFull.sum()).isEqualTo(36);
        assertThat(c.owedBlocks()).isEqualTo(4);
      }
      awaitRepaid(c);
      assertThat(c.stats().writeQueueRepaid.sum()).isEqualTo(4);
      for (int b = 0; b < 40; b++) {
        // 0-3 queued while the writer was held, 36-39 the last refused, held and stored later.
        assertThat(c.index().isStored(f.id, b)).isEqualTo(b < 4 || b >= 36);
      }
      long misses = c.misses();
      for (int b = 0; b < 40; b++) {
        assertThat(c.read(f.id, b))
            .isEqualTo(Arrays.copyOfRange(f.bytes, b * BLOCK, (b + 1) * BLOCK));
        c.flush(); // a disk that keeps up
      }
      assertThat(c.misses() - misses).isEqualTo(32);
      assertThat(c.isFullyCached(f.id)).isTrue();
    }
  }

  /** A file evicted while blocks of it are held for the writer is not stored again by them. */
  @Test
  void anEvictedFilesHeldBlocks_areDropped_notStored() throws Exception {
    LargeFile f = new LargeFile("shards/shard-2.tar", 12 * BLOCK, 33);
    try (TieredCache c = openWithoutRam(f.src, f.cat, tmp.resolve("evicted"), 4 * BLOCK)) {
      try (var stalled = c.store().holdWriteLock()) {
        assertThat(readFile(c, f.cat, f.id)).isEqualTo(f.bytes);
        assertThat(c.owedBlocks()).isEqualTo(4);
        c.evictFile(f.id);
        assertThat(c.owedBlocks()).isZero();
        assertThat(c.owedBytes()).isZero();
      }
      awaitRepaid(c);
      assertThat(c.stats().writeQueueRepaid.sum()).isZero();
      for (int b = 0; b < 12; b++) {
        assertThat(c.index().isStored(f.id, b)).isFalse();
      }
    }
  }

  /** Blocks held for a writer whose store then goes down are freed at the next fetch. */
  @Test
  void heldBlocks_areFreed_whenTheStoreGoesDown() throws Exception {
    LargeFile f = new LargeFile("shards/shard-3.tar", 12 * BLOCK, 34);
    InMemorySource src = f.src;
    src.put("shards/shard-4.tar", Arrays.copyOf(f.bytes, 3 * BLOCK));
    Catalog cat = Mount.listCatalog(src);
    int id = cat.lookup("shards/shard-3.tar");
    int other = cat.lookup("shards/shard-4.tar");
    try (TieredCache c = openWithoutRam(src, cat, tmp.resolve("down-held"), 4 * BLOCK)) {
      try (var stalled = c.store().holdWriteLock()) {
        assertThat(readFile(c, cat, id)).isEqualTo(f.bytes);
        assertThat(c.owedBytes()).isEqualTo(4L * BLOCK);
        c.store().down("write failed: test");
        assertThat(c.read(other, 0)).isEqualTo(Arrays.copyOf(f.bytes, 3 * BLOCK));
        assertThat(c.owedBlocks()).isZero();
        assertThat(c.owedBytes()).isZero();
      }
    }
  }

  /**
   * A large block waits for the disk writer, and when refused waits to be offered again, as the RAM
   * tier's copy (one reference more on it), not as a copy of its own: one copy of each block in
   * native memory. The tier may let go of a block meanwhile; its copy lives until it is stored.
   */
  @Test
  void largeBlocksWaitForTheWriter_asTheRamTiersCopy_whichOutlivesItsEviction() throws Exception {
    int block = LmdbStore.OFF_HEAP_MIN;
    LargeFile f = new LargeFile("shards/shared.tar", 6 * block, 35);
    // The RAM tier holds the 6 blocks; the writer's queue 3 of them, the other 3 are refused.
    TieredCache.Config cfg =
        new TieredCache.Config(1 << 30, "test", 16L << 20, LIMIT, block, 16, 3L * block);
    try (TieredCache c = open(f.src, f.cat, tmp.resolve("shared"), cfg)) {
      try (var stalled = c.store().holdWriteLock()) {
        assertThat(readFile(c, f.cat, f.id, block)).isEqualTo(f.bytes);
        assertThat(c.store().queuedSharedBytes()).isEqualTo(3L * block);
        assertThat(c.store().queuedNativeBytes()).isZero(); // no copy of their own
        assertThat(c.owedBlocks()).isEqualTo(3);
        assertThat(c.owedBytes()).isEqualTo(3L * block);
        assertThat(c.owedCopyBytes()).isZero();
        assertThat(c.ramNativeBytes()).isEqualTo(6L * block);
        for (int b = 0; b < 6; b++) {
          assertThat(c.dropFromRam(f.id, b)).isTrue();
        }
        // Let go by the tier, still held for the writer: not freed.
        assertThat(c.ramNativeBytes()).isEqualTo(6L * block);
      }
      awaitRepaid(c);
      assertThat(c.stats().writeQueueRepaid.sum()).isEqualTo(3);
      assertThat(c.store().queuedSharedBytes()).isZero();
      assertThat(c.ramNativeBytes()).as("freed once stored").isZero();
    }
    try (TieredCache again = open(f.src, f.cat, tmp.resolve("shared"), cfg)) {
      assertThat(readFile(again, f.cat, f.id, block)).isEqualTo(f.bytes);
      assertThat(again.misses()).isZero();
    }
  }

  /**
   * A large block read ahead comes straight into native memory: the source fills a direct buffer,
   * never an array; the RAM tier, the writer's queue, the owed blocks and the reader share that one
   * copy; its stored checksum is its bytes' (a new cache reads it back from disk, no miss, nothing
   * corrupt). It is freed once the last of them lets it go.
   */
  @Test
  void largeBlocksReadAhead_landInNativeMemory_sharedByAll_andFreedOnceAllLetGo() throws Exception {
    int block = LmdbStore.OFF_HEAP_MIN;
    LargeFile f = new LargeFile("shards/native.tar", 6 * block, 36);
    BufferKinds src = new BufferKinds(f.src);
    TieredCache.Config cfg =
        new TieredCache.Config(1 << 30, "test", 16L << 20, LIMIT, block, 16, 3L * block);
    List<TieredCache.Fetched> got = new ArrayList<>();
    try (TieredCache c = open(src, f.cat, tmp.resolve("native"), cfg)) {
      try (var stalled = c.store().holdWriteLock()) {
        for (int b = 0; b < 6; b++) {
          TieredCache.Fetched g = c.readAhead(f.id, b);
          got.add(g);
          assertThat(g.bytes()).as("no array handed over").isNull();
          assertThat(g.held()).isNotNull();
        }
        assertThat(src.heap.get()).as("reads into an array").isZero();
        assertThat(src.direct.get()).isGreaterThanOrEqualTo(6);
        assertThat(c.store().queuedSharedBytes()).isEqualTo(3L * block);
        assertThat(c.store().queuedNativeBytes()).isZero();
        assertThat(c.owedBlocks()).isEqualTo(3);
        assertThat(c.owedCopyBytes()).isZero();
        assertThat(c.ramNativeBytes()).as("one copy of each block").isEqualTo(6L * block);
      }
      awaitRepaid(c);
      assertThat(c.stats().writeQueueRepaid.sum()).isEqualTo(3);
      for (int b = 0; b < 6; b++) {
        assertThat(copiedOut(c, got.get(b).held(), block))
            .isEqualTo(Arrays.copyOfRange(f.bytes, b * block, (b + 1) * block));
      }
      got.forEach(TieredCache.Fetched::discard); // the reader is done with them
      assertThat(c.ramNativeBytes()).as("the tier's, still").isEqualTo(6L * block);
      for (int b = 0; b < 6; b++) {
        assertThat(c.dropFromRam(f.id, b)).isTrue();
      }
      assertThat(c.ramNativeBytes()).as("freed once the tier lets go").isZero();
    }
    try (TieredCache again = open(f.src, f.cat, tmp.resolve("native"), cfg)) {
      assertThat(readFile(again, f.cat, f.id, block)).isEqualTo(f.bytes);
      assertThat(again.misses()).isZero();
      assertThat(again.stats().corrupt.sum()).isZero();
    }
  }

  @Test
  void aReadersOwnMissOfALargeBlock_isFetchedIntoNativeMemory_andANearOneComesTheUsualWay()
      throws Exception {
    int block = LmdbStore.OFF_HEAP_MIN;
    LargeFile f = new LargeFile("shards/own.tar", 3 * block, 37);
    BufferKinds src = new BufferKinds(f.src);
    TieredCache.Config cfg =
        new TieredCache.Config(1 << 30, "test", 16L << 20, LIMIT, block, 16, 3L * block);
    try (TieredCache c = open(src, f.cat, tmp.resolve("own"), cfg)) {
      for (int b = 0; b < 3; b++) {
        TieredCache.Fetched g = c.readBlock(f.id, b);
        assertThat(g.bytes()).as("no array handed over").isNull();
        assertThat(copiedOut(c, g.held(), block))
            .isEqualTo(Arrays.copyOfRange(f.bytes, b * block, (b + 1) * block));
        g.discard();
      }
      assertThat(src.heap.get()).as("reads into an array").isZero();
      assertThat(src.direct.get()).isGreaterThanOrEqualTo(3);
      assertThat(c.misses()).isEqualTo(3);
      // In the RAM tier now: read the usual way, a hit, nothing fetched.
      long ramHits = c.stats().ramHits.sum();
      TieredCache.Fetched again = c.readBlock(f.id, 1);
      assertThat(again.held()).isNull();
      assertThat(again.bytes()).isEqualTo(Arrays.copyOfRange(f.bytes, block, 2 * block));
      assertThat(c.stats().ramHits.sum()).isEqualTo(ramHits + 1);
      assertThat(c.misses()).isEqualTo(3);
    }
  }

  /** The first {@code length} bytes of a held block, as served from it (asserted served). */
  private static byte[] copiedOut(TieredCache c, MappedBlock held, int length) {
    byte[] out = new byte[length];
    assertThat(
            c.copyOut(
                held,
                0,
                length,
                false,
                (address, n) ->
                    com.kenai.jffi.MemoryIO.getInstance().getByteArray(address, out, 0, n)))
        .isTrue();
    return out;
  }

  /** A source that counts the reads it is asked to put into an array and into native memory. */
  private static final class BufferKinds implements org.hintfs.backing.DatasetSource {
    final org.hintfs.backing.DatasetSource src;
    final java.util.concurrent.atomic.AtomicInteger heap =
        new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.atomic.AtomicInteger direct =
        new java.util.concurrent.atomic.AtomicInteger();

    BufferKinds(org.hintfs.backing.DatasetSource src) {
      this.src = src;
    }

    @Override
    public String describe() {
      return src.describe();
    }

    @Override
    public void list(java.util.function.Consumer<org.hintfs.backing.SourceObject> sink)
        throws IOException {
      src.list(sink);
    }

    @Override
    public org.hintfs.backing.SourceObject stat(String path) throws IOException {
      return src.stat(path);
    }

    @Override
    public int read(String path, String version, long offset, java.nio.ByteBuffer dst)
        throws IOException {
      (dst.isDirect() ? direct : heap).incrementAndGet();
      return src.read(path, version, offset, dst);
    }
  }

  /** A source of one large file of {@code length} random bytes, its catalog and id. */
  private static final class LargeFile {
    final InMemorySource src = new InMemorySource("mem:test");
    final byte[] bytes;
    final Catalog cat;
    final int id;

    LargeFile(String path, int length, long seed) throws IOException {
      bytes = new byte[length];
      new Random(seed).nextBytes(bytes);
      src.put(path, bytes);
      cat = Mount.listCatalog(src);
      id = files(cat).get(0);
    }
  }

  /** Collects what a page read hands over, from arrays and from LMDB's map alike. */
  static final class Collected implements ReadSink {
    final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();

    @Override
    public void put(byte[] src, int off, int len) {
      out.write(src, off, len);
    }

    @Override
    public void putNative(long address, int len) {
      byte[] b = new byte[len];
      NativeSink.copy(address, b, 0, len);
      out.write(b, 0, len);
    }
  }

  static byte[] readPages(TieredCache c, int id, long offset, int n) throws IOException {
    Collected got = new Collected();
    c.readPages(id, offset, n, 0, got, null);
    return got.out.toByteArray();
  }

  /**
   * A random reader's read fetches the 64 KiB pages it covers in one GET, not the 1 MiB block:
   * 100,000 bytes from 1.5 MiB + 100 lie in pages 24 and 25 (bytes 1,572,864-1,703,935). Read
   * again, both come from the disk, checked, with no GET. The block they lie in, stored later,
   * takes their place: one copy of each byte.
   */
  @Test
  void aRandomRead_fetchesAndStoresThePagesItCovers_andTheirBlockLaterReplacesThem()
      throws Exception {
    int mib = 1 << 20;
    LargeFile f = new LargeFile("packed/tokens.bin", 5 * mib + 777, 61);
    TieredCache.Config config = new TieredCache.Config(1 << 30, "test", 0, LIMIT, mib, 16);
    long at = mib + mib / 2 + 100;
    byte[] want = Arrays.copyOfRange(f.bytes, (int) at, (int) at + 100_000);
    try (TieredCache c = open(f.src, f.cat, tmp.resolve("pages"), config)) {
      assertThat(readPages(c, f.id, at, 100_000)).isEqualTo(want);
      assertThat(c.misses()).isEqualTo(1);
      assertThat(c.stats().pagesFetched.sum()).isEqualTo(2);
      assertThat(c.stats().bytesFromSource.sum()).isEqualTo(2 * 65536);
      c.flush();
      Units u = c.units();
      assertThat(c.index().isStored(f.id, u.pageSlot(f.id, 24))).isTrue();
      assertThat(c.index().isStored(f.id, u.pageSlot(f.id, 25))).isTrue();
      assertThat(readPages(c, f.id, at, 100_000)).isEqualTo(want);
      assertThat(c.misses()).isEqualTo(1);
      assertThat(c.stats().pageHits.sum()).isEqualTo(2);
      // The whole block 1 (bytes 1-2 MiB), as a sequential reader fetches it.
      assertThat(c.read(f.id, 1)).isEqualTo(Arrays.copyOfRange(f.bytes, mib, 2 * mib));
      c.flush();
      assertThat(c.index().isStored(f.id, 1)).isTrue();
      assertThat(c.index().isStored(f.id, u.pageSlot(f.id, 24))).isFalse();
      assertThat(c.stats().pagesMerged.sum()).isEqualTo(2);
      assertThat(c.index().usedBytes()).isEqualTo(StoredValue.charge(mib));
      // A page of a block not stored, near the file's short end: its own length.
      long tail = 5L * mib + 700;
      assertThat(readPages(c, f.id, tail, 77))
          .isEqualTo(Arrays.copyOfRange(f.bytes, (int) tail, (int) tail + 77));
      c.flush();
      c.index().checkInvariants();
    }
    // Remounted: the pages are recovered and served; in another block size they are dropped,
    // whose slots name other pages.
    try (TieredCache c = open(f.src, f.cat, tmp.resolve("pages"), config)) {
      long tail = 5L * mib + 700;
      assertThat(readPages(c, f.id, tail, 77))
          .isEqualTo(Arrays.copyOfRange(f.bytes, (int) tail, (int) tail + 77));
      assertThat(c.misses()).isZero();
    }
    TieredCache.Config twice = new TieredCache.Config(1 << 30, "test", 0, LIMIT, 2 * mib, 16);
    try (TieredCache c = open(f.src, f.cat, tmp.resolve("pages"), twice)) {
      long tail = 5L * mib + 700;
      assertThat(readPages(c, f.id, tail, 77))
          .isEqualTo(Arrays.copyOfRange(f.bytes, (int) tail, (int) tail + 77));
      assertThat(c.misses()).isEqualTo(1);
    }
  }

  /**
   * A large file's blocks leave the page cache once stored (their reader was served from memory;
   * LmdbStore, "Memory"); a small file's pages stay, for its next open to hit in memory.
   */
  @Test
  void aLargeFilesBlocks_leaveThePageCacheOnceStored_aSmallFileStays() throws Exception {
    InMemorySource src = new InMemorySource("mem:test");
    byte[] large = new byte[8 * BLOCK + 100];
    byte[] small = new byte[LIMIT - 1000];
    new Random(43).nextBytes(large);
    new Random(44).nextBytes(small);
    src.put("shards/shard-0.tar", large);
    src.put("c0/small.jpg", small);
    Catalog cat = Mount.listCatalog(src);
    int bigId = -1;
    int smallId = -1;
    for (int id : files(cat)) {
      if (cat.size(id) == large.length) {
        bigId = id;
      } else {
        smallId = id;
      }
    }
    try (TieredCache c = open(src, cat, tmp.resolve("uncache"), 1 << 30)) {
      assertThat(c.isBlocked(bigId)).isTrue();
      assertThat(c.isBlocked(smallId)).isFalse();
      assertThat(readFile(c, cat, smallId)).isEqualTo(small);
      c.flush();
      assertThat(c.store().uncachedBytes()).as("a small file's pages stay").isZero();
      assertThat(readFile(c, cat, bigId)).isEqualTo(large);
      awaitRepaid(c);
      // Each of the 9 blocks' run of pages, its header and rounding included.
      assertThat(c.store().uncachedBytes())
          .isGreaterThanOrEqualTo(large.length)
          .isLessThanOrEqualTo(large.length + 9L * 2 * 4096);
    }
    try (TieredCache again = open(src, cat, tmp.resolve("uncache"), 1 << 30)) {
      assertThat(readFile(again, cat, bigId)).isEqualTo(large); // from the disk, every block
      assertThat(again.misses()).isZero();
    }
  }

  /** Waits until the writer has stored every block owed to it and its queue is empty. */
  private static void awaitRepaid(TieredCache c) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (c.owedBlocks() > 0 || c.writeQueuedBytes() > 0) {
      c.flush();
      if (System.nanoTime() > deadline) {
        fail("owed blocks not stored: " + c.owedBlocks() + " left");
      }
      Thread.sleep(10);
    }
    c.flush();
  }

  @Test
  void aStoreThatGoesDown_isKnownToBeDown_noHitCounted_andEveryReadServedFromTheSource()
      throws Exception {
    InMemorySource mem = dataset(22, 20, 30_000);
    FaultInjectingSource src = new FaultInjectingSource(mem);
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    try (TieredCache c =
        openWithoutRam(src, cat, tmp.resolve("down"), LmdbStore.DEFAULT_QUEUE_LIMIT)) {
      for (int id : ids) {
        c.read(id, 0);
      }
      c.flush();
      assertThat(c.index().cachedFiles()).isEqualTo(ids.size());
      long reads = src.reads();
      c.store().down("write failed: test"); // what any LMDB error does
      assertThat(c.storeHealth()).isEqualTo("down: write failed: test");
      assertThat(c.index().cachedFiles()).isZero();
      for (int id : ids) {
        assertThat(c.isCached(id)).isFalse();
        assertThat(c.access(id)).as("an open of a file the dead disk held is a miss").isFalse();
        assertThat(c.read(id, 0, false))
            .isEqualTo(mem.readRange(cat.path(id), null, 0, (int) cat.size(id)));
      }
      assertThat(src.reads() - reads).isEqualTo(ids.size());
      assertThat(c.stats().openHits.sum()).isZero();
    }
  }

  /** A cache of 1 GiB on disk with no RAM tier, its writer's queue bounded to {@code queue}. */
  static TieredCache openWithoutRam(
      org.hintfs.backing.DatasetSource src, Catalog cat, Path dir, long queue) {
    return open(src, cat, dir, new TieredCache.Config(1 << 30, "test", 0, LIMIT, BLOCK, 16, queue));
  }

  static byte[] readFile(TieredCache c, Catalog cat, int id) throws IOException {
    return readFile(c, cat, id, BLOCK);
  }

  /** The whole of file {@code id}, block after block, from a cache of {@code blockSize} blocks. */
  static byte[] readFile(TieredCache c, Catalog cat, int id, int blockSize) throws IOException {
    if (!c.isBlocked(id)) {
      return c.read(id, 0);
    }
    int n = (int) ((cat.size(id) + blockSize - 1) / blockSize);
    byte[] out = new byte[(int) cat.size(id)];
    for (int b = 0; b < n; b++) {
      byte[] blk = c.read(id, b);
      System.arraycopy(blk, 0, out, b * blockSize, blk.length);
    }
    return out;
  }

  static List<Integer> files(Catalog cat) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < cat.entryCount(); i++) {
      if (!cat.isDirectory(i)) {
        ids.add(i);
      }
    }
    return ids;
  }

  @Property(tries = 15)
  void neverExceedsCapacity_andAlwaysReturnsTheSourceBytes(
      @ForAll @LongRange(min = 0, max = 400_000) long capacity,
      @ForAll @Size(min = 1, max = 120) List<@IntRange(min = 0, max = 29) Integer> accesses,
      @ForAll @IntRange(min = 1, max = 120_000) int maxSize)
      throws Exception {
    InMemorySource src = dataset(capacity ^ maxSize, 30, maxSize);
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    Path dir = Files.createTempDirectory("hintfs-prop"); // jqwik does not inject @TempDir
    try (TieredCache c = open(src, cat, dir, capacity)) {
      for (int a : accesses) {
        int id = ids.get(a);
        byte[] want = src.readRange(cat.path(id), null, 0, (int) cat.size(id));
        assertThat(readFile(c, cat, id)).isEqualTo(want);
        assertThat(c.index().usedBytes()).isLessThanOrEqualTo(capacity);
        c.index().checkInvariants();
      }
    } finally {
      try (var s = Files.walk(dir)) {
        s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Test
  void sixtyFourConcurrentReadsOfOneMissedFile_causeOneSourceRead() throws Exception {
    FaultInjectingSource src = new FaultInjectingSource(dataset(1, 5, 40_000)).latency(300);
    Catalog cat = Mount.listCatalog(src);
    int id = files(cat).get(0);
    try (TieredCache c = open(src, cat, tmp.resolve("c"), 1 << 20)) {
      ExecutorService pool = Executors.newFixedThreadPool(64);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<byte[]>> got = new ArrayList<>();
      for (int t = 0; t < 64; t++) {
        got.add(
            pool.submit(
                () -> {
                  start.await();
                  return c.read(id, 0);
                }));
      }
      start.countDown();
      byte[] first = got.get(0).get();
      for (Future<byte[]> f : got) {
        assertThat(f.get()).isEqualTo(first);
      }
      pool.shutdown();
      assertThat(src.reads()).isEqualTo(1);
      // One leader fetched; every other read waited for it or found it in RAM afterwards.
      assertThat(c.misses()).isEqualTo(1);
      assertThat(c.misses() + c.coalescedFetches() + c.stats().hits()).isEqualTo(64);
    }
  }

  /**
   * The tiers in order: a unit missed on disk is asked of the peer tier; what the peer answers is
   * served and stored without the source, what it declines (null: this node is the home, or the
   * home failed) is read from the source once; a peer's own ask never goes to a peer.
   */
  @Test
  void aMissAsksThePeerTierBeforeTheSource_andStoresWhatEitherAnswers() throws Exception {
    FaultInjectingSource src = new FaultInjectingSource(dataset(7, 6, 40_000));
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    int fromPeer = ids.get(0);
    int declined = ids.get(1);
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    PeerTier peer =
        new PeerTier() {
          @Override
          public byte[] get(Unit u) throws IOException {
            asked.incrementAndGet();
            return u.id() == fromPeer ? src.readRange(u.path(), null, 0, u.length()) : null;
          }

          @Override
          public boolean isHome(int id) {
            return id == declined;
          }

          @Override
          public byte[] fromFormerHome(Unit u) {
            return null;
          }
        };
    try (TieredCache c =
        TieredCache.open(
            src,
            cat,
            new LruPolicy(cat.entryCount()),
            tmp.resolve("c"),
            new TieredCache.Config(1 << 20, "test", 0, LIMIT, BLOCK, 16),
            peer)) {
      long before = src.reads();
      byte[] b = c.read(fromPeer, 0);
      assertThat(src.reads() - before).isEqualTo(1); // the fake home's own readRange
      assertThat(c.misses()).isZero();
      assertThat(b).isEqualTo(src.readRange(cat.path(fromPeer), null, 0, b.length));
      before = src.reads();
      assertThat(c.read(declined, 0))
          .isEqualTo(src.readRange(cat.path(declined), null, 0, (int) cat.size(declined)));
      assertThat(src.reads() - before).isEqualTo(2); // the source, once, and the check above
      assertThat(c.misses()).isEqualTo(1);
      assertThat(asked.get()).isEqualTo(2);
      // Both are on disk now: read again, neither tier below is asked.
      c.flush();
      c.read(fromPeer, 0);
      c.read(declined, 0);
      assertThat(asked.get()).isEqualTo(2);
      assertThat(c.stats().diskHits.sum()).isEqualTo(2);
      // A peer's ask is served here from the source, never passed on to another peer.
      int third = ids.get(2);
      c.readForPeer(third, 0);
      assertThat(asked.get()).isEqualTo(2);
      assertThat(c.misses()).isEqualTo(2);
      c.index().checkInvariants();
    }
  }

  /**
   * A re-keying after an order change computes its keys outside the cache's lock: while the
   * next-use oracle is stuck in it, cached files are still served and the index answers.
   */
  @Test
  void aReorderHoldsNoLockWhileItsKeysAreComputed() throws Exception {
    FaultInjectingSource src = new FaultInjectingSource(dataset(8, 6, 20_000));
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    CountDownLatch inCompute = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean stuck =
        new java.util.concurrent.atomic.AtomicBoolean();
    org.hintfs.policy.NextUse oracle =
        new org.hintfs.policy.NextUse() {
          @Override
          public long after(int sample) {
            if (stuck.get()) {
              inCompute.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return sample;
          }

          @Override
          public long now() {
            return 0;
          }
        };
    try (TieredCache c =
        TieredCache.open(
            src,
            cat,
            new org.hintfs.policy.ClairvoyantPolicy(
                new org.hintfs.policy.PolicyContext(cat.entryCount(), null, oracle, null)),
            tmp.resolve("c"),
            new TieredCache.Config(1 << 20, "test", 0, LIMIT, BLOCK, 16))) {
      for (int id : ids) {
        c.read(id, 0);
      }
      c.flush();
      stuck.set(true);
      Thread reorder = new Thread(c.index()::orderChanged);
      reorder.start();
      assertThat(inCompute.await(10, TimeUnit.SECONDS)).isTrue();
      stuck.set(false);
      ExecutorService other = Executors.newSingleThreadExecutor();
      try {
        // A cached file's read records its access under the lock: done while the reorder computes.
        Future<byte[]> read = other.submit(() -> c.read(ids.get(1), 0));
        assertThat(read.get(5, TimeUnit.SECONDS)).hasSize((int) cat.size(ids.get(1)));
        assertThat(other.submit(() -> c.index().isResident(ids.get(2))).get(5, TimeUnit.SECONDS))
            .isTrue();
      } finally {
        other.shutdownNow();
        release.countDown();
      }
      reorder.join(10_000);
      assertThat(reorder.isAlive()).isFalse();
      c.index().checkInvariants();
    }
  }

  /** Reads every file of {@code ids} into a cache in {@code dir}, then closes it; its bytes. */
  static long fill(FaultInjectingSource src, Catalog cat, List<Integer> ids, Path dir)
      throws Exception {
    assertThat(ids).isEqualTo(files(cat));
    try (TieredCache c = filled(src, cat, dir)) {
      assertThat(c.index().cachedFiles()).isEqualTo(ids.size());
      return c.index().usedBytes();
    }
  }

  @Test
  void survivesAReopen_withZeroSourceReads() throws Exception {
    FaultInjectingSource src = new FaultInjectingSource(dataset(2, 40, 90_000));
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    Path dir = tmp.resolve("c");
    long used = fill(src, cat, ids, dir);
    long before = src.reads();
    try (TieredCache c = open(src, cat, dir, 100L << 20)) {
      assertThat(c.index().usedBytes()).isEqualTo(used);
      for (int id : ids) {
        assertThat(readFile(c, cat, id))
            .isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
      }
      // Reading via readRange above counted too: subtract those (one per file).
      assertThat(src.reads() - before - ids.size()).isZero();
      assertThat(c.stats().diskHits.sum()).isGreaterThanOrEqualTo(ids.size());
      c.index().checkInvariants();
    }
  }

  @Test
  void aPrefetchOfASmallFileOnDisk_readsItsPagesAhead_andItsOpenCopiesItOutOfTheMap()
      throws Exception {
    FaultInjectingSource src = new FaultInjectingSource(dataset(7, 12, 30_000));
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    Path dir = tmp.resolve("c");
    fill(src, cat, ids, dir);
    try (TieredCache c = open(src, cat, dir, 100L << 20)) { // a fresh RAM tier
      int id = ids.get(3);
      assertThat(c.isNear(id)).as("on disk, not in RAM").isFalse();
      long reads = src.reads();
      c.prefetch(id);
      assertThat(c.stats().diskReadAhead.sum()).isEqualTo(1);
      assertThat(c.stats().promotions.sum() + c.stats().prefetches.sum()).isZero();
      assertThat(src.reads()).isEqualTo(reads); // nothing asked of the source
      assertThat(c.isNear(id)).as("nothing copied into RAM").isFalse();
      assertThat(c.access(id)).isTrue();
      byte[] want = src.readRange(cat.path(id), null, 0, (int) cat.size(id));
      byte[] got = new byte[want.length];
      assertThat(c.copyOut(id, 0, want.length, true, (a, n) -> NativeSink.copy(a, got, 0, n)))
          .isTrue();
      assertThat(got).isEqualTo(want);
      assertThat(c.stats().diskHits.sum()).isEqualTo(1);
    }
  }

  @Test
  void aPrefetchOfALargerWholeFileOnDisk_promotesItToRam_andAnOpenFindsItThere() throws Exception {
    // Whole files past COPY_OUT_MAX (a whole-object limit of 1 MiB, a RAM tier of 2 MiB).
    InMemorySource mem = new InMemorySource("mem:test");
    Random rnd = new Random(8);
    for (int i = 0; i < 3; i++) {
      byte[] b = new byte[TieredCache.COPY_OUT_MAX + 1 + rnd.nextInt(100_000)];
      rnd.nextBytes(b);
      mem.put("c0/big" + i, b);
    }
    FaultInjectingSource src = new FaultInjectingSource(mem);
    Catalog cat = Mount.listCatalog(src);
    int id = files(cat).get(1);
    Path dir = tmp.resolve("c");
    TieredCache.Config big =
        new TieredCache.Config(100L << 20, "test", 2 << 20, 1 << 20, BLOCK, 16);
    try (TieredCache c = TieredCache.open(src, cat, new LruPolicy(cat.entryCount()), dir, big)) {
      for (int f : files(cat)) {
        c.read(f, 0);
      }
      c.flush();
    }
    try (TieredCache c = TieredCache.open(src, cat, new LruPolicy(cat.entryCount()), dir, big)) {
      assertThat(c.isBlocked(id)).isFalse();
      assertThat(c.isNear(id)).as("on disk, not in RAM").isFalse();
      long reads = src.reads();
      c.prefetch(id);
      assertThat(c.stats().promotions.sum()).isEqualTo(1);
      assertThat(c.stats().diskReadAhead.sum() + c.stats().prefetches.sum()).isZero();
      assertThat(src.reads()).isEqualTo(reads); // from disk, not the source
      assertThat(c.isNear(id)).isTrue();
      assertThat(c.access(id)).isTrue();
      assertThat(c.read(id, 0, false))
          .isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
      assertThat(c.stats().ramHits.sum()).isEqualTo(1);
    }
  }

  /** A cache in {@code dir} that has read every file once and written them to LMDB. */
  static TieredCache filled(org.hintfs.backing.DatasetSource src, Catalog cat, Path dir)
      throws Exception {
    TieredCache c = open(src, cat, dir, 100L << 20);
    for (int id : files(cat)) {
      readFile(c, cat, id);
    }
    c.flush();
    return c;
  }

  @Test
  void aDiskHitIsCopiedOutOfTheMap_checked_countedOncePerOpen_andRamComesFirst() throws Exception {
    InMemorySource src = dataset(9, 12, 40_000);
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    Path dir = tmp.resolve("c");
    try (TieredCache c = filled(src, cat, dir)) {
      // Just read: the RAM tier holds them, and RAM serves first.
      assertThat(c.copyOut(ids.get(0), 0, 1, true, (a, n) -> fail("RAM comes first"))).isFalse();
    }
    try (TieredCache c = open(src, cat, dir, 100L << 20)) {
      long hits = 0;
      for (int id : ids) {
        byte[] want = src.readRange(cat.path(id), null, 0, (int) cat.size(id));
        assertThat(c.access(id)).isTrue();
        int half = want.length / 2;
        byte[] got = new byte[want.length];
        assertThat(c.copyOut(id, 0, half, true, (a, n) -> NativeSink.copy(a, got, 0, n))).isTrue();
        assertThat(
                c.copyOut(
                    id,
                    half,
                    want.length - half,
                    false,
                    (a, n) -> NativeSink.copy(a, got, half, n)))
            .isTrue();
        assertThat(got).isEqualTo(want);
        assertThat(c.stats().diskHits.sum()).isEqualTo(++hits);
      }
      assertThat(c.stats().ramHits.sum()).isZero();
      assertThat(c.sourceRequests()).isZero();
    }
  }

  @Test
  void damagedPayloadsAreDroppedAndRefetched() throws Exception {
    InMemorySource src = dataset(3, 10, 40_000);
    Catalog cat = Mount.listCatalog(src);
    List<Integer> ids = files(cat);
    Path dir = tmp.resolve("c");
    filled(src, cat, dir).close();
    // Damage every payload: find 32 bytes from the middle of each file in data.mdb and flip them.
    int damaged = 0;
    byte[] db = Files.readAllBytes(dir.resolve("data.mdb"));
    try (RandomAccessFile f = new RandomAccessFile(dir.resolve("data.mdb").toFile(), "rw")) {
      for (int id : ids) {
        byte[] b = src.readRange(cat.path(id), null, 0, (int) cat.size(id));
        if (b.length < 64) {
          continue;
        }
        byte[] needle = Arrays.copyOfRange(b, b.length / 2, b.length / 2 + 32);
        // Every copy: LMDB's copy-on-write can leave stale copies of small values in free pages.
        int at = indexOf(db, needle, 0);
        assertThat(at).as("payload of %s on disk", cat.path(id)).isPositive();
        for (; at >= 0; at = indexOf(db, needle, at + 1)) {
          f.seek(at);
          f.write(~needle[0]);
        }
        damaged++;
      }
    }
    try (TieredCache c = open(src, cat, dir, 100L << 20)) {
      for (int id : ids) {
        if (cat.size(id) >= 64) {
          // The copy out of the map checks the whole payload too: it hands nothing over.
          assertThat(c.copyOut(id, 0, 16, true, (a, n) -> fail("served a damaged entry")))
              .isFalse();
        }
      }
      assertThat(c.stats().diskHits.sum()).isZero();
      for (int id : ids) {
        assertThat(c.read(id, 0))
            .isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
      }
      assertThat(c.stats().corrupt.sum()).isEqualTo(damaged);
      c.flush();
      c.index().checkInvariants();
      // Refetched entries are stored again, sound this time.
      for (int id : ids) {
        c.read(id, 0);
      }
      assertThat(c.stats().corrupt.sum()).isEqualTo(damaged);
    }
  }

  @Test
  void aChangedSourceObjectIsNeverServedFromItsOldEntry() throws Exception {
    InMemorySource src = dataset(4, 3, 10_000);
    Catalog cat = Mount.listCatalog(src);
    int id = files(cat).get(0);
    Path dir = tmp.resolve("c");
    try (TieredCache c = open(src, cat, dir, 1 << 20)) {
      c.read(id, 0);
      c.flush();
    }
    src.put(cat.path(id), "new content".getBytes());
    Catalog relisted = Mount.listCatalog(src);
    int id2 = relisted.lookup(cat.path(id));
    try (TieredCache c = open(src, relisted, dir, 1 << 20)) {
      assertThat(new String(c.read(id2, 0))).isEqualTo("new content");
      assertThat(c.misses()).isEqualTo(1);
    }
  }

  @Test
  void anUnusableCacheDirectoryServesFromTheSource() throws Exception {
    InMemorySource src = dataset(5, 3, 10_000);
    Catalog cat = Mount.listCatalog(src);
    Path notADir = Files.writeString(tmp.resolve("file"), "x");
    try (TieredCache c = open(src, cat, notADir, 1 << 20)) {
      assertThat(c.storeHealth()).startsWith("none: ");
      int id = files(cat).get(1);
      assertThat(c.read(id, 0)).isEqualTo(src.readRange(cat.path(id), null, 0, (int) cat.size(id)));
    }
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
