package org.hintfs.fs.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.hintfs.backing.InMemorySource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The free-space floor: what the disk's space, seen every few seconds, does to the capacity. */
class CacheIndexSpaceTest {
  @TempDir Path tmp;

  static final long GIB = 1L << 30;
  static final long MIB = 1L << 20;

  @Test
  void theFloorHoldsTheCacheAtItsSize_neverEvicts_andLetsItGrowBackWhenTheDiskFrees()
      throws Exception {
    InMemorySource src = TieredCacheTest.dataset(3, 20, 40_000);
    Catalog cat = Mount.listCatalog(src);
    try (TieredCache c = TieredCacheTest.openWithoutRam(src, cat, tmp.resolve("c"), 1 << 20)) {
      for (int id : TieredCacheTest.files(cat)) {
        c.read(id, 0);
      }
      c.flush();
      c.store().account(null); // the writer's own looks at this disk stay out of the test
      CacheIndex ix = c.index();
      long used = ix.usedBytes();
      int files = ix.cachedFiles();
      long file = 10 * MIB; // the store's file, as the writer would report it
      // A 100 GiB disk, 5% floor (5 GiB). 10 GiB free: 5 above the floor, the 1 GiB cap stands.
      assertThat(ix.onSpace(10 * GIB, 100 * GIB, file)).isTrue();
      assertThat(ix.capacityBytes()).isEqualTo(GIB);
      assertThat(ix.capacityBasis("test")).isEqualTo("test");
      // Others take it to 4 GiB free, under the floor: held at the file's size, nothing evicted.
      assertThat(ix.onSpace(4 * GIB, 100 * GIB, file)).isFalse();
      assertThat(ix.capacityBytes()).isEqualTo(Math.max(used, file));
      assertThat(ix.cachedFiles()).isEqualTo(files);
      assertThat(ix.capacityBasis("test")).contains("--cache-min-free 5%");
      // 10 MiB above the floor: room to grow by that, not yet room to resume storing (1% of the
      // disk, at most 64 MiB).
      assertThat(ix.onSpace(5 * GIB + 10 * MIB, 100 * GIB, file)).isFalse();
      assertThat(ix.capacityBytes()).isEqualTo(file + 10 * MIB);
      // Freed: the capacity is the configured one again.
      assertThat(ix.onSpace(20 * GIB, 100 * GIB, file)).isTrue();
      assertThat(ix.capacityBytes()).isEqualTo(GIB);
      assertThat(ix.capacityBasis("test")).isEqualTo("test");
      // A floor as a size, and none.
      ix.keepFree(MinFree.parse("8G"));
      assertThat(ix.onSpace(6 * GIB, 100 * GIB, file)).isFalse();
      ix.keepFree(MinFree.parse("0"));
      assertThat(ix.onSpace(6 * GIB, 100 * GIB, file)).isTrue();
      ix.checkInvariants();
    }
  }

  @Test
  void minFree_isASizeOrAShareBelow100Percent() {
    assertThat(MinFree.parse("5%").bytesOf(200 * GIB)).isEqualTo(10 * GIB);
    assertThat(MinFree.parse("10G").bytesOf(200 * GIB)).isEqualTo(10 * GIB);
    assertThat(MinFree.parse("0").bytesOf(200 * GIB)).isZero();
    assertThat(MinFree.DEFAULT).hasToString("5%");
    for (String bad : new String[] {"100%", "-1%", "5x", ""}) {
      assertThatThrownBy(() -> MinFree.parse(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "--cache-min-free must be a size (e.g. 10G) or a share of the disk below 100% (e.g."
                  + " 5%), not '"
                  + bad
                  + "'");
    }
  }
}
