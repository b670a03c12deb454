import java.lang.management.ManagementFactory;
import java.util.Locale;
import org.hintfs.policy.sampler.ShuffleReplay;
import org.hintfs.policy.sampler.TorchSamplers;

/**
 * Issue 39: what replaying a seeded DataLoader(shuffle=True) costs at epoch E, the way a mount's
 * seed hint does it (the epoch's order, then the next epoch's head of 256), with the built jar:
 *   java -Xmx4g -cp fs/target/hintfs.jar tests/bench/ReplayBench.java 1281167 89
 * naive: every permutation of the E + 1 epochs built and kept, twice (TorchSamplers.dataLoaderShuffle,
 *   what SamplerReplay did before). cold: a fresh ShuffleReplay (the dropped permutations skipped).
 * warm: the transition E -> E + 1 on a kept generator, at E = 1 and at E (what each epoch costs).
 * Time: best of 3 (after one warm-up run); bytes: allocated by this thread (ThreadMXBean), one run.
 */
public class ReplayBench {
  static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  interface Work {
    Object run();
  }

  static Object sink;

  static void measure(String name, int reps, Work w) {
    long bestNs = Long.MAX_VALUE;
    long bytes = 0;
    sink = w.run();
    for (int i = 0; i < reps; i++) {
      long b0 = MX.getCurrentThreadAllocatedBytes();
      long t0 = System.nanoTime();
      sink = w.run();
      long ns = System.nanoTime() - t0;
      bytes = MX.getCurrentThreadAllocatedBytes() - b0;
      bestNs = Math.min(bestNs, ns);
    }
    System.out.printf(
        Locale.ROOT, "%-34s %10.1f ms %10.1f MB allocated%n", name, bestNs / 1e6, bytes / 1e6);
  }

  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]);
    int epoch = Integer.parseInt(args[1]);
    boolean naive = args.length < 3 || !args[2].equals("no-naive");
    System.out.printf(Locale.ROOT, "n %d, epoch %d%n", n, epoch);
    if (naive) {
      measure(
          "naive (before): epoch " + epoch + " + head",
          2,
          () -> {
            int[] o = TorchSamplers.dataLoaderShuffle(n, 0, epoch + 1, false)[epoch];
            int[] h = TorchSamplers.dataLoaderShuffle(n, 0, epoch + 2, false)[epoch + 1];
            return new int[][] {o, java.util.Arrays.copyOf(h, 256)};
          });
    }
    measure(
        "cold (after): epoch " + epoch + " + head",
        3,
        () -> {
          ShuffleReplay r = new ShuffleReplay(n, 0, false);
          return new int[][] {r.epoch(epoch), r.head(epoch + 1, 256)};
        });
    for (int e : new int[] {1, epoch}) {
      // Each run from its own replay that has just built epoch e: the next epoch and its head.
      java.util.ArrayDeque<ShuffleReplay> ready = new java.util.ArrayDeque<>();
      for (int i = 0; i < 4; i++) {
        ShuffleReplay r = new ShuffleReplay(n, 0, false);
        r.epoch(e);
        ready.add(r);
      }
      measure(
          "warm: epoch " + e + " -> " + (e + 1) + " + head",
          3,
          () -> {
            ShuffleReplay r = ready.poll();
            return new int[][] {r.epoch(e + 1), r.head(e + 2, 256)};
          });
    }
  }
}
