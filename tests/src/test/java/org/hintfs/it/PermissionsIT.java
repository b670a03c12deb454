package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may read what on a shared node, checked as another local user ({@code nobody}, through
 * setpriv): the cache directory and its files are the mounting user's alone, whatever the umask the
 * mount was started with; through an {@code allow_other} mount a directory source's modes hold, an
 * S3 source's files are the mounting user's unless {@code --file-mode} shares them, and the mount's
 * hints and state ({@code .hintfs}) are its owner's.
 *
 * <p>Every path down to the files is made enterable by others (a JUnit temp dir is 0700), and a
 * sanity read shows that {@code nobody} reads what it may: a refusal below is the mount's or the
 * cache's, not the test tree's.
 */
class PermissionsIT {
  @TempDir static Path tmp;
  static Path src;
  static Path privateFile;
  static S3ProxyServer s3;
  final List<Path> mounts = new ArrayList<>();

  static final int NOBODY = 65534;

  @BeforeAll
  static void dataset() throws Exception {
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    src = Files.createDirectories(tmp.resolve("src/train/c0"));
    Random r = new Random(11);
    for (int i = 0; i < 3; i++) {
      byte[] b = new byte[30_000 + i];
      r.nextBytes(b);
      Files.write(src.resolve("img_" + i + ".jpg"), b);
    }
    src = tmp.resolve("src");
    for (Path d : List.of(src, src.resolve("train"), src.resolve("train/c0"))) {
      Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    s3 = new S3ProxyServer(tmp).start();
    s3.upload("train", "perm/", src); // before the private file: S3 keeps no modes anyway
    privateFile = Files.write(src.resolve("train/c0/private.jpg"), new byte[] {7, 7, 7});
    Files.setPosixFilePermissions(privateFile, PosixFilePermissions.fromString("rw-------"));
    try (Stream<Path> all = Files.walk(src)) {
      for (Path f : all.filter(Files::isRegularFile).toList()) {
        if (!f.equals(privateFile)) {
          Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        }
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  @AfterEach
  void unmount() {
    mounts.forEach(Hintfs::unmountQuietly);
  }

  /** {@code cmd} run as {@code nobody} (uid and gid 65534, no supplementary groups). */
  static Hintfs.Result asNobody(String... cmd) throws Exception {
    List<String> all =
        new ArrayList<>(
            List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--"));
    all.addAll(List.of(cmd));
    return Hintfs.exec(all, 60);
  }

  static int mode(Path p) throws IOException {
    return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
  }

  private Path mountpoint(String name) throws IOException {
    Path mnt = Files.createDirectories(tmp.resolve(name));
    mounts.add(mnt);
    return mnt;
  }

  /** {@code hintfs mount} started with umask 000, as a careless shell or a container might. */
  private static void mountWithUmask0(Path source, Path mnt, Path cache) throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "sh",
                "-c",
                "umask 000 && exec \"$0\" \"$@\"",
                Hintfs.LAUNCHER.toString(),
                "mount",
                source.toString(),
                mnt.toString(),
                "--cache-dir",
                cache.toString()),
            180);
    assertThat(r.rc()).as(r.out()).isZero();
  }

  private static void readAll(Path mnt) throws IOException {
    try (Stream<Path> files = Files.walk(mnt.resolve("train"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        Files.readAllBytes(f);
      }
    }
  }

  private static void assertPrivate(Path cache) throws Exception {
    for (String name : List.of("data.mdb", "lock.mdb", "catalog.bin")) {
      Path f = cache.resolve(name);
      assertThat(f).exists();
      Hintfs.Result r = asNobody("cat", f.toString());
      assertThat(r.rc()).as("nobody read %s: %s", f, r.out()).isNotZero();
    }
    assertThat(asNobody("ls", cache.toString()).rc()).isNotZero();
    assertThat(String.format("%04o", mode(cache))).isEqualTo("0700");
    try (Stream<Path> entries = Files.list(cache)) {
      for (Path p : entries.toList()) {
        assertThat(mode(p) & 077).as("%s is %04o", p, mode(p)).isZero();
      }
    }
  }

  @Test
  void cacheFiles_areTheMountingUsersAlone_whateverTheUmask() throws Exception {
    Path probe = src.resolve("train/c0/img_0.jpg");
    assertThat(asNobody("cat", probe.toString()).rc()).as("the test tree is open").isZero();
    Path mnt = mountpoint("mnt-umask");
    Path cache = tmp.resolve("cache-umask");
    mountWithUmask0(src, mnt, cache);
    readAll(mnt);
    // pinned.txt: written by the daemon while it serves.
    Hintfs.Result pin = Hintfs.run("pin", mnt.resolve("train/c0/img_1.jpg").toString());
    assertThat(pin.rc()).as(pin.out()).isZero();
    Hintfs.unmountQuietly(mnt); // the writer has flushed every put
    assertThat(cache.resolve("pinned.txt")).exists();
    assertPrivate(cache);
  }

  @Test
  void anOpenCacheDir_isMadePrivateAtMount() throws Exception {
    Path cache = Files.createDirectories(tmp.resolve("cache-open"));
    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path old = Files.write(cache.resolve("left-by-an-older-mount"), new byte[] {1});
    Files.setPosixFilePermissions(old, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(asNobody("cat", old.toString()).rc()).as("open before the mount").isZero();
    Path mnt = mountpoint("mnt-open");
    Hintfs.mount(src, mnt, "--cache-dir", cache.toString());
    readAll(mnt);
    Hintfs.unmountQuietly(mnt);
    assertPrivate(cache);
    assertThat(String.format("%04o", mode(old))).isEqualTo("0600");
  }

  @Test
  void aPrivateSourceFile_isRefusedToOthers_throughAnAllowOtherMount() throws Exception {
    Path mnt = mountpoint("mnt-local");
    Hintfs.mount(src, mnt, "-o", "allow_other");
    Path priv = mnt.resolve("train/c0/private.jpg");
    Path pub = mnt.resolve("train/c0/img_0.jpg");
    assertThat(asNobody("cat", pub.toString()).rc()).as("nobody reads a 0644 file").isZero();
    Hintfs.Result r = asNobody("cat", priv.toString());
    assertThat(r.rc()).as("nobody read a 0600 file: %s", r.out()).isNotZero();
    assertThat(r.out()).contains("Permission denied");
    assertThat(Files.readAllBytes(priv)).containsExactly(7, 7, 7); // its owner (root) reads it
    // The mount shows the source's own modes and owners.
    assertThat(String.format("%04o", mode(priv))).isEqualTo("0600");
    assertThat(Files.getAttribute(priv, "unix:uid"))
        .isEqualTo(Files.getAttribute(privateFile, "unix:uid"));
  }

  @Test
  void anS3Source_isTheMountingUsersAlone_untilFileModeSharesIt() throws Exception {
    Path mnt = mountpoint("mnt-s3");
    Hintfs.Result m =
        Hintfs.runWithEnv(
            S3ProxyServer.credentialsEnv(),
            "mount",
            "s3://train/perm",
            mnt.toString(),
            "--endpoint",
            s3.endpoint(),
            "--cache-dir",
            tmp.resolve("cache-s3").toString(),
            "-o",
            "allow_other");
    assertThat(m.rc()).as(m.out()).isZero();
    Path f = mnt.resolve("train/c0/img_0.jpg");
    assertThat(Files.readAllBytes(f)).hasSize(30_000); // the mounting user reads
    Hintfs.Result r = asNobody("cat", f.toString());
    assertThat(r.rc()).as("nobody read an S3 object by default: %s", r.out()).isNotZero();
    assertThat(m.out()).contains("allow_other: files 0400, directories 0500").contains("only uid");
    Hintfs.unmountQuietly(mnt);

    Hintfs.mountS3(
        S3ProxyServer.credentialsEnv(),
        "s3://train/perm",
        mnt,
        "--endpoint",
        s3.endpoint(),
        "--cache-dir",
        tmp.resolve("cache-s3").toString(),
        "-o",
        "allow_other",
        "--file-mode",
        "0444");
    r = asNobody("cat", f.toString());
    assertThat(r.rc()).as("nobody reads with --file-mode 0444: %s", r.out()).isZero();
    assertThat(String.format("%04o", mode(f.getParent()))).isEqualTo("0555");
  }

  @Test
  void hintsAndTheMountsState_areItsOwners() throws Exception {
    Path mnt = mountpoint("mnt-hints");
    Hintfs.mount(src, mnt, "-o", "allow_other");
    Path control = mnt.resolve(".hintfs/control");
    Path stats = mnt.resolve(".hintfs/stats");
    Hintfs.Result w = asNobody("sh", "-c", "echo 'dataset train' > " + control);
    assertThat(w.rc()).as("nobody sent a hint: %s", w.out()).isNotZero();
    for (String name : List.of("stats", "errors", "cached")) {
      Hintfs.Result r = asNobody("cat", mnt.resolve(".hintfs/" + name).toString());
      assertThat(r.rc()).as("nobody read .hintfs/%s: %s", name, r.out()).isNotZero();
    }
    assertThat(asNobody("cat", mnt.resolve("train/c0/img_1.jpg").toString()).rc()).isZero();
    Hintfs.Result st = asNobody(Hintfs.LAUNCHER.toString(), "status", mnt.toString());
    assertThat(st.rc()).isNotZero();
    assertThat(st.out()).contains("only the mount's owner (uid 0) and root may read the status");
    Files.writeString(control, "dataset train\n"); // the owner (root) sends hints
    assertThat(Files.readString(stats)).contains("\"dataset\"");
  }
}
