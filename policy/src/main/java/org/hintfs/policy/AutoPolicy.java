package org.hintfs.policy;

/**
 * The default: uses what the hints allow, deciding at every eviction. Clairvoyant when the future
 * order is known, importance (SHADE's APP) when scores are known, plain frequency otherwise.
 *
 * <p>All three track the same cached set all the time, so switching when a hint arrives costs
 * nothing and loses nothing.
 */
public final class AutoPolicy implements CachePolicy {
  private final PolicyContext ctx;
  private final LfuPolicy lfu;
  private final ShadePolicy shade;
  private final ClairvoyantPolicy clairvoyant;

  public AutoPolicy(PolicyContext ctx) {
    this.ctx = ctx;
    this.lfu = new LfuPolicy(ctx);
    this.shade = new ShadePolicy(ctx);
    this.clairvoyant = ctx.nextUse() == null ? null : new ClairvoyantPolicy(ctx);
  }

  /** The policy deciding now. */
  CachePolicy active() {
    if (clairvoyant != null && ctx.nextUse().known()) {
      return clairvoyant;
    }
    if (ctx.importance().knownCount() > 0) {
      return shade;
    }
    return lfu;
  }

  @Override
  public String name() {
    return "auto";
  }

  /** "auto (shade)" and so on, for status output. */
  public String describe() {
    return "auto (" + active().name() + ")";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {
    lfu.recordAccess(sample, hit);
    shade.recordAccess(sample, hit);
    if (clairvoyant != null) {
      clairvoyant.recordAccess(sample, hit);
    }
  }

  @Override
  public void prefetching(int sample) {
    if (clairvoyant != null) {
      clairvoyant.prefetching(sample);
    }
  }

  @Override
  public void orderChanged(int[] cached) {
    if (clairvoyant != null) {
      clairvoyant.orderChanged(cached);
    }
  }

  @Override
  public Reorder beginReorder(int[] cached) {
    return clairvoyant == null ? null : clairvoyant.beginReorder(cached);
  }

  @Override
  public void applyReorder(Reorder r) {
    clairvoyant.applyReorder(r);
  }

  @Override
  public void endReorder(Reorder r) {
    clairvoyant.endReorder(r);
  }

  @Override
  public boolean admit(int sample) {
    return active().admit(sample);
  }

  @Override
  public void added(int sample) {
    lfu.added(sample);
    shade.added(sample);
    if (clairvoyant != null) {
      clairvoyant.added(sample);
    }
  }

  @Override
  public void removed(int sample) {
    lfu.removed(sample);
    shade.removed(sample);
    if (clairvoyant != null) {
      clairvoyant.removed(sample);
    }
  }

  @Override
  public int victim() {
    return active().victim();
  }

  @Override
  public int size() {
    return lfu.size();
  }

  @Override
  public boolean contains(int sample) {
    return lfu.contains(sample);
  }

  @Override
  public void checkInvariants() {
    lfu.checkInvariants();
    shade.checkInvariants();
    if (clairvoyant != null) {
      clairvoyant.checkInvariants();
    }
    if (shade.size() != lfu.size() || (clairvoyant != null && clairvoyant.size() != lfu.size())) {
      throw new IllegalStateException("auto's policies disagree on the cached set");
    }
  }
}
