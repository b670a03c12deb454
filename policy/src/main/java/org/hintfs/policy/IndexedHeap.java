package org.hintfs.policy;

import java.util.Arrays;

/**
 * A binary heap of sample ids with O(log n) update and removal of any member: the heap array holds
 * ids, {@code pos[id]} is where each sits (-1 when absent). The order comes from a comparator over
 * ids, which reads whatever primitive array the owner keeps (a score, a count, a next-use
 * position): when that value changes, the owner calls {@link #update}.
 *
 * <p>8 bytes per sample (the heap slot and the position), no object per entry.
 */
public final class IndexedHeap {
  /** Orders two sample ids; negative if {@code a} belongs nearer the top. */
  @FunctionalInterface
  public interface Order {
    int compare(int a, int b);
  }

  private final int[] heap;
  private final int[] pos;
  private final Order order;
  private int size;

  /** A heap over ids {@code 0..samples-1}. */
  public IndexedHeap(int samples, Order order) {
    this.heap = new int[samples];
    this.pos = new int[samples];
    Arrays.fill(pos, -1);
    this.order = order;
  }

  public int size() {
    return size;
  }

  public boolean contains(int s) {
    return pos[s] >= 0;
  }

  /** The top id, or -1 if empty. */
  public int peek() {
    return size == 0 ? -1 : heap[0];
  }

  /** Adds an id (no-op if present). */
  public void add(int s) {
    if (pos[s] >= 0) {
      return;
    }
    heap[size] = s;
    pos[s] = size;
    size++;
    up(size - 1);
  }

  /** Removes an id (no-op if absent). */
  public void remove(int s) {
    int i = pos[s];
    if (i < 0) {
      return;
    }
    size--;
    pos[s] = -1;
    if (i == size) {
      return;
    }
    int last = heap[size];
    heap[i] = last;
    pos[last] = i;
    if (!up(i)) {
      down(i);
    }
  }

  /** Restores the order after the key of {@code s} changed (no-op if absent). */
  public void update(int s) {
    int i = pos[s];
    if (i >= 0 && !up(i)) {
      down(i);
    }
  }

  private boolean up(int i) {
    int s = heap[i];
    int start = i;
    while (i > 0) {
      int p = (i - 1) >>> 1;
      if (order.compare(s, heap[p]) >= 0) {
        break;
      }
      heap[i] = heap[p];
      pos[heap[i]] = i;
      i = p;
    }
    heap[i] = s;
    pos[s] = i;
    return i != start;
  }

  private void down(int i) {
    int s = heap[i];
    while (true) {
      int c = 2 * i + 1;
      if (c >= size) {
        break;
      }
      if (c + 1 < size && order.compare(heap[c + 1], heap[c]) < 0) {
        c++;
      }
      if (order.compare(heap[c], s) >= 0) {
        break;
      }
      heap[i] = heap[c];
      pos[heap[i]] = i;
      i = c;
    }
    heap[i] = s;
    pos[s] = i;
  }

  /** Throws if a parent is ordered after a child or a position is wrong. */
  public void check() {
    for (int i = 0; i < size; i++) {
      if (pos[heap[i]] != i) {
        throw new IllegalStateException("heap position of " + heap[i] + " is wrong");
      }
      if (i > 0 && order.compare(heap[i], heap[(i - 1) >>> 1]) < 0) {
        throw new IllegalStateException("heap order broken at " + i);
      }
    }
  }
}
