package org.hintfs.policy.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A shuffle replayed one epoch at a time, the dropped permutations skipped, is bit for bit the
 * naive replay ({@link TorchSamplers#dataLoaderShuffle}, which torch checks in TorchReplayIT); and
 * it stays O(n) per epoch at any epoch: counted in permutations built, not timed.
 */
class ShuffleReplayTest {
  @Test
  void skip_isThatManyDrawsDiscarded_acrossTwists() {
    for (long k : new long[] {0, 1, 2, 622, 623, 624, 625, 1247, 1248, 1249, 5000, 100_003}) {
      for (int drawnFirst : new int[] {0, 1, 623, 624, 700}) {
        TorchGenerator naive = new TorchGenerator(11);
        TorchGenerator skipped = new TorchGenerator(11);
        for (int i = 0; i < drawnFirst; i++) {
          naive.random();
          skipped.random();
        }
        for (long i = 0; i < k; i++) {
          naive.random();
        }
        skipped.skip(k);
        for (int i = 0; i < 1300; i++) {
          assertThat(skipped.random())
              .as("k %d after %d, draw %d", k, drawnFirst, i)
              .isEqualTo(naive.random());
        }
      }
    }
  }

  @Test
  void randpermDraws_isWhatRandpermConsumes() {
    for (int n : new int[] {0, 1, 2, 3, 624, 625, 5000}) {
      TorchGenerator drawn = new TorchGenerator(3);
      drawn.randperm(n);
      TorchGenerator skipped = new TorchGenerator(3);
      skipped.skip(TorchGenerator.randpermDraws(n));
      assertThat(skipped.random()).as("n %d", n).isEqualTo(drawn.random());
    }
  }

  @Test
  void everyEpoch_inAnyOrderAsked_isTheNaiveReplays() {
    for (int n : new int[] {1, 2, 7, 100, 1000}) {
      for (boolean persistent : new boolean[] {false, true}) {
        for (long seed : new long[] {0, 42, -1}) {
          int[][] naive = TorchSamplers.dataLoaderShuffle(n, seed, 12, persistent);
          ShuffleReplay r = new ShuffleReplay(n, seed, persistent);
          // Forward, the same one again, a jump ahead, then back (a restart from the seed).
          for (int e : new int[] {0, 1, 1, 2, 5, 11, 3, 0, 7, 8}) {
            String as = "n " + n + " seed " + seed + " persistent " + persistent + " epoch " + e;
            assertThat(r.epoch(e)).as(as).containsExactly(naive[e]);
            for (int next : new int[] {e, e + 1}) {
              if (next < naive.length) {
                int m = Math.min(n, 5);
                assertThat(r.head(next, 5))
                    .as(as + " head of " + next)
                    .containsExactly(Arrays.copyOf(naive[next], m));
              }
            }
          }
        }
      }
    }
  }

  /**
   * Epoch 89 of a 90-epoch run is one permutation of n (the other 179 of its loader are skipped),
   * the next epoch one more, and the next epoch's head none.
   */
  @Test
  void epoch89_buildsOnePermutation_andEachNextEpochOneMore() {
    int n = 20_000;
    ShuffleReplay r = new ShuffleReplay(n, 0, false);
    long before = TorchGenerator.permutationsBuilt();
    int[] e89 = r.epoch(89);
    assertThat(TorchGenerator.permutationsBuilt() - before).isEqualTo(1);
    r.head(90, 256);
    assertThat(TorchGenerator.permutationsBuilt() - before).isEqualTo(1);
    int[] e90 = r.epoch(90);
    assertThat(TorchGenerator.permutationsBuilt() - before).isEqualTo(2);
    // Against a naive replay, at a size this test can afford it for.
    int[][] naive = TorchSamplers.dataLoaderShuffle(n, 0, 91, false);
    assertThat(e89).isEqualTo(naive[89]);
    assertThat(e90).isEqualTo(naive[90]);
  }

  /**
   * Two jobs of one seed at different epochs (a sweep started twice), taking turns on one replay:
   * each transition is one permutation and a skip of about n, not a skip back from the other's
   * epoch.
   */
  @Test
  void twoRunsOfOneSeedAtDifferentEpochs_eachNextEpochCostsOnePermutation() {
    int n = 5_000;
    ShuffleReplay r = new ShuffleReplay(n, 0, false);
    r.epoch(1);
    r.epoch(60);
    int[][] naive = TorchSamplers.dataLoaderShuffle(n, 0, 66, false);
    for (int i = 1; i <= 5; i++) {
      for (int e : new int[] {1 + i, 60 + i}) {
        long built = TorchGenerator.permutationsBuilt();
        long skipped = TorchGenerator.outputsSkipped();
        assertThat(r.epoch(e)).isEqualTo(naive[e]);
        r.head(e + 1, 256);
        assertThat(TorchGenerator.permutationsBuilt() - built).isEqualTo(1);
        assertThat(TorchGenerator.outputsSkipped() - skipped).as("epoch %d", e).isLessThan(n + 8);
      }
    }
  }
}
