package org.hintfs.policy.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TorchGeneratorTest {

  @Test
  void isTheReferenceMt19937() {
    // std::mt19937 seeded with 5489 (the standard's default seed): its 10,000th output is
    // 4123659995 (C++11 [rand.predef]).
    TorchGenerator g = new TorchGenerator(5489);
    long v = 0;
    for (int i = 0; i < 10_000; i++) {
      v = g.random();
    }
    assertThat(v).isEqualTo(4123659995L);
  }

  @Test
  void keepsOnlyTheLow32BitsOfTheSeed() {
    TorchGenerator a = new TorchGenerator(7);
    TorchGenerator b = new TorchGenerator(7 + (1L << 32));
    for (int i = 0; i < 100; i++) {
      assertThat(a.random()).isEqualTo(b.random());
    }
  }

  @Test
  void random64PutsTheFirstDrawHigh() {
    TorchGenerator a = new TorchGenerator(1);
    TorchGenerator b = new TorchGenerator(1);
    long hi = b.random();
    long lo = b.random();
    assertThat(a.random64()).isEqualTo((hi << 32) | lo);
  }

  /** torch >= 2.7's large-n branch, written as its source reads, on a small n. */
  @Test
  void insideOutBranchFollowsTheDocumentedAlgorithm() {
    int n = 1000;
    TorchGenerator g = new TorchGenerator(99);
    int[] r = new int[n];
    for (int i = 0; i < n; i++) {
      // r[i] = i; r[i] = r[z]; r[z] = i;  with z = random64() % (i + 1)
      int z = (int) Long.remainderUnsigned(g.random64(), i + 1L);
      r[i] = i;
      r[i] = r[z];
      r[z] = i;
    }
    int[] sorted = r.clone();
    Arrays.sort(sorted);
    for (int i = 0; i < n; i++) {
      assertThat(sorted[i]).isEqualTo(i);
    }
    assertThat(TorchGenerator.insideOut(n, new TorchGenerator(99))).containsExactly(r);
  }
}
