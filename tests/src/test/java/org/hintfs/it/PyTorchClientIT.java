package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real PyTorch client (Debian's python3-torch, /usr/bin/python3) reading through the mount. */
class PyTorchClientIT {
  static final String PYTHON = "/usr/bin/python3";
  static final Path SCRIPT = Hintfs.ROOT.resolve("tests/src/test/python/imagefolder_check.py");

  @TempDir static Path tmp;
  static Path src;
  static Path mnt;

  @BeforeAll
  static void mount() throws Exception {
    src = HostileTree.create(tmp, 1234);
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Hintfs.mount(src, mnt);
  }

  @AfterAll
  static void unmount() {
    Hintfs.unmountQuietly(mnt);
  }

  @Test
  void imageFolderOnTheMountEqualsTheSource_andADataLoaderReadsItAll() throws Exception {
    List<String> cmd = new ArrayList<>(List.of(PYTHON, SCRIPT.toString()));
    cmd.add(mnt.resolve("train").toString());
    cmd.add(src.resolve("train").toString());
    Hintfs.Result r = Hintfs.exec(cmd, 600);
    assertThat(r.rc()).as(r.out()).isZero();
    String last = r.out().strip().lines().reduce((a, b) -> b).orElseThrow();
    JsonNode n = new ObjectMapper().readTree(last);
    // Classes in code-point order, the hidden one and the symlinked one included.
    assertThat(n.path("classes").toString())
        .isEqualTo("[\".hidden_class\",\"cat\",\"dog\",\"linked\",\"日本 語\"]");
    // cat: 19 files less notes.txt = 18 samples; dog 9; .hidden_class 1; 日本 語 2; linked 2.
    assertThat(n.path("samples").asInt()).isEqualTo(32);
    assertThat(n.path("loaded").asInt()).isEqualTo(32);
  }
}
