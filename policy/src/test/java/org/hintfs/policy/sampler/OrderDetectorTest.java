package org.hintfs.policy.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The order detector against the sampler replay ({@link TorchSamplers}, which {@code TorchReplayIT}
 * checks bit for bit against real torch).
 */
class OrderDetectorTest {
  static final OrderDetector.Options OPTIONS = OrderDetector.Options.defaults();

  /**
   * The first k distinct samples a DataLoader with {@code workers} workers and batch {@code b}
   * opens: batches are handed out round robin and their files opened interleaved, so the opens are
   * the order's first batches, shuffled.
   */
  static int[] firstOpens(int[] order, int k, int workers, int batch, long seed) {
    int span = Math.min(order.length, Math.max(k, 2 * workers * batch));
    Integer[] head = Arrays.stream(Arrays.copyOf(order, span)).boxed().toArray(Integer[]::new);
    java.util.Collections.shuffle(Arrays.asList(head), new Random(seed));
    Set<Integer> distinct = new LinkedHashSet<>(Arrays.asList(head));
    return distinct.stream().limit(k).mapToInt(Integer::intValue).toArray();
  }

  @Test
  void randpermPrefix_isTheStartOfRandperm() {
    for (int n : new int[] {1, 2, 7, 1000}) {
      int[] full = new TorchGenerator(42).randperm(n);
      for (int m : new int[] {0, 1, n / 2, n}) {
        assertThat(OrderDetector.randpermPrefix(new TorchGenerator(42), n, m))
            .as("n %d m %d", n, m)
            .containsExactly(Arrays.copyOf(full, m));
      }
    }
  }

  @Test
  void recognisesDistributedSampler_seedEpochWorldAndRank() {
    int n = 3200;
    for (int[] c : new int[][] {{0, 0, 1, 0}, {42, 3, 2, 1}, {0, 1, 4, 3}, {1234, 0, 8, 5}}) {
      int seed = c[0];
      int epoch = c[1];
      int world = c[2];
      int rank = c[3];
      int[] order = TorchSamplers.distributed(n, world, rank, true, seed, epoch, false);
      int[] opens = firstOpens(order, 128, 2, 16, seed + rank);
      OrderDetector.Match m = OrderDetector.detect(n, opens, OPTIONS);
      assertThat(m).as("seed %d epoch %d world %d rank %d", seed, epoch, world, rank).isNotNull();
      assertThat(m.sampler()).isEqualTo("distributed");
      assertThat(m.generatorSeed()).isEqualTo(seed + epoch);
      assertThat(m.world()).isEqualTo(world);
      assertThat(m.rank()).isEqualTo(rank);
      assertThat(m.log10Chance()).isLessThan(-9);
    }
  }

  @Test
  void stoppingEarly_findsWhatTheWholeSearchFinds() {
    int n = 3200;
    java.util.Random rnd = new java.util.Random(7);
    for (int t = 0; t < 12; t++) {
      int seed = t % 3 == 0 ? 42 : rnd.nextInt(101);
      int epoch = rnd.nextInt(21);
      int world = 1 + rnd.nextInt(8);
      int rank = rnd.nextInt(world);
      int[] order = TorchSamplers.distributed(n, world, rank, true, seed, epoch, false);
      int[] opens = firstOpens(order, 128, 2, 16, t);
      OrderDetector.Match early = OrderDetector.detect(n, opens, OPTIONS, true);
      OrderDetector.Match whole = OrderDetector.detect(n, opens, OPTIONS, false);
      assertThat(early)
          .as("seed %d epoch %d world %d rank %d", seed, epoch, world, rank)
          .isEqualTo(whole);
      assertThat(early.generatorSeed()).isEqualTo(seed + epoch);
      assertThat(early.world()).isEqualTo(world);
      assertThat(early.rank()).isEqualTo(rank);
    }
  }

  @Test
  void aPrefixPastN_addsNoFirstPosition() {
    // detect draws at most n positions of the padded order: what it matches, each sample's first
    // position, is the same as in the whole prefix the options reach (65,536 positions).
    int m = OPTIONS.reach() * OPTIONS.maxWorld();
    for (int n : new int[] {1, 7, 200, 2000, 3200}) {
      for (long g : new long[] {0, 42, 2024}) {
        int[] whole = OrderDetector.distributedPrefix(n, g, m);
        int[] drawn = OrderDetector.distributedPrefix(n, g, Math.min(m, n));
        assertThat(firstPositions(whole, n))
            .as("n %d g %d", n, g)
            .isEqualTo(firstPositions(drawn, n));
      }
    }
  }

  private static int[] firstPositions(int[] prefix, int n) {
    int[] first = new int[n];
    Arrays.fill(first, -1);
    for (int q = prefix.length - 1; q >= 0; q--) {
      first[prefix[q]] = q;
    }
    return first;
  }

  @Test
  void aDistributedSamplerWithPadding_onADatasetSmallerThanTheReach_isRecognised() {
    // n = 1,000 over world 24: 1,008 positions, the last 8 the order's start again.
    int n = 1000;
    int[] order = TorchSamplers.distributed(n, 24, 5, true, 7, 2, false);
    OrderDetector.Match m = OrderDetector.detect(n, firstOpens(order, 40, 1, 8, 1), OPTIONS);
    assertThat(m).isNotNull();
    assertThat(m.generatorSeed()).isEqualTo(9);
    assertThat(m.world()).isEqualTo(24);
    assertThat(m.rank()).isEqualTo(5);
  }

  @Test
  void recognisesASeededDataLoaderShuffle() {
    int n = 5000;
    int[] order = TorchSamplers.dataLoaderShuffle(n, 2024, 1, false)[0];
    OrderDetector.Match m = OrderDetector.detect(n, firstOpens(order, 128, 4, 32, 1), OPTIONS);
    assertThat(m).isNotNull();
    assertThat(m.sampler()).isEqualTo("random");
    assertThat(m.generatorSeed()).isEqualTo(2024);
  }

  @Test
  void manyWorkersWithLargeBatches_areRecognised() {
    // An ImageNet-size job: 8 workers x batch 256 ask for 2 batches each at once, so the first
    // opens spread over a rank's first 4,096 positions, not its first 1,024.
    int n = 1_281_167;
    for (int[] c : new int[][] {{42, 2, 4, 1}, {0, 0, 1, 0}, {3407, 1, 8, 6}}) {
      int[] order = TorchSamplers.distributed(n, c[2], c[3], true, c[0], c[1], false);
      int[] opens = firstOpens(order, 128, 8, 256, c[3]);
      OrderDetector.Match m = OrderDetector.detect(n, opens, OPTIONS);
      assertThat(m).as("seed %d epoch %d world %d rank %d", c[0], c[1], c[2], c[3]).isNotNull();
      assertThat(m.generatorSeed()).isEqualTo(c[0] + c[1]);
      assertThat(m.world()).isEqualTo(c[2]);
      assertThat(m.rank()).isEqualTo(c[3]);
    }
  }

  @Test
  void randomReads_andUnlistedSeeds_areNotRecognised() {
    int n = 3200;
    Random rnd = new Random(5);
    int[] random = rnd.ints(0, n).distinct().limit(128).toArray();
    assertThat(OrderDetector.detect(n, random, OPTIONS)).isNull();
    // An unseeded shuffle draws its seed from torch's global generator: any 64-bit value.
    int[] order = TorchSamplers.distributed(n, 1, 0, true, 987_654_321L, 0, false);
    assertThat(OrderDetector.detect(n, firstOpens(order, 128, 2, 16, 3), OPTIONS)).isNull();
  }

  @Test
  void fewOpensOnATinyDataset_areNotEnoughToBeSure() {
    // 200 samples, reach 1024: every candidate covers the whole set, so a match proves nothing.
    int[] order = TorchSamplers.distributed(200, 1, 0, true, 0, 0, false);
    assertThat(OrderDetector.detect(200, Arrays.copyOf(order, 64), OPTIONS)).isNull();
  }
}
