import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.ClairvoyantPolicy;
import org.hintfs.policy.NextUse;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.Rekeyer;
import org.hintfs.policy.Residency;

/**
 * Issue 39: the clairvoyant policy's re-key after an order change, at ImageNet scale, with the
 * built jar on the classpath:
 *   flock /tmp/hintfs-bench.lock java -Xmx4g -cp fs/target/hintfs.jar tests/bench/RekeyBench.java 1280000
 * Every sample cached (one Residency + ClairvoyantPolicy, as the mount's CacheIndex holds them);
 * the order moves between two seeded permutations. Side by side in one run:
 *   one-shot: the re-key as CacheIndex ran it before (keys computed without the lock, all applied
 *     in one hold; every request a full run);
 *   rekeyer: Rekeyer (applied 4,096 per hold; requests merged).
 * Measured: (1) one re-key: its wall time, and the longest wait of a probe "open" that takes the
 * lock every ~50 us meanwhile (what an open's hit check waits at worst: the longest hold);
 * (2) 100 re-key requests queued at once on a pool of 4 (the mount's background pool): the time
 * until all are served, and the runs done (next-use lookups / n). Medians: of 5 runs after 2
 * warm-ups for (1), of 3 after 1 for (2).
 */
public class RekeyBench {
  static final class Order implements NextUse {
    volatile long[] at;
    final java.util.concurrent.atomic.LongAdder lookups = new java.util.concurrent.atomic.LongAdder();

    @Override
    public long after(int sample) {
      lookups.increment();
      return at[sample];
    }

    @Override
    public long now() {
      return 0;
    }
  }

  static final Residency.Events NO_EVENTS =
      new Residency.Events() {
        @Override
        public void added(int sample) {}

        @Override
        public void evicting(int sample) {}
      };

  static long[] permutation(int n, long seed) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    Random r = new Random(seed);
    for (int i = n - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    long[] at = new long[n];
    for (int i = 0; i < n; i++) {
      at[p[i]] = i;
    }
    return at;
  }

  /** The re-key as CacheIndex.orderChanged ran it before issue 39's change. */
  static void oneShot(Object lock, Residency res) {
    CachePolicy policy;
    CachePolicy.Reorder r;
    synchronized (lock) {
      policy = res.policy();
      r = policy.beginReorder(res.residents());
    }
    try {
      r.compute(Integer.MAX_VALUE);
    } finally {
      synchronized (lock) {
        policy.applyReorder(r);
        policy.endReorder(r);
      }
    }
  }

  /** Runs {@code rekey} while a probe takes the lock every ~50 us: {wall ns, longest wait ns}. */
  static long[] probed(Object lock, Residency res, Runnable rekey) throws Exception {
    AtomicLong longest = new AtomicLong();
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    Thread probe =
        new Thread(
            () -> {
              int s = 0;
              while (!done.get()) {
                long t0 = System.nanoTime();
                synchronized (lock) {
                  res.isResident(s++ % 1000);
                }
                long w = System.nanoTime() - t0;
                if (w > longest.get()) {
                  longest.set(w);
                }
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
              }
            });
    probe.start();
    long t0 = System.nanoTime();
    rekey.run();
    long wall = System.nanoTime() - t0;
    done.set(true);
    probe.join();
    return new long[] {wall, longest.get()};
  }

  static double median(double[] v) {
    double[] c = v.clone();
    java.util.Arrays.sort(c);
    return c[c.length / 2];
  }

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    Order order = new Order();
    long[][] orders = {permutation(n, 1), permutation(n, 2)};
    order.at = orders[0];
    ClairvoyantPolicy p = new ClairvoyantPolicy(new PolicyContext(n, null, order, null));
    Residency res = new Residency(n, p, n, NO_EVENTS);
    for (int s = 0; s < n; s++) {
      res.accessed(s, false);
      res.admit(s, 1);
    }
    Object lock = new Object();
    Rekeyer rekeyer = new Rekeyer(lock, res);
    String[] names = {"one-shot", "rekeyer"};
    Runnable[] kinds = {() -> oneShot(lock, res), rekeyer::request};
    int turn = 0;
    System.out.printf(Locale.ROOT, "%,d cached samples, clairvoyant; medians%n", n);
    for (int k = 0; k < 2; k++) {
      double[] wall = new double[5];
      double[] hold = new double[5];
      for (int i = -2; i < 5; i++) {
        order.at = orders[++turn % 2];
        long[] w = probed(lock, res, kinds[k]);
        if (i >= 0) {
          wall[i] = w[0] / 1e6;
          hold[i] = w[1] / 1e6;
        }
      }
      System.out.printf(
          Locale.ROOT,
          "one re-key, %-8s: %7.1f ms wall, longest wait for the lock %7.2f ms%n",
          names[k],
          median(wall),
          median(hold));
    }
    for (int k = 0; k < 2; k++) {
      double[] wall = new double[3];
      double[] hold = new double[3];
      double[] runs = new double[3];
      for (int i = -1; i < 3; i++) {
        order.at = orders[++turn % 2];
        Runnable kind = kinds[k];
        long before = order.lookups.sum();
        long[] w =
            probed(
                lock,
                res,
                () -> {
                  ExecutorService pool = Executors.newFixedThreadPool(4);
                  for (int q = 0; q < 100; q++) {
                    pool.execute(kind);
                  }
                  pool.shutdown();
                  try {
                    pool.awaitTermination(1, TimeUnit.HOURS);
                  } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                  }
                });
        if (i >= 0) {
          wall[i] = w[0] / 1e6;
          hold[i] = w[1] / 1e6;
          runs[i] = (double) (order.lookups.sum() - before) / n;
        }
      }
      System.out.printf(
          Locale.ROOT,
          "100 queued re-keys, %-8s: %8.1f ms until served (%.0f runs), longest wait for the lock"
              + " %7.2f ms%n",
          names[k],
          median(wall),
          median(runs),
          median(hold));
    }
    p.checkInvariants();
  }
}
