package org.hintfs.policy;

/**
 * Least frequently used: evicts the cached sample read the fewest times so far (ties: the lower
 * id); admits every miss. Frequencies count every access, cached or not, and are never reset.
 */
public final class LfuPolicy extends HeapPolicy {
  private final int[] freq;

  public LfuPolicy(PolicyContext ctx) {
    super(ctx.samples());
    freq = new int[ctx.samples()];
  }

  @Override
  int compare(int a, int b) {
    return freq[a] != freq[b] ? Integer.compare(freq[a], freq[b]) : Integer.compare(a, b);
  }

  @Override
  public String name() {
    return "lfu";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {
    freq[sample]++;
    heap.update(sample);
  }

  @Override
  public boolean admit(int sample) {
    return true;
  }
}
