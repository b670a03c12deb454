package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mount -t fuse.hintfs} and an {@code /etc/fstab} line, through util-linux's mount and the
 * {@code mount-scripts/mount.hintfs} helper installed as {@code /sbin/mount.fuse.hintfs} (root).
 */
class FstabIT {
  static final Path HELPER = Path.of("/sbin/mount.fuse.hintfs");
  static final Path FSTAB = Path.of("/etc/fstab");

  @TempDir Path tmp;
  Path src;
  Path mnt;
  boolean installedHelper;
  String fstabBefore;

  @BeforeEach
  void setUp() throws Exception {
    src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(3);
    for (int i = 0; i < 10; i++) {
      Path f = src.resolve("c" + (i % 2) + "/f" + i + ".jpg");
      Files.createDirectories(f.getParent());
      HostileTree.write(f, rnd, 5000 + i);
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    if (!Files.exists(HELPER, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      Files.createSymbolicLink(HELPER, Hintfs.ROOT.resolve("mount-scripts/mount.hintfs"));
      installedHelper = true;
    }
    fstabBefore = Files.exists(FSTAB) ? Files.readString(FSTAB, StandardCharsets.UTF_8) : null;
  }

  @AfterEach
  void tearDown() throws Exception {
    Hintfs.unmountQuietly(mnt);
    if (installedHelper) {
      Files.deleteIfExists(HELPER);
    }
    if (fstabBefore != null) {
      Files.writeString(FSTAB, fstabBefore, StandardCharsets.UTF_8);
    } else {
      Files.deleteIfExists(FSTAB);
    }
  }

  JsonNode stats() throws Exception {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }

  void assertServesAndUnmounts(String policy, Path cacheDir, boolean readOnly) throws Exception {
    assertThat(Hintfs.isMounted(mnt)).isTrue();
    for (int i = 0; i < 10; i++) {
      String f = "c" + (i % 2) + "/f" + i + ".jpg";
      assertThat(Files.readAllBytes(mnt.resolve(f))).isEqualTo(Files.readAllBytes(src.resolve(f)));
    }
    JsonNode s = stats();
    assertThat(s.path("policy").asText()).isEqualTo(policy);
    assertThat(s.path("cache_dir").asText()).isEqualTo(cacheDir.toString());
    assertThat(s.path("read_only").asBoolean()).as("read_only").isEqualTo(readOnly);
    long pid = s.path("pid").asLong();
    Hintfs.Result r = Hintfs.exec(List.of("umount", mnt.toString()), 60);
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(Hintfs.isMounted(mnt)).isFalse();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
      assertThat(System.nanoTime()).as("daemon %d still running", pid).isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  @Test
  void mountDashTFuseHintfsWithOptions() throws Exception {
    Path cache = tmp.resolve("cache-t");
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "mount",
                "-t",
                "fuse.hintfs",
                src.toString(),
                mnt.toString(),
                "-o",
                "cache_dir=" + cache + ",cache_size=50%,policy=lru,noatime,nofail"),
            120);
    assertThat(r.rc()).as(r.out()).isZero();
    assertServesAndUnmounts("lru", cache, false);
  }

  @Test
  void anFstabLineMountsWithMountMountpoint() throws Exception {
    Path cache = tmp.resolve("cache-fstab");
    String line =
        src + " " + mnt + " fuse.hintfs noauto,ro,cache_dir=" + cache + ",policy=lfu,_netdev 0 0\n";
    Files.writeString(
        FSTAB,
        (fstabBefore == null ? "" : fstabBefore + (fstabBefore.endsWith("\n") ? "" : "\n")) + line,
        StandardCharsets.UTF_8);
    Hintfs.Result r = Hintfs.exec(List.of("mount", mnt.toString()), 120);
    assertThat(r.rc()).as(r.out()).isZero();
    // fstab's ro is --read-only
    assertServesAndUnmounts("lfu", cache, true);
  }

  @Test
  void aBadOptionIsOneClearLine() throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of("mount", "-t", "fuse.hintfs", src.toString(), mnt.toString(), "-o", "policy="),
            60);
    assertThat(r.rc()).isNotZero();
    assertThat(r.out()).contains("mount.hintfs: option policy needs a value");
    r =
        Hintfs.exec(
            List.of(
                "mount", "-t", "fuse.hintfs", src.toString(), mnt.toString(), "-o", "policy=mru"),
            60);
    assertThat(r.rc()).isNotZero();
    assertThat(r.out()).contains("hintfs: unknown policy");
    assertThat(Hintfs.isMounted(mnt)).isFalse();
  }
}
