package org.hintfs.fs.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.hintfs.backing.SourceObject;
import org.junit.jupiter.api.Test;

class CatalogTest {

  private static Catalog of(String... files) {
    CatalogBuilder b = new CatalogBuilder();
    for (String f : files) {
      b.add(SourceObject.file(f, f.length(), "v-" + f, 1000));
    }
    return b.build();
  }

  private static List<String> names(Catalog c, int dir) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < c.childCount(dir); i++) {
      out.add(c.name(c.child(dir, i)));
    }
    return out;
  }

  @Test
  void impliesParentDirectories_andResolvesEveryPath() {
    Catalog c = of("train/cat/1.jpg", "train/dog/2.jpg", "train/cat/deep/3.jpg", "README");
    // root, train, cat, dog, deep = 5 directories; 4 files
    assertThat(c.directoryCount()).isEqualTo(5);
    assertThat(c.fileCount()).isEqualTo(4);
    int id = c.lookup("/train/cat/deep/3.jpg");
    assertThat(id).isPositive();
    assertThat(c.path(id)).isEqualTo("train/cat/deep/3.jpg");
    assertThat(c.size(id)).isEqualTo("train/cat/deep/3.jpg".length());
    assertThat(c.versionTag(id)).isEqualTo("v-train/cat/deep/3.jpg");
    assertThat(c.isDirectory(c.lookup("train/cat"))).isTrue();
    assertThat(c.lookup("train/cow")).isEqualTo(-1);
    assertThat(c.lookup("README/x")).isEqualTo(-1);
    assertThat(c.lookup("/")).isEqualTo(Catalog.ROOT);
    assertThat(c.lookup("//train//cat/")).isEqualTo(c.lookup("train/cat"));
  }

  @Test
  void childrenAreInCodePointOrder_notUtf16Order() {
    // U+FF21 (fullwidth A) sorts before U+1F600 (emoji) by code point, as Python's sorted() does;
    // Java's String.compareTo puts the emoji first (its surrogate 0xD83D < 0xFF21).
    String fullwidth = "\uFF21.jpg";
    String emoji = "\uD83D\uDE00.jpg";
    Catalog c = of("d/" + emoji, "d/" + fullwidth, "d/b.jpg", "d/B.jpg", "d/a.jpg");
    assertThat(names(c, c.lookup("d")))
        .containsExactly("B.jpg", "a.jpg", "b.jpg", fullwidth, emoji);
    assertThat(c.lookup("d/" + emoji)).isPositive();
  }

  /**
   * An ASCII name is compared char by char with the stored UTF-8 bytes, any other name by its
   * bytes: both must find exactly the names there are, among neighbours of either kind and of every
   * prefix length (a name is a prefix of the next: "a" < "a.jpg" < "a\u00e9").
   */
  @Property(tries = 200)
  void lookupFindsExactlyTheNamesThereAre_asciiOrNot(
      @ForAll @Size(min = 1, max = 12) List<@StringLength(min = 1, max = 4) String> raw,
      @ForAll @StringLength(min = 1, max = 4) String probe) {
    Set<String> names = new HashSet<>();
    CatalogBuilder b = new CatalogBuilder();
    for (String r : raw) {
      String n = squeeze(r);
      names.add(n);
      b.add(SourceObject.file("d/" + n, 1, "t", 0));
    }
    Catalog c = b.build();
    for (String n : names) {
      int id = c.lookup("/d/" + n);
      assertThat(id).isPositive();
      assertThat(c.name(id)).isEqualTo(n);
    }
    String q = squeeze(probe);
    int id = c.lookup("d/" + q);
    assertThat(id >= 0).isEqualTo(names.contains(q));
  }

  /** A few chars on both sides of ASCII's end, so that names collide, nest and interleave. */
  private static String squeeze(String s) {
    char[] alphabet = {'a', 'b', '.', 'z', '~', '\u00e9', '\u00ff', '\u4e2d'};
    StringBuilder out = new StringBuilder();
    for (char ch : s.toCharArray()) {
      out.append(alphabet[ch % alphabet.length]);
    }
    return out.toString();
  }

  /**
   * The lookup table at ImageNet's shape: every path of 200 classes of 1,281 names that differ in a
   * digit or two finds its own entry, the same name under another directory is another entry, and a
   * name one char longer or shorter, or under a file, is none.
   */
  @Test
  void everyPathOfAnImageNetShapedTree_findsItsOwnEntry() {
    CatalogBuilder b = new CatalogBuilder();
    List<String> paths = new ArrayList<>();
    for (int k = 0; k < 200; k++) {
      String cls = String.format("n%08d", k);
      for (int i = 0; i < 1281; i++) {
        String p = cls + "/" + cls + "_" + i + ".JPEG";
        paths.add(p);
        b.add(SourceObject.file(p, i, "t", 0));
      }
      b.add(SourceObject.file(cls + "/same.JPEG", 1, "t", 0));
    }
    Catalog c = b.build();
    Set<Integer> ids = new HashSet<>();
    for (String p : paths) {
      int id = c.lookup(p);
      assertThat(id).isPositive();
      assertThat(c.path(id)).isEqualTo(p);
      ids.add(id);
    }
    assertThat(ids).hasSize(paths.size());
    assertThat(c.lookup("n00000001/same.JPEG")).isNotEqualTo(c.lookup("n00000002/same.JPEG"));
    assertThat(c.parent(c.lookup("n00000002/same.JPEG"))).isEqualTo(c.lookup("n00000002"));
    assertThat(c.lookup("n00000003/n00000003_12.JPE")).isEqualTo(-1);
    assertThat(c.lookup("n00000003/n00000003_12.JPEGG")).isEqualTo(-1);
    assertThat(c.lookup("n00000003/n00000004_12.JPEG")).isEqualTo(-1);
    assertThat(c.lookup("n00000003/same.JPEG/x")).isEqualTo(-1);
    assertThat(c.childNamed(c.lookup("n00000005"), "n00000005_7.JPEG"))
        .isEqualTo(c.lookup("/n00000005/n00000005_7.JPEG"));
    assertThat(c.childNamed(c.lookup("n00000005/same.JPEG"), "x")).isEqualTo(-1);
  }

  @Test
  void duplicateListingKeepsTheLaterEntry_andDirectoryWinsOverFile() {
    CatalogBuilder b = new CatalogBuilder();
    b.add(SourceObject.file("x/a", 1, "old", 0));
    b.add(SourceObject.file("x/a", 2, "new", 0));
    b.add(SourceObject.file("y", 5, "file", 0)); // S3 may hold both "y" and "y/z"
    b.add(SourceObject.file("y/z", 3, "z", 0));
    Catalog c = b.build();
    assertThat(c.size(c.lookup("x/a"))).isEqualTo(2);
    assertThat(c.versionTag(c.lookup("x/a"))).isEqualTo("new");
    assertThat(c.childCount(c.lookup("x"))).isEqualTo(1);
    assertThat(c.isDirectory(c.lookup("y"))).isTrue();
    assertThat(c.lookup("y/z")).isPositive();
    // the earlier "x/a" and the file "y" take no entry: root, x, y, x/a, y/z
    assertThat(c.entryCount()).isEqualTo(5);
    assertThat(c.directoryCount()).isEqualTo(3);
  }

  @Test
  void emptyDirectoriesAppear() {
    CatalogBuilder b = new CatalogBuilder();
    b.add(SourceObject.dir("empty/inner", 7_999));
    Catalog c = b.build();
    assertThat(c.isDirectory(c.lookup("empty/inner"))).isTrue();
    assertThat(c.childCount(c.lookup("empty/inner"))).isZero();
    assertThat(c.mtimeMillis(c.lookup("empty/inner"))).isEqualTo(7_000); // to the second
  }

  @Property(tries = 50)
  void everyListedFileResolvesToItself(
      @ForAll @Size(max = 60) List<@StringLength(min = 1, max = 6) String> parts) {
    Set<String> paths = new HashSet<>();
    CatalogBuilder b = new CatalogBuilder();
    for (int i = 0; i + 1 < parts.size(); i += 2) {
      String p = "d" + clean(parts.get(i)) + "/f" + clean(parts.get(i + 1));
      paths.add(p);
      b.add(SourceObject.file(p, i, "t" + i, 0));
    }
    Catalog c = b.build();
    assertThat(c.fileCount()).isEqualTo(paths.size());
    for (String p : paths) {
      int id = c.lookup(p);
      assertThat(id).isPositive();
      assertThat(c.path(id)).isEqualTo(p);
    }
  }

  private static String clean(String s) {
    return s.replace('/', '_').replace('\0', '_');
  }

  @Test
  void heapPerFileStaysSmall() {
    // 1,000 classes of 1,000 ImageNet-like names ("n01440764_10026.JPEG", 20 bytes) with a
    // 20-byte version tag: 24 bytes of arrays (4 each for parent, name start, tag start and mtime,
    // 8 for the size) + a bit for file or directory + 20 + 20 = ~64 bytes per file (the layout with
    // child ranges and millisecond times on every entry took 76), and the lookup table: 2^21 slots
    // of 4 bytes for 1,001,000 entries, ~8.4 bytes per file (4-8 at another count).
    CatalogBuilder b = new CatalogBuilder();
    for (int k = 0; k < 1000; k++) {
      for (int i = 0; i < 1000; i++) {
        String cls = String.format("n%08d", k);
        b.add(
            SourceObject.file(
                cls + "/" + cls + "_" + (10000 + i) + ".JPEG", 110_000, "tag-0123456789abcdef", 0));
      }
    }
    Catalog c = b.build();
    double perFile = (double) c.heapBytes() / c.fileCount();
    assertThat(perFile).isBetween(72.4, 72.7);
  }

  @Test
  void savesAndLoadsItself_andRefusesDamageOrAnotherSource(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
    Catalog c = of("a/\u00fc.jpg", "a/b/c.jpg", "d.txt");
    java.nio.file.Path f = tmp.resolve("catalog.bin");
    c.save(f, "dir:/x");
    Catalog l = Catalog.load(f, "dir:/x");
    assertThat(l.entryCount()).isEqualTo(c.entryCount());
    for (int i = 0; i < c.entryCount(); i++) {
      assertThat(l.path(i)).isEqualTo(c.path(i));
      assertThat(l.size(i)).isEqualTo(c.size(i));
      assertThat(l.versionTag(i)).isEqualTo(c.versionTag(i));
      assertThat(l.isDirectory(i)).isEqualTo(c.isDirectory(i));
      assertThat(l.childCount(i)).isEqualTo(c.childCount(i));
      assertThat(l.mtimeMillis(i)).isEqualTo(c.mtimeMillis(i));
    }
    assertThat(l.fingerprint()).isEqualTo(c.fingerprint());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Catalog.load(f, "dir:/y"))
        .hasMessageContaining("lists dir:/x");
    byte[] b = java.nio.file.Files.readAllBytes(f);
    b[b.length / 2] ^= 1;
    java.nio.file.Files.write(f, b);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Catalog.load(f, "dir:/x"))
        .hasMessageContaining("damaged");
    java.nio.file.Files.write(f, new byte[] {'H', 'F', 'C', '1', 0, 0}); // the layout before
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Catalog.load(f, "dir:/x"))
        .hasMessageContaining("saved by an older hintfs");
  }

  @Test
  void keepsTheSourcesModesAndOwners_throughASaveAndLoad(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
    CatalogBuilder b = new CatalogBuilder();
    b.add(SourceObject.dir("a", 0).withOwner(0750, 1000, 100));
    b.add(SourceObject.file("a/x.jpg", 1, "t", 0).withOwner(0100600, 1000, 100)); // type bits go
    b.add(SourceObject.file("a/y.jpg", 1, "t", 0).withOwner(0644, 0, 0));
    b.add(SourceObject.file("z.jpg", 1, "t", 0)); // none: the mount's defaults
    Catalog c = b.build();
    java.nio.file.Path f = tmp.resolve("catalog.bin");
    c.save(f, "dir:/x");
    for (Catalog k : List.of(c, Catalog.load(f, "dir:/x"))) {
      Owners o = k.owners();
      int x = k.lookup("a/x.jpg");
      assertThat(o.has(x)).isTrue();
      assertThat(o.mode(x)).isEqualTo(0600);
      assertThat(o.uid(x)).isEqualTo(1000);
      assertThat(o.gid(x)).isEqualTo(100);
      assertThat(o.mode(k.lookup("a"))).isEqualTo(0750);
      assertThat(o.uid(k.lookup("a/y.jpg"))).isZero();
      assertThat(o.has(k.lookup("z.jpg"))).isFalse();
      assertThat(o.has(Catalog.ROOT)).isFalse(); // implied by its files, never listed
    }
    assertThat(of("p/q.jpg").owners()).isNull(); // an object store's listing
  }

  @Test
  void timesAreKeptToTheSecond_unsigned_andClamped() {
    CatalogBuilder b = new CatalogBuilder();
    b.add(SourceObject.file("a", 1, "t", 1_700_000_000_999L));
    b.add(SourceObject.file("b", 1, "t", 4_000_000_000_000L)); // 2096: past a signed int
    b.add(SourceObject.file("c", 1, "t", -5_000L));
    b.add(SourceObject.file("d", 1, "t", Long.MAX_VALUE));
    Catalog c = b.build();
    assertThat(c.mtimeMillis(c.lookup("a"))).isEqualTo(1_700_000_000_000L);
    assertThat(c.mtimeMillis(c.lookup("b"))).isEqualTo(4_000_000_000_000L);
    assertThat(c.mtimeMillis(c.lookup("c"))).isZero();
    assertThat(c.mtimeMillis(c.lookup("d"))).isEqualTo(0xFFFF_FFFFL * 1000);
  }
}
