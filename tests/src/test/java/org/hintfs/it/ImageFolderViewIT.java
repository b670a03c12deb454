package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.hintfs.policy.ImageFolderView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ImageFolderView against real torchvision (/usr/bin/python3) on hostile trees. */
class ImageFolderViewIT {
  static final Path SCRIPT = Hintfs.ROOT.resolve("tests/src/test/python/imagefolder_samples.py");

  @TempDir Path tmp;

  private void assertSameAsTorchvision(Path src, String root) throws Exception {
    Catalog cat = Mount.listCatalog(new LocalDirSource(src));
    ImageFolderView view = ImageFolderView.build(cat, cat.lookup(root));
    Hintfs.Result r =
        Hintfs.exec(
            List.of("/usr/bin/python3", SCRIPT.toString(), src.resolve(root).toString()), 300);
    assertThat(r.rc()).as(r.out()).isZero();
    JsonNode want = new ObjectMapper().readTree(r.out().strip().lines().reduce((a, b) -> b).get());
    List<String> classes = new ArrayList<>();
    for (int c = 0; c < view.classes(); c++) {
      classes.add(view.className(c));
    }
    List<String> wantClasses = new ArrayList<>();
    want.path("classes").forEach(n -> wantClasses.add(n.asText()));
    assertThat(classes).isEqualTo(wantClasses);
    List<String> got = new ArrayList<>();
    for (int i = 0; i < view.samples(); i++) {
      String p = cat.path(view.node(i)).substring(root.length() + 1);
      got.add(p + " -> " + view.classOf(i));
    }
    List<String> expected = new ArrayList<>();
    want.path("samples").forEach(n -> expected.add(n.get(0).asText() + " -> " + n.get(1).asInt()));
    assertThat(got).containsExactlyElementsOf(expected);
  }

  @Test
  void matchesTorchvisionOnTheHostileTree() throws Exception {
    assertSameAsTorchvision(HostileTree.create(tmp, 7), "train");
  }

  @Test
  void matchesTorchvisionWhereOsWalkOrderIsNotDepthFirst() throws Exception {
    // sorted(os.walk()) sorts whole path strings: "a b" < "a/x" < "a0" < "a\uFF21" <
    // "a\uD83D\uDE00".
    Path src = Files.createDirectories(tmp.resolve("walk"));
    Random rnd = new Random(1);
    for (String d :
        List.of(
            "k/a",
            "k/a/x",
            "k/a/x/y",
            "k/a b",
            "k/a0",
            "k/a-",
            "k/a\uFF21",
            "k/a\uD83D\uDE00",
            "k/B",
            "j",
            "j/Z",
            "j/z",
            "\u00e9",
            "E")) {
      Path dir = Files.createDirectories(src.resolve(d));
      for (String f : List.of("1.jpg", "b.PNG", "A.Tiff", "\uD83D\uDE00.jpeg", "z.txt")) {
        HostileTree.write(dir.resolve(f), rnd, 10);
      }
    }
    assertSameAsTorchvision(src.getParent(), "walk");
  }
}
