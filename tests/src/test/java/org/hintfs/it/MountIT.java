package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/** A real mount of a hostile directory tree through /dev/fuse, driven by the real launcher. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MountIT {
  @TempDir static Path tmp;
  static Path src;
  static Path mnt;

  @BeforeAll
  static void mount() throws Exception {
    src = HostileTree.create(tmp, 42);
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mount(src, mnt);
  }

  @AfterAll
  static void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  /** Every path under a root, relative, with the symlink cycle left out (as hintfs leaves it). */
  private static TreeMap<String, Path> walk(Path root) throws Exception {
    TreeMap<String, Path> out = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      s.forEach(p -> out.put(root.relativize(p).toString(), p));
    }
    return out;
  }

  @Test
  @Order(1)
  void everyFileMatchesByteForByte_andStatFieldsAgree() throws Exception {
    TreeMap<String, Path> m = walk(mnt);
    // The source walked without following links, plus what the links lead to: compare against a
    // walk of the source that follows links but stops at the cycle (other/loop).
    TreeMap<String, Path> s = new TreeMap<>();
    Files.walkFileTree(
        src,
        java.util.EnumSet.of(java.nio.file.FileVisitOption.FOLLOW_LINKS),
        Integer.MAX_VALUE,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult preVisitDirectory(
              Path d, java.nio.file.attribute.BasicFileAttributes a) {
            s.put(src.relativize(d).toString(), d);
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFile(
              Path f, java.nio.file.attribute.BasicFileAttributes a) {
            s.put(src.relativize(f).toString(), f);
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFileFailed(Path f, java.io.IOException e) {
            return java.nio.file.FileVisitResult.CONTINUE;
          }
        });
    assertThat(m.keySet()).isEqualTo(s.keySet());
    assertThat(m)
        .containsKeys("train/日本 語/ü.jpg", "train/linked/o1.jpg", "train/cat/\uD83D\uDE00.jpg");
    for (String rel : m.keySet()) {
      Path mp = m.get(rel);
      Path sp = s.get(rel);
      PosixFileAttributes ma =
          Files.readAttributes(mp, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      PosixFileAttributes sa = Files.readAttributes(sp, PosixFileAttributes.class);
      assertThat(ma.isDirectory()).as(rel).isEqualTo(sa.isDirectory());
      assertThat(ma.isRegularFile()).as(rel).isEqualTo(sa.isRegularFile());
      if (ma.isRegularFile()) {
        assertThat(ma.size()).as(rel).isEqualTo(sa.size());
        // A directory source's modes and owners show through (docs/SEMANTICS.md).
        assertThat(ma.permissions()).as(rel).isEqualTo(sa.permissions());
        assertThat(ma.owner()).as(rel).isEqualTo(sa.owner());
        // Times are kept to the second (docs/SEMANTICS.md).
        assertThat(ma.lastModifiedTime().toMillis())
            .as(rel)
            .isEqualTo(sa.lastModifiedTime().to(java.util.concurrent.TimeUnit.SECONDS) * 1000);
        assertThat(Arrays.equals(Files.readAllBytes(mp), Files.readAllBytes(sp))).as(rel).isTrue();
      } else {
        assertThat(ma.permissions()).as(rel).isEqualTo(sa.permissions());
      }
    }
  }

  @Test
  @Order(2)
  void readdirListsChildren_andHidesTheReservedDirectory() throws Exception {
    try (Stream<Path> s = Files.list(mnt)) {
      assertThat(s.map(p -> p.getFileName().toString()).sorted())
          .containsExactly("big.bin", "other", "train");
    }
    try (Stream<Path> s = Files.list(mnt.resolve("train"))) {
      assertThat(s.map(p -> p.getFileName().toString()).sorted())
          .containsExactly(".hidden_class", "cat", "dog", "linked", "日本 語");
    }
    assertThat(Files.isDirectory(mnt.resolve(".hintfs"))).isTrue();
    try (Stream<Path> s = Files.list(mnt.resolve(".hintfs"))) {
      assertThat(s).isEmpty();
    }
    JsonNode stats = new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
    assertThat(stats.path("files").asInt()).isEqualTo(34);
    assertThat(stats.path("source").asText()).isEqualTo("dir:" + src);
  }

  @Test
  @Order(3)
  void readsAtOddOffsetsAndSizes_acrossA20MbFile() throws Exception {
    byte[] want = Files.readAllBytes(src.resolve("big.bin"));
    Random rnd = new Random(7);
    try (RandomAccessFile f = new RandomAccessFile(mnt.resolve("big.bin").toFile(), "r")) {
      assertThat(f.length()).isEqualTo(20_000_000);
      for (int i = 0; i < 300; i++) {
        long off = i == 0 ? want.length - 3 : rnd.nextInt(want.length);
        int len = 1 + rnd.nextInt(i % 3 == 0 ? 3_000_000 : 5_000);
        byte[] got = new byte[len];
        f.seek(off);
        int n = f.read(got);
        int expect = (int) Math.min(len, want.length - off);
        int total = Math.max(n, 0);
        while (total < expect) {
          int r = f.read(got, total, expect - total);
          if (r < 0) {
            break;
          }
          total += r;
        }
        assertThat(total).isEqualTo(expect);
        assertThat(Arrays.equals(got, 0, expect, want, (int) off, (int) off + expect))
            .as("offset %d len %d", off, len)
            .isTrue();
      }
      f.seek(want.length);
      assertThat(f.read()).isEqualTo(-1);
    }
  }

  @Test
  @Order(4)
  void sixteenConcurrentReadersGetTheRightBytes() throws Exception {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(mnt.resolve("train"))) {
      s.filter(Files::isRegularFile).forEach(files::add);
    }
    files.add(mnt.resolve("big.bin"));
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<Integer>> futures = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        int seed = t;
        futures.add(
            pool.submit(
                () -> {
                  List<Path> order = new ArrayList<>(files);
                  java.util.Collections.shuffle(order, new Random(seed));
                  int checked = 0;
                  for (Path p : order) {
                    byte[] got = Files.readAllBytes(p);
                    byte[] want = Files.readAllBytes(src.resolve(mnt.relativize(p).toString()));
                    assertThat(Arrays.equals(got, want)).as(p.toString()).isTrue();
                    checked++;
                  }
                  return checked;
                }));
      }
      for (Future<Integer> f : futures) {
        assertThat(f.get()).isEqualTo(files.size());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  @Order(4)
  void directReadsThatSpanTwoCacheBlocks_getEveryByte() throws Exception {
    // Files over 8 MiB are cached in 8 MiB blocks. O_DIRECT reads reach hintfs at the reader's
    // offsets (page-cache reads may never straddle a block): one read, two blocks, every byte.
    byte[] want = Files.readAllBytes(src.resolve("big.bin"));
    int block = 8 << 20;
    ByteBuffer buf = ByteBuffer.allocateDirect(256 << 10).alignedSlice(64 << 10);
    try (FileChannel ch =
        FileChannel.open(
            mnt.resolve("big.bin"),
            StandardOpenOption.READ,
            com.sun.nio.file.ExtendedOpenOption.DIRECT)) {
      for (int b = 1; b * block < want.length; b++) {
        for (int before : new int[] {4096, 65536, 126976}) {
          long off = (long) b * block - before;
          buf.clear().limit(128 << 10);
          int n = ch.read(buf, off);
          assertThat(n).as("offset %d", off).isEqualTo(128 << 10);
          byte[] got = new byte[n];
          buf.flip().get(got);
          assertThat(Arrays.equals(got, 0, n, want, (int) off, (int) off + n))
              .as("a read at %d, %d bytes before block %d", off, before, b)
              .isTrue();
        }
      }
    }
  }

  @Test
  @Order(5)
  void writesAreRefusedWithErofs() {
    Path f = mnt.resolve("train/cat/1.jpg");
    for (ThrowingRunnable op :
        List.<ThrowingRunnable>of(
            () -> Files.write(f, new byte[] {1}),
            () -> Files.newOutputStream(f, StandardOpenOption.APPEND).close(),
            () -> Files.createFile(mnt.resolve("train/new.jpg")),
            () -> Files.createDirectory(mnt.resolve("newdir")),
            () -> Files.delete(f),
            () -> Files.move(f, mnt.resolve("train/moved.jpg")),
            () -> Files.setLastModifiedTime(f, java.nio.file.attribute.FileTime.fromMillis(1)),
            () -> Files.createSymbolicLink(mnt.resolve("l"), f))) {
      assertThatThrownBy(op::run)
          .isInstanceOf(FileSystemException.class)
          .hasMessageContaining("Read-only file system");
    }
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  @Order(6)
  void statusPrintsTheMount() throws Exception {
    Hintfs.Result r = Hintfs.run("status", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).contains("dir:" + src).contains("34 in");
    // The daemon's release and the commit it was built from: this build's.
    assertThat(r.out())
        .containsPattern(
            "(?m)^version:\\s+"
                + java.util.regex.Pattern.quote(org.hintfs.fs.Version.describe())
                + "$");
    Hintfs.Result j = Hintfs.run("status", "--json", mnt.toString());
    JsonNode n = new ObjectMapper().readTree(j.out());
    assertThat(n.path("version").asText()).isEqualTo(org.hintfs.fs.Version.VERSION);
    assertThat(n.path("commit").asText()).isEqualTo(org.hintfs.fs.Version.COMMIT);
    assertThat(n.path("errors").path("EROFS").asLong()).isGreaterThanOrEqualTo(8);
    assertThat(n.path("bytes_read").asLong()).isGreaterThan(20_000_000);
  }

  @Test
  @Order(7)
  void unmountLeavesNoMountAndNoDaemon() throws Exception {
    assertThat(Hintfs.daemonsFor(mnt)).hasSize(1);
    Hintfs.Result r = Hintfs.run("unmount", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(Hintfs.isMounted(mnt)).isFalse();
    assertThat(Hintfs.daemonsFor(mnt)).isEmpty();
    try (Stream<Path> s = Files.list(mnt)) {
      assertThat(s).isEmpty();
    }
  }
}
