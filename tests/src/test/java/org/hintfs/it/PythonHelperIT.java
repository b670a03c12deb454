package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python helper's own tests (mount-scripts/tests, pytest from Debian's python3-pytest): each
 * against a real mount, and a pip install into a fresh venv. Run here so the README's one test
 * command covers them.
 */
class PythonHelperIT {
  @TempDir Path tmp;

  @Test
  void pytestPasses_andLeavesNoMountBehind() throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "/usr/bin/python3",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--basetemp",
                tmp.resolve("pytest").toString(),
                Hintfs.ROOT.resolve("mount-scripts/tests").toString()),
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).contains("11 passed");
    // Every mount the tests made is gone (a test that left Hints open once kept its daemon).
    assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain(tmp.toString());
  }
}
