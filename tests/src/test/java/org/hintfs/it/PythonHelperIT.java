package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Python helper's own tests (mount-scripts/tests, pytest from Debian's python3-pytest): each
 * against a real mount, and a pip install into a fresh venv. Run here so the README's one test
 * command covers them.
 */
class PythonHelperIT {
  @Test
  void pytestPasses() throws Exception {
    Hintfs.Result r =
        Hintfs.exec(
            List.of(
                "/usr/bin/python3",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                Hintfs.ROOT.resolve("mount-scripts/tests").toString()),
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).contains("8 passed");
  }
}
