package org.hintfs.policy;

/**
 * SHADE's Adaptive Priority-aware Prediction (APP), Algorithm 1 of the paper.
 *
 * <p>State: the ghost cache is {@link Importance}, every sample's latest score; the priority queue
 * is an indexed min-heap over the cached samples keyed by that score, updated in place whenever a
 * score changes (APP is "a dynamic policy that updates the importance score of a data sample as
 * soon as the importance score changes").
 *
 * <p>Admission when full (lines 12-22): a missed sample with a known score is admitted if its score
 * is at least the minimum cached score, evicting that minimum; a sample with no score yet is not
 * admitted ("evicting a known sample for an unknown one may not be beneficial"). Unscored samples
 * that entered while there was room count as the least important.
 */
public final class ShadePolicy extends HeapPolicy {
  private final Importance importance;

  public ShadePolicy(PolicyContext ctx) {
    super(ctx.samples());
    importance = ctx.importance();
    importance.addListener(heap::update);
  }

  @Override
  int compare(int a, int b) {
    int c = Float.compare(key(a), key(b));
    return c != 0 ? c : Integer.compare(a, b);
  }

  private float key(int s) {
    float v = importance.score(s);
    return Float.isNaN(v) ? Float.NEGATIVE_INFINITY : v;
  }

  @Override
  public String name() {
    return "shade";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {}

  @Override
  public boolean admit(int sample) {
    if (!importance.known(sample)) {
      return false;
    }
    int min = heap.peek();
    return min < 0 || key(sample) >= key(min);
  }
}
