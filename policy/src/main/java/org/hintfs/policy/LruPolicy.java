package org.hintfs.policy;

import java.util.Arrays;

/**
 * Least recently used: evicts the cached sample whose last access is oldest; admits every miss.
 *
 * <p>A doubly linked list threaded through two int arrays (no node objects): {@code prev} and
 * {@code next} per sample, -1 at the ends; the head is the most recently used. 8 bytes per sample
 * plus a bit for membership.
 */
public final class LruPolicy implements CachePolicy {
  private static final int NONE = -1;

  private final int[] prev;
  private final int[] next;
  private final java.util.BitSet cached;
  private int head = NONE;
  private int tail = NONE;
  private int size;

  /** A policy over {@code samples} dense ids. */
  public LruPolicy(int samples) {
    prev = new int[samples];
    next = new int[samples];
    Arrays.fill(prev, NONE);
    Arrays.fill(next, NONE);
    cached = new java.util.BitSet(samples);
  }

  @Override
  public String name() {
    return "lru";
  }

  @Override
  public void recordAccess(int sample, boolean hit) {
    if (cached.get(sample)) {
      unlink(sample);
      pushHead(sample);
    }
  }

  @Override
  public boolean admit(int sample) {
    return true;
  }

  @Override
  public void added(int sample) {
    if (!cached.get(sample)) {
      cached.set(sample);
      size++;
      pushHead(sample);
    }
  }

  @Override
  public void removed(int sample) {
    if (cached.get(sample)) {
      unlink(sample);
      cached.clear(sample);
      size--;
    }
  }

  @Override
  public int victim() {
    return tail;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public boolean contains(int sample) {
    return cached.get(sample);
  }

  private void pushHead(int s) {
    prev[s] = NONE;
    next[s] = head;
    if (head != NONE) {
      prev[head] = s;
    }
    head = s;
    if (tail == NONE) {
      tail = s;
    }
  }

  private void unlink(int s) {
    int p = prev[s];
    int n = next[s];
    if (p != NONE) {
      next[p] = n;
    } else {
      head = n;
    }
    if (n != NONE) {
      prev[n] = p;
    } else {
      tail = p;
    }
    prev[s] = NONE;
    next[s] = NONE;
  }

  @Override
  public void checkInvariants() {
    int count = 0;
    int last = NONE;
    for (int s = head; s != NONE; s = next[s]) {
      if (!cached.get(s) || prev[s] != last) {
        throw new IllegalStateException("lru list broken at " + s);
      }
      last = s;
      if (++count > size) {
        throw new IllegalStateException("lru list longer than its size " + size);
      }
    }
    if (count != size || last != tail || cached.cardinality() != size) {
      throw new IllegalStateException("lru size " + size + " but list holds " + count);
    }
  }
}
