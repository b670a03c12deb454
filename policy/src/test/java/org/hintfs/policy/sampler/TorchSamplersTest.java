package org.hintfs.policy.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The job's order on one clock agrees with every rank's own order. */
class TorchSamplersTest {
  @Test
  void distributedPositions_giveEachSampleItsFirstPlaceInItsRanksOrder() {
    for (int n : new int[] {1, 7, 100, 1001}) {
      for (int world : new int[] {1, 2, 3, 6, 8}) {
        for (boolean dropLast : new boolean[] {false, true}) {
          int[] pos = TorchSamplers.distributedPositions(n, world, true, 42, 3, dropLast);
          int len = TorchSamplers.distributedLength(n, world, dropLast);
          Set<Integer> seen = new HashSet<>();
          for (int r = 0; r < world; r++) {
            int[] order = TorchSamplers.distributed(n, world, r, true, 42, 3, dropLast);
            assertThat(order).hasSize(len);
            for (int k = 0; k < order.length; k++) {
              if (seen.add(order[k])) {
                assertThat(pos[order[k]])
                    .as("n %d world %d sample %d", n, world, order[k])
                    .isEqualTo(k);
              } else {
                assertThat(pos[order[k]]).isLessThanOrEqualTo(k); // a padding repeat
              }
            }
          }
          for (int s = 0; s < n; s++) {
            assertThat(pos[s] >= 0).as("sample %d read", s).isEqualTo(seen.contains(s));
          }
        }
      }
    }
  }

  @Test
  void distributedHead_isTheStartOfTheRanksOrder() {
    for (int n : new int[] {1, 7, 100, 1001}) {
      for (int world : new int[] {1, 3, 8}) {
        for (boolean dropLast : new boolean[] {false, true}) {
          for (int r = 0; r < world; r++) {
            int[] order = TorchSamplers.distributed(n, world, r, true, 9, 4, dropLast);
            for (int m : new int[] {0, 1, 5, 200}) {
              assertThat(TorchSamplers.distributedHead(n, world, r, 9, 4, dropLast, m))
                  .as("n %d world %d rank %d m %d", n, world, r, m)
                  .containsExactly(java.util.Arrays.copyOf(order, Math.min(m, order.length)));
            }
          }
        }
      }
    }
  }
}
