package org.hintfs.fs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layering the root package's documentation states, checked on the sources: a package of {@code
 * org.hintfs.fs} names (imports or spells out) only packages below it, and the root package holds
 * only the few types every layer shares.
 */
class LayersTest {
  /** Top to bottom, as in {@code package-info.java} and ARCHITECTURE.md. */
  static final List<String> LAYERS =
      List.of(
          "cli",
          "fuse",
          "mount",
          "metrics",
          "serve",
          "virtual",
          "admin",
          "prefetch",
          "control",
          "stream",
          "cluster",
          "store",
          "catalog",
          "concurrent");

  static final Path MAIN = Path.of("src/main/java/org/hintfs/fs");
  static final Pattern NAMED = Pattern.compile("\\borg\\.hintfs\\.fs\\.([a-z]+)\\.");

  /** Every upward reference in the sources under {@code main}, as "FILE: a -> b". */
  static List<String> upwardReferences(Path main) throws IOException {
    List<String> wrong = new ArrayList<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Path rel = main.relativize(f);
        if (rel.getNameCount() < 2) {
          continue; // the root package: checked below
        }
        String pkg = rel.getName(0).toString();
        int level = LAYERS.indexOf(pkg);
        assertThat(level).as("%s is in no layer of LAYERS", pkg).isNotNegative();
        Matcher m = NAMED.matcher(Files.readString(f));
        while (m.find()) {
          int to = LAYERS.indexOf(m.group(1));
          if (to >= 0 && to < level) {
            wrong.add(rel + ": " + pkg + " -> " + m.group(1));
          }
        }
      }
    }
    return wrong;
  }

  @Test
  void everyPackageNamesOnlyPackagesBelowIt() throws IOException {
    assertThat(upwardReferences(MAIN)).isEmpty();
  }

  @Test
  void anUpwardImportIsCaught(@org.junit.jupiter.api.io.TempDir Path tmp) throws IOException {
    Path store = Files.createDirectories(tmp.resolve("store"));
    Files.writeString(
        store.resolve("Bad.java"),
        "package org.hintfs.fs.store;\nimport org.hintfs.fs.serve.HintFs;\nclass Bad {}\n");
    Files.writeString(
        store.resolve("Fine.java"),
        "package org.hintfs.fs.store;\nimport org.hintfs.fs.catalog.Catalog;\nclass Fine {}\n");
    assertThat(upwardReferences(tmp)).containsExactly("store/Bad.java: store -> serve");
  }

  @Test
  void theRootPackageHoldsOnlyWhatEveryLayerShares() throws IOException {
    try (Stream<Path> files = Files.list(MAIN)) {
      assertThat(
              files
                  .filter(p -> p.toString().endsWith(".java"))
                  .map(p -> p.getFileName().toString())
                  .sorted()
                  .toList())
          .containsExactly(
              "Errno.java", "MountConfig.java", "Sizes.java", "Version.java", "package-info.java");
    }
  }
}
