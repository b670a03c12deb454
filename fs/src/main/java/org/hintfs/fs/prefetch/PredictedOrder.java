package org.hintfs.fs.prefetch;

import java.util.Arrays;
import org.hintfs.policy.NextUse;

/**
 * The order this rank will read catalog ids in this epoch, and where the reader is in it.
 *
 * <p>It is the {@link NextUse} the clairvoyant policy consults: the next use of a sample is its
 * position in the order if that is still ahead of the reader, else never (this epoch's order is all
 * that is known). A sample read twice in one epoch (DistributedSampler's padding) keeps its first
 * position; that is what the reader meets first.
 */
public final class PredictedOrder implements NextUse {
  private volatile int[] order = null;
  private volatile int[] positionOf = new int[0];
  private volatile int position;

  /** Replaces the order (a seed or epoch hint); the reader starts at its beginning. */
  public synchronized void set(int[] ids, int entries) {
    int[] pos = new int[entries];
    Arrays.fill(pos, -1);
    for (int i = ids.length - 1; i >= 0; i--) {
      pos[ids[i]] = i;
    }
    positionOf = pos;
    order = ids;
    position = 0;
  }

  /** Forgets the order (a wrong hint): prefetching and clairvoyance stop. */
  public synchronized void clear() {
    order = null;
    position = 0;
  }

  /** The order, or null. */
  public int[] order() {
    return order;
  }

  /** Where the reader is: the index of the next expected read. */
  public int position() {
    return position;
  }

  void moveTo(int p) {
    position = p;
  }

  /** The position of an id in the order, or -1. */
  public int positionOf(int id) {
    int[] p = positionOf;
    return id >= 0 && id < p.length ? p[id] : -1;
  }

  @Override
  public boolean known() {
    return order != null;
  }

  @Override
  public long now() {
    return position;
  }

  @Override
  public long after(int sample) {
    int p = positionOf(sample);
    return p >= position ? p : NEVER;
  }
}
