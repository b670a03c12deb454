package org.hintfs.policy;

/**
 * ImPACT's importance-partitioned cache (sections III-C and III-D of the paper).
 *
 * <p>Regions: a sample is an H-sample if its score is at least the mean ({@link Importance#isHigh})
 * when it is admitted, and lives in the H-cache, an indexed min-heap on score (evict the least
 * important, admit a missed H-sample only if it beats that minimum). Other samples live in the
 * L-cache, evicted oldest first; their misses are meant to be served by substitution ({@link
 * SubstitutionChooser}), the missed sample being fetched in the background and admitted into the
 * L-cache.
 *
 * <p>Split: the H-cache's share of the entries is {@code fH / (fH + fL)}, the observed access
 * frequencies of H- and L-samples (ImPACT's Size_hcache equation), starting at ImPACT's initial 9:1
 * until 100 accesses are seen, and never leaving the L-cache under 5%.
 */
public final class ImpactPolicy implements CachePolicy {
  private static final double INITIAL_H_SHARE = 0.9;
  private static final double MIN_L_SHARE = 0.05;
  private static final int WARMUP_ACCESSES = 100;

  private final Importance importance;
  private final IndexedHeap hHeap;
  private final IndexedHeap lQueue;
  private final long[] seq;
  private long clock;
  private long hAccesses;
  private long lAccesses;

  public ImpactPolicy(PolicyContext ctx) {
    importance = ctx.importance();
    int n = ctx.samples();
    hHeap =
        new IndexedHeap(
            n,
            (a, b) -> {
              int c = Float.compare(key(a), key(b));
              return c != 0 ? c : Integer.compare(a, b);
            });
    seq = new long[n];
    lQueue = new IndexedHeap(n, (a, b) -> Long.compare(seq[a], seq[b]));
    importance.addListener(hHeap::update);
  }

  private float key(int s) {
    float v = importance.score(s);
    return Float.isNaN(v) ? Float.NEGATIVE_INFINITY : v;
  }

  /** The H-cache's target share of cached entries now. */
  double hShare() {
    long total = hAccesses + lAccesses;
    double hSamples = Math.max(1, importance.knownCount() * importance.highFraction());
    double lSamples = Math.max(1, importance.samples() - hSamples);
    double fH = hAccesses / hSamples;
    double fL = lAccesses / lSamples;
    double share = total < WARMUP_ACCESSES || fH + fL == 0 ? INITIAL_H_SHARE : fH / (fH + fL);
    return Math.min(share, 1 - MIN_L_SHARE);
  }

  private boolean hOverShare() {
    int total = hHeap.size() + lQueue.size();
    return total > 0 && hHeap.size() >= hShare() * total;
  }

  @Override
  public String name() {
    return "impact";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {
    if (importance.isHigh(sample)) {
      hAccesses++;
    } else {
      lAccesses++;
    }
  }

  @Override
  public boolean admit(int sample) {
    if (!importance.isHigh(sample)) {
      return true; // the L-cache refills with missed L-samples, evicting the oldest
    }
    int min = hHeap.peek();
    return min < 0 || !hOverShare() || key(sample) > key(min);
  }

  @Override
  public void added(int sample) {
    if (importance.isHigh(sample)) {
      hHeap.add(sample);
    } else {
      seq[sample] = ++clock;
      lQueue.add(sample);
    }
  }

  @Override
  public void removed(int sample) {
    hHeap.remove(sample);
    lQueue.remove(sample);
  }

  @Override
  public int victim() {
    if (hHeap.size() > 0 && (hOverShare() || lQueue.size() == 0)) {
      return hHeap.peek();
    }
    return lQueue.peek();
  }

  @Override
  public int size() {
    return hHeap.size() + lQueue.size();
  }

  @Override
  public boolean contains(int sample) {
    return hHeap.contains(sample) || lQueue.contains(sample);
  }

  /** True if the sample sits in the L-cache (a candidate substitute). */
  public boolean inLowCache(int sample) {
    return lQueue.contains(sample);
  }

  @Override
  public void checkInvariants() {
    hHeap.check();
    lQueue.check();
  }
}
