package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.hintfs.backing.InMemorySource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How a large file's READs are told apart: sequential (blocks) or random (pages), and how much. */
class ReadPatternTest {
  static final int KIB = 1024;
  static final int MIB = 1024 * KIB;
  static final int BLOCK = 8 * MIB;

  Catalog cat;
  int id;
  ReadPattern pattern;

  @BeforeEach
  void setUp() throws Exception {
    InMemorySource src = new InMemorySource("mem:test");
    src.put("packed/big.bin", new byte[64 * MIB]);
    cat = Mount.listCatalog(src);
    id = cat.lookup("packed/big.bin");
    pattern = new ReadPattern(BLOCK);
  }

  SampleHandle handle() {
    return new SampleHandle(cat, id);
  }

  @Test
  void aReaderFromTheStart_readingOn_isNeverServedByPages_evenALittleOutOfOrder() {
    SampleHandle h = handle();
    for (long off = 0; off < 32 * MIB; off += 256 * KIB) {
      // The kernel's READs of one stream: the second of each pair before the first.
      assertThat(pattern.classify(h, off + 128 * KIB, 128 * KIB).paged()).isFalse();
      assertThat(pattern.classify(h, off, 128 * KIB).paged()).isFalse();
    }
  }

  @Test
  void everySeekIsServedByPages_andTheSecondMakesTheHandleRandom() {
    SampleHandle h = handle();
    assertThat(pattern.classify(h, 0, 4 * KIB).paged()).isFalse(); // a header at offset 0
    assertThat(pattern.classify(h, 40 * MIB, 128 * KIB).paged()).isTrue(); // seek 1
    // The kernel's read-ahead after a random READ continues its stream: paged while it is young.
    assertThat(pattern.classify(h, 40 * MIB + 128 * KIB, 128 * KIB).paged()).isTrue();
    assertThat(pattern.classify(h, 10 * MIB, 128 * KIB).paged()).isTrue(); // seek 2: random
    // Random now: a READ that happens to continue a stream is served by pages too.
    assertThat(pattern.classify(h, 10 * MIB + 128 * KIB, 128 * KIB).paged()).isTrue();
    // And the next handle of the file starts random, its header read included.
    assertThat(pattern.classify(handle(), 0, 4 * KIB).paged()).isTrue();
  }

  @Test
  void aStreamFromTheMiddle_isPagedForItsFirstFourMiB_thenServedByBlocks() {
    SampleHandle h = handle();
    assertThat(pattern.classify(h, 20 * MIB, 128 * KIB).paged()).isTrue();
    long off = 20 * MIB + 128 * KIB;
    for (; off < 24 * MIB - 128 * KIB; off += 128 * KIB) {
      assertThat(pattern.classify(h, off, 128 * KIB).paged()).as("at %d", off).isTrue();
    }
    assertThat(pattern.classify(h, off, 128 * KIB).paged()).isFalse(); // 4 MiB read on end
  }

  @Test
  void aRandomHandle_readingFourMiBOnEnd_isSequentialAgain_andSoIsTheFile() {
    SampleHandle h = handle();
    pattern.classify(h, 5 * MIB, 64 * KIB);
    pattern.classify(h, 30 * MIB, 64 * KIB);
    assertThat(pattern.classify(h, 50 * MIB, 128 * KIB).paged()).isTrue();
    boolean paged = true;
    for (long off = 50 * MIB + 128 * KIB; off < 55 * MIB; off += 128 * KIB) {
      paged = pattern.classify(h, off, 128 * KIB).paged();
    }
    assertThat(paged).isFalse();
    assertThat(pattern.classify(handle(), 0, 4 * KIB).paged()).isFalse();
  }

  /**
   * A reader of 1 MiB records at random offsets (5 MiB apart: none continues another): each record
   * comes as 8 READs of 128 KiB. Once the handle's 8 streams have been replaced, a seek asks for
   * the usual run (an EWMA of the replaced streams' runs, each 1 MiB), so one GET brings the
   * record, not one GET per READ.
   */
  @Test
  void aSeekAsksForTheReadersUsualRun_soARecordOfOneMiBIsOneFetch() {
    SampleHandle h = handle();
    Random rnd = new Random(61);
    int want = 0;
    for (int r = 0; r < 12; r++) {
      long at = (long) r * 5 * MIB + MIB + 4 * KIB * rnd.nextInt(100);
      want = pattern.classify(h, at, 128 * KIB).want();
      for (int k = 1; k < 8; k++) {
        pattern.classify(h, at + k * 128L * KIB, 128 * KIB);
      }
    }
    assertThat(want).isEqualTo(MIB);
  }

  /** Four workers on one shared handle, each reading 256 KiB records: they are told apart. */
  @Test
  void interleavedStreamsOnOneHandle_eachContinueTheirOwn() {
    SampleHandle h = handle();
    long[] at = {3 * MIB, 17 * MIB, 33 * MIB, 49 * MIB};
    for (int w = 0; w < 4; w++) {
      pattern.classify(h, at[w], 128 * KIB);
    }
    // The second READ of each record continues its own stream: asked from where it is, at least
    // as much as that stream has read.
    for (int w = 0; w < 4; w++) {
      ReadPattern.Verdict v = pattern.classify(h, at[w] + 128 * KIB, 128 * KIB);
      assertThat(v.paged()).isTrue();
      assertThat(v.want()).isGreaterThanOrEqualTo(256 * KIB);
    }
  }
}
