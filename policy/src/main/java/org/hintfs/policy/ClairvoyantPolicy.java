package org.hintfs.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * Belady's MIN: evicts the cached sample whose next use is furthest in the future, and bypasses a
 * missed sample whose own next use is further than every cached one's (caching it would only
 * displace something needed sooner). With equal sizes this maximizes hits for a known order.
 *
 * <p>State: {@code next[s]}, the position of the next access of {@code s} after its latest one, and
 * a max-heap of cached samples on it, updated on every access.
 */
public final class ClairvoyantPolicy extends HeapPolicy {
  private final NextUse nextUse;
  private final long[] next;

  public ClairvoyantPolicy(PolicyContext ctx) {
    super(ctx.samples());
    if (ctx.nextUse() == null) {
      throw new IllegalArgumentException(
          "clairvoyant needs the future order: a seed or order hint (or a trace)");
    }
    nextUse = ctx.nextUse();
    next = new long[ctx.samples()];
    Arrays.fill(next, NextUse.NEVER);
  }

  @Override
  int compare(int a, int b) {
    return next[a] != next[b] ? Long.compare(next[b], next[a]) : Integer.compare(a, b);
  }

  @Override
  public String name() {
    return "clairvoyant";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {
    rekey(sample);
  }

  @Override
  public void prefetching(int sample) {
    rekey(sample);
  }

  private void rekey(int sample) {
    next[sample] = nextUse.after(sample);
    heap.update(sample);
    for (Rekeying r : reorders) {
      r.rekeyedSince.set(sample);
    }
  }

  /** Reorders begun and not yet ended (usually none or one). */
  private final List<Rekeying> reorders = new ArrayList<>();

  /** One re-keying of the cached samples, computed outside the caller's lock a slice at a time. */
  private final class Rekeying implements Reorder {
    final int[] cached;
    final BitSet rekeyedSince = new BitSet();
    long[] keys = new long[0];
    int from; // the slice computed last: cached[from, to)
    int to;

    Rekeying(int[] cached) {
      this.cached = cached;
    }

    @Override
    public boolean compute(int max) {
      if (to >= cached.length) {
        return false;
      }
      from = to;
      to = (int) Math.min(cached.length, (long) from + max);
      if (keys.length < to - from) {
        keys = new long[to - from];
      }
      for (int i = from; i < to; i++) {
        keys[i - from] = nextUse.after(cached[i]);
      }
      return true;
    }
  }

  @Override
  public Reorder beginReorder(int[] cached) {
    Rekeying r = new Rekeying(cached);
    reorders.add(r);
    return r;
  }

  @Override
  public void applyReorder(Reorder reorder) {
    Rekeying r = (Rekeying) reorder;
    for (int i = r.from; i < r.to; i++) {
      int s = r.cached[i];
      if (!r.rekeyedSince.get(s) && heap.contains(s)) {
        next[s] = r.keys[i - r.from];
        heap.update(s);
      }
    }
    r.from = r.to; // applied: a second call applies nothing
  }

  @Override
  public void endReorder(Reorder reorder) {
    reorders.remove((Rekeying) reorder);
  }

  @Override
  public void orderChanged(int[] cached) {
    for (int s : cached) {
      next[s] = nextUse.after(s);
      heap.update(s);
    }
  }

  @Override
  public boolean admit(int sample) {
    int far = heap.peek();
    return far < 0 || next[sample] < next[far];
  }
}
