package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The page-cache window's arithmetic: marks, the bytes served since, large files, the reach. */
class PageCacheWindowTest {
  private static final long MIB = 1 << 20;

  @Test
  void aFileIsHeld_untilTheReachWasServedSince() {
    PageCacheWindow w = new PageCacheWindow(10, () -> 8 * MIB);
    assertThat(w.mayHold(3)).as("never served").isFalse();
    w.served(3, 100_000);
    assertThat(w.mayHold(3)).isTrue();
    for (int i = 0; i < 70; i++) {
      w.served(4, 100_000); // 7 MB after it: still within 8 MiB
    }
    assertThat(w.mayHold(3)).isTrue();
    for (int i = 0; i < 20; i++) {
      w.served(5, 100_000);
    }
    assertThat(w.mayHold(3)).as("9 MB served since").isFalse();
    assertThat(w.mayHold(5)).isTrue();
  }

  @Test
  void aLargeFilesBytes_pushOthersOut_withoutAMark() {
    PageCacheWindow w = new PageCacheWindow(10, () -> 8 * MIB);
    w.served(1, 110_000);
    w.served(-1, 16 * MIB);
    assertThat(w.mayHold(1)).isFalse();
    w.served(2, 110_000);
    assertThat(w.mayHold(2)).isTrue();
  }

  @Test
  void noReach_holdsNothing_andIdsPastTheCatalogAreNeverHeld() {
    PageCacheWindow none = new PageCacheWindow(10, () -> 0);
    none.served(1, 10);
    assertThat(none.mayHold(1)).isFalse();
    PageCacheWindow w = new PageCacheWindow(10, () -> 8 * MIB);
    w.served(12, 10); // a file listed after the window was made
    assertThat(w.mayHold(12)).isFalse();
    assertThat(w.mayHold(-1)).isFalse();
  }

  @Test
  void theReachIsKnownFromTheStart_andReadAgainAtMostOnceASecond() throws Exception {
    AtomicLong reach = new AtomicLong(8 * MIB);
    AtomicLong asked = new AtomicLong();
    PageCacheWindow w =
        new PageCacheWindow(
            10,
            () -> {
              asked.incrementAndGet();
              return reach.get();
            });
    w.served(1, 10);
    assertThat(w.mayHold(1)).isTrue();
    reach.set(0);
    for (int i = 0; i < 1000; i++) {
      assertThat(w.mayHold(1)).isTrue();
    }
    assertThat(asked.get()).isEqualTo(1);
    Thread.sleep(1_100);
    assertThat(w.mayHold(1)).isFalse();
    assertThat(asked.get()).isEqualTo(2);
  }

  @Test
  void theMachinesReach_isSomeOfItsMemory() {
    long r = PageCacheWindow.memoryReach();
    assertThat(r).isPositive();
    var os =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    assertThat(r).isLessThanOrEqualTo(os.getTotalMemorySize());
  }
}
