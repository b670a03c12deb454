package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.Errno;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The filesystem logic without a mount: resolution, listing, reads, the reserved directory. */
class HintFsTest {
  @TempDir Path tmp;
  private byte[] big;
  private HintFs fs;

  @BeforeEach
  void setUp() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src"));
    Files.createDirectories(root.resolve("cls"));
    big = new byte[300_000];
    new Random(1).nextBytes(big);
    Files.write(root.resolve("cls/big.bin"), big);
    Files.write(root.resolve("cls/small.jpg"), new byte[] {1, 2, 3});
    Files.createDirectories(root.resolve(".hintfs"));
    Files.write(root.resolve(".hintfs/shadowed"), new byte[] {0});
    LocalDirSource src = new LocalDirSource(root);
    // A 100 KB whole-object limit and 64 KiB blocks make big.bin take the block path.
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt"))
            .withCache(tmp.resolve("cache"), "100%")
            .withUnits(100_000, 65_536);
    fs = Mount.create(src, Mount.listCatalog(src), cfg);
  }

  private byte[] readAll(long fh, int chunk) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long off = 0;
    int n;
    while ((n = fs.read(fh, off, chunk, out::write)) > 0) {
      off += n;
    }
    return out.toByteArray();
  }

  @Test
  void readsWholeAndRangedFiles_atAnyChunkSize() throws Exception {
    for (int chunk : new int[] {1, 4095, 131072, 1 << 20}) {
      long fh = fs.open("/cls/big.bin", false);
      assertThat(readAll(fh, chunk)).isEqualTo(big);
      fs.release(fh);
    }
    long fh = fs.open("/cls/small.jpg", false);
    assertThat(readAll(fh, 2)).containsExactly(1, 2, 3);
    // One source read for the small file however many chunks: it is fetched whole.
    long before = fs.cache().sourceRequests();
    assertThat(fs.read(fh, 1, 10, (b, o, l) -> {})).isEqualTo(2);
    assertThat(fs.cache().sourceRequests()).isEqualTo(before);
    assertThat(fs.read(fh, 3, 10, (b, o, l) -> {})).isZero();
    fs.release(fh);
    assertThat(fs.openHandles()).isZero();
  }

  @Test
  void aBlockReadAhead_waitsForItsReaderOutsideTheHeap_evenEvictedMeanwhile_andIsFreedAfter()
      throws Exception {
    int id = fs.resolve("/cls/big.bin");
    long fh = fs.open("/cls/big.bin", false);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // Blocks 0 and 1, one READ each: a sequential reader, whose window asks for blocks 2 and 3.
    assertThat(fs.read(fh, 0, 65_536, out::write)).isEqualTo(65_536);
    assertThat(fs.read(fh, 65_536, 65_536, out::write)).isEqualTo(65_536);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!(fs.cache().nearAhead(id, 2) && fs.cache().nearAhead(id, 3))) {
      assertThat(System.nanoTime()).as("blocks 2 and 3 read ahead").isLessThan(deadline);
      Thread.sleep(10);
    }
    fs.cache().evictFile(id);
    assertThat(fs.cache().nearAhead(id, 2)).isFalse();
    // Gone from the tiers, still held for the reader: the RAM tier's native copies, referenced.
    assertThat(fs.cache().ramNativeBytes()).isGreaterThanOrEqualTo(2L * 65_536);
    assertThat(readAll(fh, 131_072)).isEqualTo(java.util.Arrays.copyOfRange(big, 0, big.length));
    fs.release(fh);
    assertThat(fs.readAheadUsed()).isGreaterThanOrEqualTo(2);
    fs.cache().evictFile(id);
    assertThat(fs.cache().ramNativeBytes()).as("native memory left").isZero();
  }

  @Test
  void refusesWrites_andDirectories() {
    assertThatThrownBy(() -> fs.open("/cls/small.jpg", true)).isInstanceOf(ReadOnlyException.class);
    assertThatThrownBy(() -> fs.open("/cls", false)).isInstanceOf(IsDirectoryException.class);
    assertThat(ErrorTable.errnoFor(new ReadOnlyException("x"))).isEqualTo(Errno.EROFS);
    assertThat(ErrorTable.errnoFor(new NoSuchFileException("x"))).isEqualTo(Errno.ENOENT);
    assertThat(ErrorTable.errnoFor(new IllegalStateException())).isEqualTo(Errno.EIO);
  }

  @Test
  void reservedDirectoryIsReachableButNeverListed_andShadowsTheSource() throws Exception {
    List<String> root = new ArrayList<>();
    fs.list(fs.resolve("/"), (id, name, dir) -> root.add(name));
    assertThat(root).containsExactly("cls");
    assertThat(fs.isDirectory(fs.resolve("/.hintfs"))).isTrue();
    assertThatThrownBy(() -> fs.resolve("/.hintfs/shadowed"))
        .isInstanceOf(NoSuchFileException.class);
    long fh = fs.open("/.hintfs/stats", false);
    assertThat(fs.isDirectIo(fh)).isTrue();
    String json = new String(readAll(fh, 7), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(json).contains("\"files\" : 2").contains("\"bytes\" : 300003");
  }

  /**
   * A file in blocks read again is copied from where it lies into the reply, the RAM tier's memory
   * or LMDB's map, no Java array made for its blocks: every byte right at any READ size, one hit
   * per block a handle reads (the access the policy sees, as before), no source read; the RAM
   * tier's memory a handle held is given back at its close. The kernel's READs of one block
   * arriving out of order, or straddling two blocks, are served the same way.
   */
  @Test
  void aFileInBlocksReadAgain_isCopiedFromTheMap_oneDiskHitPerBlockPerHandle() throws Exception {
    long fh = fs.open("/cls/big.bin", false);
    assertThat(readAll(fh, 131_072)).isEqualTo(big);
    fs.release(fh);
    fs.cache().flush();
    int blocks = (big.length + 65_535) / 65_536;
    // The same daemon: its RAM tier holds the blocks fetched, and serves them where they lie.
    long ramBytes = fs.cache().ramNativeBytes();
    assertThat(ramBytes).isEqualTo(big.length);
    long ramHits = fs.cache().stats().ramHits.sum();
    long[] fromRam = readNatively("/cls/big.bin", 4096);
    assertThat(fromRam[0]).as("every byte where it lies").isEqualTo(big.length);
    assertThat(fs.cache().stats().ramHits.sum() - ramHits).isEqualTo(blocks);
    assertThat(fs.cache().ramNativeBytes())
        .as("the handle's references given up")
        .isEqualTo(ramBytes);
    fs.close();
    fs.cache().close();
    assertThat(fs.cache().ramNativeBytes()).as("freed once the tier lets go").isZero();
    // A fresh daemon on the same cache directory, its RAM tier empty: the blocks are on disk only.
    LocalDirSource src = new LocalDirSource(tmp.resolve("src"));
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt"))
            .withCache(tmp.resolve("cache"), "100%")
            .withUnits(100_000, 65_536);
    fs = Mount.create(src, Mount.listCatalog(src), cfg);
    for (int chunk : new int[] {4096, 50_000, 131_072}) {
      long hits = fs.cache().stats().diskHits.sum();
      assertThat(readNatively("/cls/big.bin", chunk)[0])
          .as("every byte from the map")
          .isEqualTo(big.length);
      assertThat(fs.cache().stats().diskHits.sum() - hits).isEqualTo(blocks);
    }
    assertThat(fs.cache().sourceRequests()).isZero();
    assertThat(fs.cache().stats().corrupt.sum()).isZero();
  }

  /**
   * Reads {@code path} in READs of {@code chunk} bytes, the first block's second half first; checks
   * every byte and returns {bytes handed over where they lie (putNative)}.
   */
  private long[] readNatively(String path, int chunk) throws Exception {
    long[] natively = {0};
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    HintFs.ByteSink sink =
        new HintFs.ByteSink() {
          @Override
          public void put(byte[] src, int off, int len) {
            out.write(src, off, len);
          }

          @Override
          public void putNative(long address, int len) {
            natively[0] += len;
            HintFs.ByteSink.super.putNative(address, len);
          }
        };
    long h = fs.open(path, false);
    assertThat(fs.read(h, 32_768, 32_768, (b, o, l) -> {})).isEqualTo(32_768);
    long off = 0;
    int n;
    while ((n = fs.read(h, off, chunk, sink)) > 0) {
      off += n;
    }
    fs.release(h);
    assertThat(out.toByteArray()).as("chunk %d", chunk).isEqualTo(big);
    return natively;
  }

  /**
   * A file opened as a hit and evicted before its handle's reads came is still read from disk, and
   * its bytes are deleted when the handle closes, as a Unix file unlinked while open. The policy
   * (LRU here: the reads of b and c come after a's open) evicts a to make room for c, exactly as
   * the simulator would; before, a's read then went to the source (NodeStreamsIT: 0.90-0.93 of
   * opens local at the source while the mount counted 1.0 hits).
   */
  @Test
  void aFileEvictedWhileOpen_isReadFromDisk_andDeletedAtItsClose() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src3/cls"));
    byte[][] data = new byte[3][10_000];
    for (int i = 0; i < 3; i++) {
      new Random(i).nextBytes(data[i]);
      Files.write(root.resolve("abc".charAt(i) + ".jpg"), data[i]);
    }
    org.hintfs.backing.FaultInjectingSource src =
        new org.hintfs.backing.FaultInjectingSource(new LocalDirSource(tmp.resolve("src3")));
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt3")).toBuilder()
            .cache(tmp.resolve("cache3"), "25000") // two of the three files
            .ramCacheBytes(0)
            .policy("lru")
            .build();
    HintFs small = Mount.create(src, Mount.listCatalog(src), cfg);
    try {
      int a = small.resolve("/cls/a.jpg");
      HintFsReads.file(small, "/cls/a.jpg", 0);
      small.cache().flush();
      long fh = small.open("/cls/a.jpg", false);
      assertThat(small.cache().index().openFiles()).isEqualTo(1);
      assertThat(HintFsReads.file(small, "/cls/b.jpg", 0)).isEqualTo(data[1]);
      small.cache().flush();
      assertThat(HintFsReads.file(small, "/cls/c.jpg", 0)).isEqualTo(data[2]);
      small.cache().flush();
      assertThat(small.cache().isCached(a)).as("evicted for c, LRU's victim").isFalse();
      JsonNode admin = HintFsReads.stats(small, 0).path("admin");
      assertThat(admin.path("evicted_while_open").asLong()).isEqualTo(1);
      assertThat(admin.path("open_files").asLong()).isEqualTo(1);
      long before = src.reads();
      assertThat(HintFsReads.whole(small, fh)).isEqualTo(data[0]);
      assertThat(src.reads() - before).as("a's read came from the disk").isZero();
      assertThat(small.cache().peek(a)).as("still stored while open").isEqualTo(data[0]);
      small.release(fh);
      small.cache().flush();
      assertThat(small.cache().index().openFiles()).isZero();
      assertThat(small.cache().peek(a)).as("deleted at its close").isNull();
      // Another open while its bytes wait for a close: served from them, no source read; the
      // deletion waits for the last of the two handles.
      long fb = small.open("/cls/b.jpg", false);
      HintFsReads.file(small, "/cls/c.jpg", 0);
      HintFsReads.file(small, "/cls/a.jpg", 0); // a in, b (LRU) out while open
      small.cache().flush();
      int b = small.resolve("/cls/b.jpg");
      assertThat(small.cache().isCached(b)).isFalse();
      long fb2 = small.open("/cls/b.jpg", false);
      before = src.reads();
      assertThat(HintFsReads.whole(small, fb2)).isEqualTo(data[1]);
      assertThat(HintFsReads.whole(small, fb)).isEqualTo(data[1]);
      assertThat(src.reads() - before).isZero();
      small.release(fb);
      small.cache().flush();
      assertThat(small.cache().peek(b)).as("one handle still open").isEqualTo(data[1]);
      small.release(fb2);
      small.cache().flush();
      assertThat(small.cache().peek(b)).isNull();
    } finally {
      small.close();
    }
  }

  @Test
  void aMissIsOneSourceRead_evenWhenTheCacheKeepsNothing() throws Exception {
    // No RAM tier and no disk tier: nothing the open's fetch brings in is kept. The read must
    // take that fetch's bytes, not go to the source a second time.
    org.hintfs.backing.FaultInjectingSource src =
        new org.hintfs.backing.FaultInjectingSource(new LocalDirSource(tmp.resolve("src")))
            .latency(50);
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt2"))
            .withCache(null, "100%")
            .withRamCache(0)
            .withUnits(100_000, 65_536);
    HintFs lean = Mount.create(src, Mount.listCatalog(src), cfg);
    try {
      long before = src.reads();
      long fh = lean.open("/cls/small.jpg", false);
      // The kernel's read comes after the open's fetch has finished (and kept nothing).
      long deadline = System.nanoTime() + 5_000_000_000L;
      while ((lean.cache().misses() < 1 || lean.missFetchesPending() > 0)
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(src.reads() - before).isEqualTo(1);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      assertThat(lean.read(fh, 0, 4096, out::write)).isEqualTo(3);
      assertThat(out.toByteArray()).containsExactly(1, 2, 3);
      lean.release(fh);
      assertThat(src.reads() - before).isEqualTo(1);
      assertThat(lean.cache().misses()).isEqualTo(1);
    } finally {
      lean.close();
    }
  }

  @Test
  void aFailedFetch_answersTheHandlesLaterReadsAtOnce_andCountsApartFromReaderErrors()
      throws Exception {
    org.hintfs.backing.FaultInjectingSource src =
        new org.hintfs.backing.FaultInjectingSource(new LocalDirSource(tmp.resolve("src")));
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt3"))
            .withCache(null, "100%")
            .withUnits(100_000, 65_536);
    HintFs down = Mount.create(src, Mount.listCatalog(src), cfg);
    try {
      src.down(true);
      long fh = down.open("/cls/small.jpg", false);
      // No read yet, so the open's background fetch runs it (a read that came first would run it
      // itself, and its reader be answered the error instead): it fails, counted as background
      // work, not as an error a reader was answered (the FUSE adapter records those in errors()).
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (down.backgroundErrors().snapshot().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(down.backgroundErrors().snapshot()).containsEntry("EIO", 1L);
      assertThat(down.errors().snapshot()).isEmpty();
      long tried = src.reads();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      assertThatThrownBy(() -> down.read(fh, 0, 4096, out::write)).isInstanceOf(IOException.class);
      // The kernel reads a failed page again: the handle answers with its error, no new fetch
      // (each would wait out the source's whole retry time).
      assertThatThrownBy(() -> down.read(fh, 0, 4096, out::write)).isInstanceOf(IOException.class);
      assertThat(src.reads()).isEqualTo(tried);
      down.release(fh);
      // A new open fetches anew, and the source is back.
      src.down(false);
      long fh2 = down.open("/cls/small.jpg", false);
      out.reset();
      assertThat(down.read(fh2, 0, 4096, out::write)).isEqualTo(3);
      down.release(fh2);
    } finally {
      down.close();
    }
  }

  /**
   * A missed open's fetch runs off the request thread, from a queue of a few threads: while it
   * waits there no fetch is in flight, yet its admission (and the evictions it makes) is still to
   * come. {@code missFetchesPending} counts it from its queueing to its admission.
   */
  @Test
  void missFetchesPending_countsQueuedFetchesUntilStored_whichFetchesInFlightDoesNot()
      throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src6/c"));
    for (int i = 0; i < 8; i++) {
      Files.write(root.resolve("f" + i + ".jpg"), new byte[] {(byte) i});
    }
    org.hintfs.backing.FaultInjectingSource src =
        new org.hintfs.backing.FaultInjectingSource(new LocalDirSource(root.getParent()))
            .latency(400);
    MountConfig cfg =
        MountConfig.defaults("x", tmp.resolve("mnt6"))
            .withCache(tmp.resolve("cache6"), "100%")
            .withRamCache(0);
    HintFs slow = Mount.create(src, Mount.listCatalog(src), cfg);
    try {
      List<Long> fhs = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        fhs.add(slow.open("/c/f" + i + ".jpg", false));
      }
      // Eight queued on four threads: at most four in flight, all eight pending.
      assertThat(slow.missFetchesPending()).isEqualTo(8);
      assertThat(slow.cache().fetchesInFlight()).isLessThanOrEqualTo(4);
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (slow.missFetchesPending() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(slow.missFetchesPending()).isZero();
      // Nothing pending means every one was fetched and stored.
      for (int i = 0; i < 8; i++) {
        assertThat(slow.cache().isCached(slow.resolve("/c/f" + i + ".jpg"))).as("f" + i).isTrue();
      }
      for (long fh : fhs) {
        slow.release(fh);
      }
    } finally {
      slow.close();
    }
  }
}
