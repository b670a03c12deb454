package org.hintfs.policy;

import java.util.BitSet;

/**
 * CoorDL's MinIO cache: keep whatever arrives until the cache is full, then never evict and never
 * admit again. Good for uniform epochs (every cached sample hits once per epoch, no thrashing).
 */
public final class StaticPolicy implements CachePolicy {
  private final BitSet cached;
  private int size;

  public StaticPolicy(PolicyContext ctx) {
    cached = new BitSet(ctx.samples());
  }

  @Override
  public String name() {
    return "static";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {}

  @Override
  public boolean admit(int sample) {
    return false;
  }

  @Override
  public void added(int sample) {
    if (!cached.get(sample)) {
      cached.set(sample);
      size++;
    }
  }

  @Override
  public void removed(int sample) {
    if (cached.get(sample)) {
      cached.clear(sample);
      size--;
    }
  }

  @Override
  public int victim() {
    return -1;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public boolean contains(int sample) {
    return cached.get(sample);
  }

  @Override
  public void checkInvariants() {
    if (cached.cardinality() != size) {
      throw new IllegalStateException("static size " + size + " but " + cached.cardinality());
    }
  }
}
