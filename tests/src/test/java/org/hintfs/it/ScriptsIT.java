package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scripts a new user runs first print no terminal escapes into a pipe or a log, and keep
 * Maven's exit status. Debian's Maven 3.8 writes ESC[0m even with -B; a stand-in mvn that does the
 * same (and fails or not) is put first on PATH, and the real setup.sh builds with it.
 */
class ScriptsIT {
  @TempDir Path tmp;

  Hintfs.Result setupWithMvnExiting(int rc) throws Exception {
    Path bin = Files.createDirectories(tmp.resolve("bin" + rc));
    Path mvn = bin.resolve("mvn");
    Files.writeString(
        mvn,
        "#!/bin/sh\nprintf '\\033[0m\\033[0mbuilt %s\\n' \"$*\"\nprintf '\\033[1;31mwarn\\033[0m\\n' >&2\nexit "
            + rc
            + "\n");
    Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
    return Hintfs.exec(
        List.of(Hintfs.ROOT.resolve("mount-scripts/setup.sh").toString()),
        Map.of("PATH", bin + ":" + System.getenv("PATH")),
        120);
  }

  @Test
  void setupsBuildOutputHasNoEscapes_andItsExitStatusIsMavens() throws Exception {
    Hintfs.Result ok = setupWithMvnExiting(0);
    assertThat(ok.rc()).as(ok.out()).isZero();
    assertThat(ok.out()).contains("built -B -q -DskipTests package").contains("warn");
    assertThat(ok.out()).doesNotContain("\u001b");
    Hintfs.Result failed = setupWithMvnExiting(3);
    assertThat(failed.rc()).as(failed.out()).isEqualTo(3);
    assertThat(failed.out()).contains("built").doesNotContain("\u001b");
  }
}
