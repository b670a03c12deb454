package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A miss the mount served as itself a little while ago (so the kernel's page cache may still hold
 * its pages and answer its reads) is served as itself with substitution on, not stood in for: the
 * issue-38 case of a small dataset the page cache holds, where substitution changed what the model
 * saw for no gain. With the window at 0 ({@code --page-cache-reach 0}) it is stood in for as
 * before; a file never served is stood in for either way. In-process: {@link HintFs} as the FUSE
 * adapter drives it.
 */
class PageCacheSubstitutionTest {
  private static final long PID = ProcessHandle.current().pid();

  @TempDir Path tmp;
  private HintFs fs;

  @AfterEach
  void close() throws Exception {
    if (fs != null) {
      fs.close();
      fs.cache().close();
    }
  }

  @Test
  void aMissServedRecently_isServedAsItself_andOneNeverServedIsStoodIn() throws Exception {
    List<byte[]> cats = mount(-1);
    // Cat 2 was served as itself (below, in the setup) and is no longer in the mount's cache.
    control("evict train/cat/02.jpg\n");
    assertThat(read("/train/cat/02.jpg")).isEqualTo(cats.get(2));
    JsonNode s = stats();
    assertThat(s.path("substitutions").asLong()).isZero();
    assertThat(s.path("substitution").path("not_substituted").path("page_cache").asLong())
        .isEqualTo(1);
    // Cat 7 was never served: the page cache cannot hold it, a cached cat stands in.
    byte[] got = read("/train/cat/07.jpg");
    assertThat(got).isNotEqualTo(cats.get(7));
    assertThat(cats.subList(0, 5)).anySatisfy(c -> assertThat(got).isEqualTo(c));
    assertThat(stats().path("substitutions").asLong()).isEqualTo(1);
  }

  @Test
  void withNoWindow_aMissServedRecently_isStoodInFor() throws Exception {
    List<byte[]> cats = mount(0);
    control("evict train/cat/02.jpg\n");
    byte[] got = read("/train/cat/02.jpg");
    assertThat(got).isNotEqualTo(cats.get(2));
    assertThat(stats().path("substitutions").asLong()).isEqualTo(1);
    assertThat(stats().path("substitution").path("not_substituted").path("page_cache").asLong())
        .isZero();
  }

  @Test
  void aMissServedBeforeTheWindowsBytes_isStoodInFor() throws Exception {
    // A window of 200 KB: cat 2 (40 KB) was served, then cats 3-4 and dogs 0-4 (280 KB) after it.
    List<byte[]> cats = mount(200_000);
    control("evict train/cat/02.jpg\n");
    assertThat(read("/train/cat/02.jpg")).isNotEqualTo(cats.get(2));
    assertThat(stats().path("substitutions").asLong()).isEqualTo(1);
    // Dog 4 was the last file served (the window counts in 64 KiB: within 104 KB).
    control("evict train/dog/04.jpg\n");
    String dog = new String(read("/train/dog/04.jpg"), StandardCharsets.UTF_8);
    assertThat(dog).startsWith("dog4-");
    assertThat(stats().path("substitution").path("not_substituted").path("page_cache").asLong())
        .isEqualTo(1);
  }

  /**
   * Cats and dogs 0-9 at the source, the mount's page-cache window {@code reach} bytes (negative:
   * the memory's); cats 0-4 and dogs 0-4 read (served as themselves), so cached; then substitution
   * on from the start with no cap. Returns the cats' bytes.
   */
  private List<byte[]> mount(long reach) throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    List<byte[]> cats = HintFsReads.catsAndDogs(src, 40_000);
    LocalDirSource source = new LocalDirSource(src);
    fs =
        Mount.create(
            source,
            Mount.listCatalog(source),
            MountConfig.builder(src.toString(), tmp.resolve("mnt"))
                .cache(tmp.resolve("cache"), "100%")
                .pageCacheReach(reach)
                .build());
    for (int i = 0; i < 5; i++) {
      assertThat(read("/train/cat/0" + i + ".jpg")).isEqualTo(cats.get(i));
    }
    for (int i = 0; i < 5; i++) {
      read("/train/dog/0" + i + ".jpg");
    }
    control("dataset train\nsubstitution on max 1 from-start\n");
    return cats;
  }

  private byte[] read(String path) throws Exception {
    return HintFsReads.file(fs, path, PID);
  }

  private void control(String text) throws Exception {
    HintFsReads.control(fs, text, PID);
  }

  private JsonNode stats() throws Exception {
    return HintFsReads.stats(fs, PID);
  }
}
