package org.hintfs.backing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalDirSourceTest {
  @TempDir Path tmp;

  private List<SourceObject> list(LocalDirSource s) throws Exception {
    List<SourceObject> out = new ArrayList<>();
    s.list(out::add);
    return out;
  }

  private static List<String> files(List<SourceObject> objs) {
    return objs.stream().filter(o -> !o.directory()).map(SourceObject::path).sorted().toList();
  }

  @Test
  void followsDirectoryAndFileLinks_likeOsWalkWithFollowlinks() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path outside = Files.createDirectories(tmp.resolve("outside/real"));
    Files.write(outside.resolve("o.jpg"), new byte[] {1, 2, 3});
    Files.createDirectories(root.resolve("a"));
    Files.write(root.resolve("a/x.jpg"), new byte[] {9});
    Files.createSymbolicLink(root.resolve("linked"), outside);
    Files.createSymbolicLink(root.resolve("a/alias.jpg"), root.resolve("a/x.jpg"));
    Files.createSymbolicLink(root.resolve("a/broken.jpg"), tmp.resolve("nowhere"));
    // Two links to one directory: os.walk visits it twice, and so do we.
    Files.createSymbolicLink(root.resolve("linked2"), outside);

    List<SourceObject> objs = list(new LocalDirSource(root));
    assertThat(files(objs))
        .containsExactly("a/alias.jpg", "a/x.jpg", "linked/o.jpg", "linked2/o.jpg");
    assertThat(objs).anyMatch(o -> o.directory() && o.path().equals("linked"));
    assertThat(objs).anyMatch(o -> o.directory() && o.path().isEmpty());
  }

  @Test
  void skipsSymlinkCycles_insteadOfLooping() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.createDirectories(root.resolve("a/b"));
    Files.write(root.resolve("a/b/f.jpg"), new byte[] {1});
    Files.createSymbolicLink(root.resolve("a/b/up"), root.resolve("a")); // a/b/up -> a: a cycle
    Files.createSymbolicLink(root.resolve("self"), root);

    List<SourceObject> objs = list(new LocalDirSource(root));
    assertThat(files(objs)).containsExactly("a/b/f.jpg");
  }

  @Test
  void readsRanges_andRefusesAChangedFile() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path f = root.resolve("f.bin");
    byte[] data = new byte[1000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) i;
    }
    Files.write(f, data);
    LocalDirSource s = new LocalDirSource(root);
    String tag = s.stat("f.bin").versionTag();

    assertThat(s.readRange("f.bin", tag, 990, 20)).hasSize(10).startsWith((byte) 990);
    ByteBuffer buf = ByteBuffer.allocate(5);
    assertThat(s.read("f.bin", tag, 3, buf)).isEqualTo(5);
    assertThat(buf.array()).containsExactly(3, 4, 5, 6, 7);

    Files.write(f, new byte[] {42});
    Files.setLastModifiedTime(f, FileTime.fromMillis(12345));
    assertThatThrownBy(() -> s.readRange("f.bin", tag, 0, 1))
        .isInstanceOf(ObjectChangedException.class);
    assertThatThrownBy(() -> s.readRange("../escape", null, 0, 1))
        .isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void missingRootIsReportedByName() {
    assertThatThrownBy(() -> new LocalDirSource(tmp.resolve("nope")))
        .isInstanceOf(NoSuchFileException.class)
        .hasMessageContaining("nope");
  }
}
