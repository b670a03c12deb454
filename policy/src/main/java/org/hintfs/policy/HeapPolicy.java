package org.hintfs.policy;

/**
 * A policy whose cached set is one {@link IndexedHeap} and whose victim is its top: subclasses say
 * how two samples compare (the one to evict first is the smaller) and what to do on access.
 */
abstract class HeapPolicy implements CachePolicy {
  protected final IndexedHeap heap;

  HeapPolicy(int samples) {
    heap = new IndexedHeap(samples, this::compare);
  }

  /** Negative if {@code a} should be evicted before {@code b}. */
  abstract int compare(int a, int b);

  @Override
  public void added(int sample) {
    heap.add(sample);
  }

  @Override
  public void removed(int sample) {
    heap.remove(sample);
  }

  @Override
  public int victim() {
    return heap.peek();
  }

  @Override
  public int size() {
    return heap.size();
  }

  @Override
  public boolean contains(int sample) {
    return heap.contains(sample);
  }

  @Override
  public void checkInvariants() {
    heap.check();
  }
}
