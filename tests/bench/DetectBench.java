import org.hintfs.policy.sampler.OrderDetector;
import org.hintfs.policy.sampler.TorchGenerator;

/**
 * Time and CPU of one order-recognition search (OrderDetector, default options: 394 generator
 * seeds, worlds 1..64, reach 1,024) for a dataset of n samples: the first 128 opens of rank 3 of
 * world 8 (their order does not matter: they are matched as a set). CASE: "default" is
 * DistributedSampler's default seed 0 at epoch 0 (found first); "late" is seed 1234 + epoch 5
 * (found after about half the candidates); "none" is 128 random samples (no match: every
 * candidate is tried). Run by detect-bench.sh.
 * Usage: java -cp policy/target/classes DetectBench N [REPS] [CASE]
 */
public class DetectBench {
  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]);
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    String kase = args.length > 2 ? args[2] : "late";
    int world = 8;
    int rank = 3;
    int[] opens = new int[128];
    if (kase.equals("none")) {
      java.util.Random rnd = new java.util.Random(1);
      java.util.Set<Integer> seen = new java.util.HashSet<>();
      for (int k = 0; k < 128; ) {
        int s = rnd.nextInt(n);
        if (seen.add(s)) {
          opens[k++] = s;
        }
      }
    } else {
      long g = kase.equals("default") ? 0 : 1234 + 5;
      int[] prefix = OrderDetector.randpermPrefix(new TorchGenerator(g), n, 128 * world);
      for (int k = 0; k < 128; k++) {
        opens[k] = prefix[rank + k * world];
      }
    }
    var bean = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (int r = 0; r < reps; r++) {
      long cpu0 = bean.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      var m = OrderDetector.detect(n, opens, OrderDetector.Options.defaults());
      long wall = System.nanoTime() - t0;
      long cpu = bean.getCurrentThreadCpuTime() - cpu0;
      System.out.printf(
          "n=%d case=%s rep=%d wall_ms=%.0f cpu_ms=%.0f found=%s%n",
          n, kase, r, wall / 1e6, cpu / 1e6,
          m == null ? "none" : m.generatorSeed() + " world " + m.world() + " rank " + m.rank());
    }
  }
}
