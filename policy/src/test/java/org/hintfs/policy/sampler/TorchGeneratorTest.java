package org.hintfs.policy.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The generator against outputs recorded from real PyTorch (Debian 12's python3-torch, 1.13), each
 * with the command that printed it. torch 1.13 has only randperm's swap branch (n below
 * 214,748,364); the inside-out branch of torch >= 2.7 is checked through its 64-bit draws, which
 * torch 1.13 does expose.
 */
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

  /*
   * /usr/bin/python3 -c 'import torch
   * for seed, n in [(0, 10), (42, 20), (7, 100), (123456789, 50), (-1, 10), (7 + 2**32, 10)]:
   *     g = torch.Generator(); g.manual_seed(seed)
   *     print(seed, n, torch.randperm(n, generator=g).tolist())'
   */
  @Test
  void randpermEqualsTorchs_forSmallN() {
    assertThat(new TorchGenerator(0).randperm(10)).containsExactly(4, 1, 7, 5, 3, 9, 0, 8, 6, 2);
    assertThat(new TorchGenerator(42).randperm(20))
        .containsExactly(2, 14, 18, 15, 1, 10, 0, 4, 6, 11, 8, 3, 7, 17, 13, 12, 19, 5, 16, 9);
    assertThat(new TorchGenerator(123456789).randperm(50))
        .containsExactly(
            8, 29, 20, 4, 12, 5, 38, 6, 30, 26, 17, 3, 37, 46, 18, 47, 1, 14, 7, 45, 13, 9, 19, 43,
            0, 35, 11, 33, 23, 34, 10, 32, 15, 40, 39, 21, 24, 27, 42, 16, 31, 49, 48, 36, 44, 22,
            2, 28, 41, 25);
    assertThat(new TorchGenerator(7).randperm(100))
        .containsExactly(
            15, 59, 71, 57, 2, 27, 87, 54, 36, 96, 98, 76, 28, 43, 8, 80, 58, 91, 61, 25, 56, 5, 99,
            9, 60, 93, 95, 42, 70, 3, 31, 53, 92, 81, 26, 14, 24, 35, 83, 41, 1, 64, 68, 37, 52, 23,
            0, 29, 32, 34, 40, 75, 6, 10, 86, 97, 39, 89, 62, 12, 90, 79, 4, 48, 45, 85, 38, 33, 78,
            84, 67, 50, 16, 51, 73, 63, 17, 46, 65, 66, 11, 22, 47, 7, 49, 94, 69, 21, 74, 82, 72,
            55, 30, 44, 18, 88, 77, 13, 20, 19);
  }

  @Test
  void aNegativeSeedIsTakenAs2To64PlusIt_andOnlyItsLow32BitsCount() {
    // Same command as above: seed -1 (2^64 - 1, low 32 bits 0xffffffff), and 7 + 2^32 printing
    // exactly what seed 7 prints.
    assertThat(new TorchGenerator(-1).randperm(10)).containsExactly(1, 4, 6, 2, 0, 5, 8, 7, 9, 3);
    assertThat(new TorchGenerator(7 + (1L << 32)).randperm(10))
        .containsExactly(5, 0, 3, 4, 1, 7, 9, 6, 8, 2);
    assertThat(new TorchGenerator(7).randperm(10)).containsExactly(5, 0, 3, 4, 1, 7, 9, 6, 8, 2);
  }

  /*
   * /usr/bin/python3 -c 'import torch
   * for seed in [0, 42, -1, 7]:
   *     g = torch.Generator(); g.manual_seed(seed)
   *     print(seed, [torch.empty((), dtype=torch.int64).random_(generator=g).item()
   *                  for _ in range(3)])'
   */
  @Test
  void randomInt64EqualsTorchsRandom_() {
    long[][] recorded = {
      {0, 900450186894289455L, 3969543146641149120L, 1895649597198586619L},
      {42, 6909045637428952499L, 8314211556539077902L, 4279532810384561223L},
      {-1, 1800993050274709794L, 7607120784305990727L, 5331760257347419712L},
      {7, 1407639518939636932L, 5163590386780219894L, 8087222774582268115L},
    };
    for (long[] row : recorded) {
      TorchGenerator g = new TorchGenerator(row[0]);
      for (int k = 1; k < row.length; k++) {
        assertThat(g.randomInt64()).as("seed %d draw %d", row[0], k).isEqualTo(row[k]);
      }
    }
  }

  /*
   * random_(-2**63, None) on int64 is torch's full 64-bit range: the generator's random64() as a
   * signed value.
   * /usr/bin/python3 -c 'import torch
   * for seed in [0, 42, 3]:
   *     g = torch.Generator(); g.manual_seed(seed)
   *     print(seed, [torch.empty((), dtype=torch.int64).random_(-2**63, None, generator=g).item()
   *                  for _ in range(4 if seed == 3 else 3)])'
   */
  @Test
  void random64EqualsTorchsFullRangeDraw() {
    long[][] recorded = {
      {0, -8322921849960486353L, -5253828890213626688L, -7327722439656189189L},
      {42, 6909045637428952499L, -909160480315697906L, -4943839226470214585L},
      {
        3, -8286316095047268712L, -5383722427978684797L, 5366245355481424840L, -9023638050642697451L
      },
    };
    for (long[] row : recorded) {
      TorchGenerator g = new TorchGenerator(row[0]);
      for (int k = 1; k < row.length; k++) {
        assertThat(g.random64()).as("seed %d draw %d", row[0], k).isEqualTo(row[k]);
      }
    }
  }

  @Test
  void insideOutBranch_onTorchsRecordedDraws() {
    // Seed 3's draws as unsigned 64-bit values (recorded above): 10160427978662282904,
    // 13063021645730866819, 5366245355481424840, 9423106023066854165. For i = 0..3,
    // z = draw % (i + 1) = 0, 1, 1, 1 (anything mod 1; odd; digit sum 79 = 1 mod 3; ends in 65 = 1
    // mod 4). Then
    // r[i] = r[z]; r[z] = i:  [0] -> [0, 1] -> [0, 2, 1] -> [0, 3, 1, 2].
    assertThat(TorchGenerator.insideOut(4, new TorchGenerator(3))).containsExactly(0, 3, 1, 2);
  }
}
