package org.hintfs.fs.mount;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk cache's cap: 90% of what the cache dir's disk can hold, computed at every mount. */
class MountTest {
  @TempDir Path dir;

  @Test
  void theCapOfANewCacheDir_isNinetyPercentOfTheFreeDisk() throws Exception {
    FileStore disk = Files.getFileStore(dir);
    long room = Mount.diskRoomFor(dir);
    // The free space moves a little while the test runs (other writers): 1% either way.
    assertThat((double) room).isCloseTo(0.9 * disk.getUsableSpace(), within(disk));
  }

  @Test
  void anExistingCacheCountsAsRoom_andTheCapStaysFinite() throws Exception {
    FileStore disk = Files.getFileStore(dir);
    byte[] page = new byte[4096];
    Path db = dir.resolve("data.mdb");
    try (var out = Files.newOutputStream(db)) {
      for (int i = 0; i < 2560; i++) {
        out.write(page); // 10 MiB the cache holds, which it could reuse
      }
    }
    long room = Mount.diskRoomFor(dir);
    assertThat(room).isLessThanOrEqualTo((long) (0.9 * disk.getTotalSpace()));
    assertThat((double) room)
        .isCloseTo(0.9 * (disk.getUsableSpace() + Files.size(db)), within(disk));
  }

  private static org.assertj.core.data.Offset<Double> within(FileStore disk) throws Exception {
    return org.assertj.core.data.Offset.offset(0.01 * disk.getTotalSpace());
  }
}
