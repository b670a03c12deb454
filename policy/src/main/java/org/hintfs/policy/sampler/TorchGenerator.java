package org.hintfs.policy.sampler;

import java.util.concurrent.atomic.AtomicLong;

/**
 * PyTorch's CPU generator ({@code at::CPUGeneratorImpl}): a standard MT19937.
 *
 * <p>Seeding: {@code manual_seed(s)} takes a 64-bit seed (a negative Python int becomes 2^64 + s)
 * and {@code at::mt19937} keeps only its low 32 bits, then initializes the state the standard way.
 * {@link #random()} is one 32-bit output; {@link #random64()} is two, the first in the high half
 * ({@code make64BitsFrom32Bits(hi, lo)}).
 *
 * <p>MT19937 cannot be jumped ahead cheaply, but a draw whose values are not wanted need not be
 * made: {@link #skip} advances the state by a count of outputs, twisting and discarding, with no
 * tempering and no shuffle's random writes. {@code randperm(n)} consumes a count of outputs that
 * does not depend on the values ({@link #randpermDraws}), so a permutation that is not kept is a
 * skip.
 */
public final class TorchGenerator {
  private static final int N = 624;
  private static final int M = 397;
  private static final int MATRIX_A = 0x9908b0df;
  private static final int UPPER_MASK = 0x80000000;
  private static final int LOWER_MASK = 0x7fffffff;

  /** Permutations built, ever (every generator): what a test counts to keep replays O(N). */
  private static final AtomicLong PERMUTATIONS = new AtomicLong();

  /** Outputs skipped, ever (every generator): the other half of a replay's work. */
  private static final AtomicLong SKIPPED = new AtomicLong();

  private final int[] state = new int[N];
  private int left;
  private int next;

  private TorchGenerator(TorchGenerator other) {
    System.arraycopy(other.state, 0, state, 0, N);
    left = other.left;
    next = other.next;
  }

  /** {@code torch.Generator().manual_seed(seed)}. */
  public TorchGenerator(long seed) {
    state[0] = (int) seed;
    for (int j = 1; j < N; j++) {
      int prev = state[j - 1];
      state[j] = 1812433253 * (prev ^ (prev >>> 30)) + j;
    }
    left = 1;
    next = 0;
  }

  /** A generator in this one's state, drawing what this one would draw next. */
  public TorchGenerator copy() {
    return new TorchGenerator(this);
  }

  /**
   * Advances the state by {@code outputs} 32-bit outputs, as if {@link #random()} had been called
   * that many times: one twist per 624, nothing else.
   */
  public void skip(long outputs) {
    SKIPPED.addAndGet(Math.max(0, outputs));
    long k = outputs;
    while (k > 0) {
      long ready = left - 1; // outputs drawn before the next twist
      if (k <= ready) {
        left -= (int) k;
        next += (int) k;
        return;
      }
      k -= ready + 1;
      nextState();
      next = 1; // the output that needed the twist was state[0]
    }
  }

  /** The 32-bit outputs {@code randperm(n)} consumes: a count, whatever the values drawn. */
  public static long randpermDraws(int n) {
    return n < LARGE_N ? Math.max(0, n - 1) : 2L * n;
  }

  /** Permutations {@link #randperm} has built, by every generator, ever. */
  public static long permutationsBuilt() {
    return PERMUTATIONS.get();
  }

  /** Outputs {@link #skip} has skipped, by every generator, ever. */
  public static long outputsSkipped() {
    return SKIPPED.get();
  }

  /** One 32-bit output, unsigned, in a long. */
  public long random() {
    if (--left == 0) {
      nextState();
    }
    int y = state[next++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y & 0xffffffffL;
  }

  /** Two outputs as one 64-bit value, the first in the high 32 bits. */
  public long random64() {
    long hi = random();
    long lo = random();
    return (hi << 32) | lo;
  }

  private static int twist(int u, int v) {
    int mix = (u & UPPER_MASK) | (v & LOWER_MASK);
    return (mix >>> 1) ^ ((v & 1) != 0 ? MATRIX_A : 0);
  }

  private void nextState() {
    left = N;
    next = 0;
    int p = 0;
    for (int j = N - M + 1; --j > 0; p++) {
      state[p] = state[p + M] ^ twist(state[p], state[p + 1]);
    }
    for (int j = M; --j > 0; p++) {
      state[p] = state[p + M - N] ^ twist(state[p], state[p + 1]);
    }
    state[p] = state[p + M - N] ^ twist(state[p], state[0]);
  }

  /**
   * {@code torch.randperm(n, generator=this)} on the CPU. For n below 2^32 / 20 (214,748,364): n -
   * 1 swaps, position i with i + {@code random() % (n - i)}. At or above it (torch >= 2.7): the
   * inside-out shuffle with {@code random64() % (i + 1)}, since {@code %} of a 32-bit value skews
   * when n nears 2^32.
   */
  public int[] randperm(int n) {
    PERMUTATIONS.incrementAndGet();
    if (n < LARGE_N) {
      int[] r = new int[n];
      for (int i = 0; i < n; i++) {
        r[i] = i;
      }
      for (int i = 0; i < n - 1; i++) {
        int z = (int) (random() % (n - i));
        int save = r[i];
        r[i] = r[z + i];
        r[z + i] = save;
      }
      return r;
    }
    return insideOut(n, this);
  }

  /** From this n on, {@link #randperm} is the inside-out shuffle on 64-bit draws. */
  static final int LARGE_N = (int) (0xffffffffL / 20);

  /** The inside-out shuffle of torch >= 2.7 for large n (package-visible for its test). */
  static int[] insideOut(int n, TorchGenerator g) {
    int[] r = new int[n];
    for (int i = 0; i < n; i++) {
      int z = (int) Long.remainderUnsigned(g.random64(), i + 1L);
      r[i] = r[z];
      r[z] = i;
    }
    return r;
  }

  /** {@code torch.empty((), dtype=torch.int64).random_(generator=this).item()}: [0, 2^63). */
  public long randomInt64() {
    return random64() & Long.MAX_VALUE;
  }
}
