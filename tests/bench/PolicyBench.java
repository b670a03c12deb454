import java.util.Locale;
import org.hintfs.backing.SourceObject;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.catalog.CatalogBuilder;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.Importance;
import org.hintfs.policy.Policies;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.hintfs.policy.sim.TraceGenerators;

/**
 * Heap per file and the policies' speed, run with the built jar on the classpath:
 *   java -Xmx12g -cp fs/target/hintfs.jar tests/bench/PolicyBench.java memory 14000000
 *   java -cp fs/target/hintfs.jar tests/bench/PolicyBench.java speed 1000000
 * memory: heap per sample of a synthetic ImageNet-21k-like catalog (21,841 classes, names like
 *   n01440764_10026.JPEG, 20-byte version tags), then of each policy's state over it, measured as
 *   used heap after System.gc() (approximate, but the arrays dominate).
 * speed: ns per simulated access for each policy, uniform epochs, cache at 10%; a timed loop after
 *   a warm-up run of the same size (not JMH).
 */
public class PolicyBench {
  static long used() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  public static void main(String[] args) {
    String mode = args[0];
    int n = Integer.parseInt(args[1]);
    if (mode.equals("memory")) {
      memory(n);
    } else {
      speed(n);
    }
  }

  static void memory(int n) {
    int classes = 21_841;
    long base = used();
    CatalogBuilder b = new CatalogBuilder();
    for (int i = 0; i < n; i++) {
      String cls = String.format(Locale.ROOT, "n%08d", i % classes);
      b.add(SourceObject.file("train/" + cls + "/" + cls + "_" + (10000 + i / classes) + ".JPEG",
          110_000, "tag-0123456789abcdef", 0));
    }
    Catalog cat = b.build();
    b = null;
    long afterCatalog = used();
    ImageFolderView view = ImageFolderView.build(cat, cat.lookup("train"));
    long afterView = used();
    PolicyContext ctx = new PolicyContext(cat.entryCount(), new Importance(cat.entryCount()), null,
        null);
    long afterImportance = used();
    System.out.printf("| component | bytes per sample |%n| --- | --- |%n");
    System.out.printf("| catalog (arrays + names + tags; heapBytes() says %.1f) | %.1f |%n",
        (double) cat.heapBytes() / n, (double) (afterCatalog - base) / n);
    System.out.printf("| ImageFolderView | %.1f |%n", (double) (afterView - afterCatalog) / n);
    System.out.printf("| Importance (ghost scores) | %.1f |%n",
        (double) (afterImportance - afterView) / n);
    for (String p : new String[] {"lru", "lfu", "static", "shade", "impact", "auto"}) {
      long before = used();
      CachePolicy policy = Policies.create(p, ctx);
      long after = used();
      System.out.printf("| policy %s | %.1f |%n", p, (double) (after - before) / n);
      if (policy.size() < 0) {
        System.out.println(view.samples()); // keep both alive
      }
    }
  }

  static void speed(int n) {
    Trace t = TraceGenerators.uniform(n, 3, 1);
    System.out.printf("| policy | ns per access (%d samples, %d accesses, cache 10%%) |%n| --- | --- |%n",
        n, t.length());
    for (String p : new String[] {"lru", "lfu", "static", "shade", "impact", "clairvoyant", "auto"}) {
      Simulator.run(t, p, 0.1, Simulator.Options.PLAIN); // warm-up
      long t0 = System.nanoTime();
      Simulator.run(t, p, 0.1, Simulator.Options.PLAIN);
      System.out.printf("| %s | %.0f |%n", p, (System.nanoTime() - t0) / (double) t.length());
    }
  }
}
