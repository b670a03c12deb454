package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Substitution through a real mount, read by a real PyTorch DataLoader. */
class SubstitutionIT {
  static final Path CHECK = Hintfs.ROOT.resolve("tests/src/test/python/substitution_check.py");
  static final Path MAKE = Hintfs.ROOT.resolve("mount-scripts/make_demo_dataset.py");

  @TempDir Path tmp;
  Path mnt;

  @AfterEach
  void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  @Test
  void everySubstituteIsARealFileOfTheRequestedClass_andDecodes() throws Exception {
    Path src = tmp.resolve("src");
    Hintfs.Result made =
        Hintfs.exec(
            List.of("/usr/bin/python3", MAKE.toString(), src.toString(), "--per-class", "40"), 300);
    assertThat(made.rc()).as(made.out()).isZero();
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    // 400 train + 100 test PNGs; a cache of 15% holds a fraction of them.
    Hintfs.mount(src, mnt, "--cache-size", "15%");
    Hintfs.Result r =
        Hintfs.exec(
            List.of("/usr/bin/python3", CHECK.toString(), mnt.toString(), src.toString(), "3"),
            600);
    assertThat(r.rc()).as(r.out()).isZero();
    JsonNode n = new ObjectMapper().readTree(r.out().strip().lines().reduce((a, b) -> b).get());
    assertThat(n.path("reads").asInt()).isEqualTo(3 * 400);
    // Substitution happened, and every one the mount counted was seen by the reader as another
    // file's bytes (of the right class: the script asserts that for every read).
    assertThat(n.path("substituted").asInt()).isPositive();
    assertThat(n.path("stats_substitutions").asInt()).isEqualTo(n.path("substituted").asInt());
    assertThat(n.path("policy").asText()).isEqualTo("impact");
  }
}
