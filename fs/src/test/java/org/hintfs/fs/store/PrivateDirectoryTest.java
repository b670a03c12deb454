package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrivateDirectoryTest {
  @TempDir Path tmp;

  static int mode(Path p) throws Exception {
    return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
  }

  @Test
  void createsTheDirectory0700_andTakesOthersBitsOffWhatIsInIt() throws Exception {
    Path dir = tmp.resolve("a/cache");
    PrivateDirectory.prepare(dir);
    assertThat(mode(dir)).isEqualTo(0700);

    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path f = Files.write(dir.resolve("data.mdb"), new byte[] {1});
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
    Path sub = Files.createDirectories(dir.resolve("sub"));
    Files.setPosixFilePermissions(sub, PosixFilePermissions.fromString("rwxrwxr-x"));
    PrivateDirectory.prepare(dir);
    assertThat(mode(dir)).isEqualTo(0700);
    assertThat(mode(f)).isEqualTo(0600);
    assertThat(mode(sub)).isEqualTo(0700);
  }

  @Test
  void anOpenDirectory_isRefused_onlyWhenItIsAnotherUsersAndWeAreNotRoot() {
    Path dir = Path.of("/ssd/cache");
    assertThat(PrivateDirectory.refusal(dir, 0700, 1000, 1001)).isNull(); // private already
    assertThat(PrivateDirectory.refusal(dir, 0755, 1000, 1000)).isNull(); // ours: made private
    assertThat(PrivateDirectory.refusal(dir, 0755, 1000, 0)).isNull(); // root may chmod it
    assertThat(PrivateDirectory.refusal(dir, 0750, 1000, 1001))
        .isEqualTo(
            "cache dir /ssd/cache (mode 0750, owner uid 1000) lets other users read the cache,"
                + " and only its owner can change that: run 'chmod 700 /ssd/cache' as its owner,"
                + " or give a --cache-dir of your own");
  }
}
