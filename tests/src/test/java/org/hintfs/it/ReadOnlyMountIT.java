package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --read-only}: a mount whose superblock is read-only. What it is for, through the real
 * kernel: a file read once is stat'ed again without a GETATTR (a writable mount's READ marks the
 * file's atime stale, and the next stat asks the daemon), counted in libfuse's {@code -d} log. What
 * it costs: the control file takes no writes, and the CLI says so in one line.
 */
class ReadOnlyMountIT {
  @TempDir static Path tmp;
  static Path src;
  Path mnt;

  @BeforeAll
  static void dataset() throws Exception {
    src = Files.createDirectories(tmp.resolve("src/train/c0"));
    Random r = new Random(7);
    for (int i = 0; i < 4; i++) {
      byte[] b = new byte[20_000 + i * 1_000];
      r.nextBytes(b);
      Files.write(src.resolve("img_" + i + ".jpg"), b);
    }
    src = tmp.resolve("src");
  }

  @AfterEach
  void unmount() {
    if (mnt != null) {
      Hintfs.unmountQuietly(mnt);
    }
  }

  /** Mounts with libfuse's request log; returns the log. */
  private Path mount(String name, String... extra) throws Exception {
    mnt = Files.createDirectories(tmp.resolve(name));
    Path log = tmp.resolve(name + ".log");
    String[] args = new String[extra.length + 3];
    args[0] = "--debug-fuse";
    args[1] = "--log-file";
    args[2] = log.toString();
    System.arraycopy(extra, 0, args, 3, extra.length);
    Hintfs.mount(src, mnt, args);
    return log;
  }

  private static long getattrs(Path log) throws Exception {
    return Files.readAllLines(log, StandardCharsets.ISO_8859_1).stream()
        .filter(l -> l.contains("opcode: GETATTR"))
        .count();
  }

  /** GETATTRs the stat of each file sends after the file has been read whole through the mount. */
  private long getattrsOfStatsAfterReads(Path log) throws Exception {
    long sent = 0;
    for (int i = 0; i < 4; i++) {
      String rel = "train/c0/img_" + i + ".jpg";
      assertThat(Files.readAllBytes(mnt.resolve(rel)))
          .as(rel)
          .isEqualTo(Files.readAllBytes(src.resolve(rel)));
      long before = getattrs(log);
      Files.readAttributes(mnt.resolve(rel), "unix:size");
      sent += getattrs(log) - before;
    }
    return sent;
  }

  private JsonNode stats() throws Exception {
    Hintfs.Result r = Hintfs.run("status", "--json", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    return new ObjectMapper().readTree(r.out());
  }

  @Test
  void aReadOnlyMount_servesEveryByte_andAFileReadOnceIsStatedWithoutAGetattr() throws Exception {
    // The kernel's rule this option answers: on a writable mount, each stat after a read asks.
    Path rwLog = mount("rw");
    assertThat(getattrsOfStatsAfterReads(rwLog)).as("writable mount").isEqualTo(4);
    assertThat(stats().path("read_only").asBoolean()).isFalse();
    assertThat(Hintfs.run("status", mnt.toString()).out()).doesNotContain("read-only");
    Hintfs.unmountQuietly(mnt);

    Path roLog = mount("ro", "--read-only");
    assertThat(getattrsOfStatsAfterReads(roLog)).as("read-only mount").isZero();
    assertThat(stats().path("read_only").asBoolean()).isTrue();
    assertThat(Hintfs.run("status", mnt.toString()).out())
        .contains("mounted:           read-only: the control file takes no hints or commands");
  }

  @Test
  void aReadOnlyMount_refusesControlWrites_andTheCliSaysWhyInOneLine() throws Exception {
    mount("ro-control", "-o", "ro");
    assertThatThrownBy(
            () -> Files.writeString(mnt.resolve(".hintfs/control"), "seed 1 epoch 0 world 1\n"))
        .isInstanceOf(FileSystemException.class)
        .hasMessageEndingWith("Read-only file system");
    Hintfs.Result r = Hintfs.run("prefetch", mnt.resolve("train/c0").toString());
    assertThat(r.rc()).isEqualTo(1);
    assertThat(r.out().strip())
        .isEqualTo(
            "hintfs: "
                + mnt
                + " is mounted read-only (--read-only): its control file takes no hints or"
                + " commands; mount it without --read-only to send them");
    // Reads and the stats file still work.
    assertThat(Files.readAllBytes(mnt.resolve("train/c0/img_0.jpg")))
        .isEqualTo(Files.readAllBytes(src.resolve("train/c0/img_0.jpg")));
    assertThat(stats().path("read_only").asBoolean()).isTrue();
  }
}
