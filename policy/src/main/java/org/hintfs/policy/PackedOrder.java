package org.hintfs.policy;

import java.util.BitSet;
import org.hintfs.policy.sampler.ShuffleReplay;

/**
 * The samples inside one packed file (an HDF5 dataset, a file of fixed-size records) and the order
 * a seeded {@code DataLoader(shuffle=True)} reads them in: what a packed file's pages are needed
 * for, and when.
 *
 * <p>Samples: {@code count} records of {@code stride} bytes from {@code base}; sample {@code i} is
 * bytes {@code base + i*stride} to {@code base + (i+1)*stride}. Bytes outside them (a header, an
 * index) are needed always.
 *
 * <p>Time: positions in the reader's order, absolute across epochs, {@code epoch*count + p} for the
 * {@code p}-th sample of {@code epoch}'s permutation ({@link ShuffleReplay}, bit-exact with torch).
 * A sample is read in the current epoch when a READ covers its middle byte (the kernel's
 * read-around touches the edges of its neighbours, not their middles); its next use is its position
 * in this epoch if it is not read yet, else in the next one. The epoch ends when every sample of it
 * was read. {@link #lowMark}: the first position of the epoch whose sample is not read yet, where
 * the slowest of the loader's workers is.
 *
 * <p>Thread-safe (one monitor); every call is O(samples touched), except an epoch's end, which
 * builds the epoch after the next one (one permutation of {@code count}).
 */
public final class PackedOrder {
  private final long base;
  private final long stride;
  private final int count;
  private final ShuffleReplay replay;
  private int epoch;
  private int[] order; // this epoch's permutation
  private int[] inverse; // sample -> its position in this epoch
  private int[] nextOrder;
  private int[] nextInverse;
  private final BitSet read = new BitSet();
  private int readCount;
  private int lowMark;

  /** The samples of a file as {@code count} records of {@code stride} bytes from {@code base}. */
  public PackedOrder(
      long base, long stride, int count, long seed, int epoch, boolean persistentWorkers) {
    if (stride <= 0 || count <= 0 || base < 0) {
      throw new IllegalArgumentException("stride and count must be positive, base not negative");
    }
    this.base = base;
    this.stride = stride;
    this.count = count;
    this.replay = new ShuffleReplay(count, seed, persistentWorkers);
    this.epoch = epoch;
    this.order = replay.epoch(epoch);
    this.inverse = inverse(order);
    this.nextOrder = replay.epoch(epoch + 1);
    this.nextInverse = inverse(nextOrder);
  }

  private static int[] inverse(int[] order) {
    int[] inv = new int[order.length];
    for (int p = 0; p < order.length; p++) {
      inv[order[p]] = p;
    }
    return inv;
  }

  /** Samples in the file. */
  public int count() {
    return count;
  }

  /** Bytes of one sample. */
  public long stride() {
    return stride;
  }

  /** The epoch the reader is in. */
  public synchronized int epoch() {
    return epoch;
  }

  /**
   * A READ of {@code length} bytes at {@code offset}: the samples whose middle it covers are read.
   *
   * @return those not read before in this epoch
   */
  public synchronized int[] read(long offset, int length) {
    int[] fresh = new int[4];
    int n = 0;
    long end = offset + length;
    long first = Math.max(0, (offset - base) / stride);
    for (long s = first; s < count; s++) {
      long mid = base + s * stride + stride / 2;
      if (mid >= end) {
        break;
      }
      if (mid >= offset && !read.get((int) s)) {
        read.set((int) s);
        readCount++;
        if (n == fresh.length) {
          fresh = java.util.Arrays.copyOf(fresh, 2 * n);
        }
        fresh[n++] = (int) s;
      }
    }
    while (lowMark < count && read.get(order[lowMark])) {
      lowMark++;
    }
    if (readCount >= count) {
      nextEpoch();
    }
    return n == fresh.length ? fresh : java.util.Arrays.copyOf(fresh, n);
  }

  /** Where sample {@code s} starts in the file. */
  public long sampleStart(int s) {
    return base + s * stride;
  }

  private void nextEpoch() {
    epoch++;
    order = nextOrder;
    inverse = nextInverse;
    nextOrder = replay.epoch(epoch + 1);
    nextInverse = inverse(nextOrder);
    read.clear();
    readCount = 0;
    lowMark = 0;
  }

  /** The first absolute position whose sample is not read yet. */
  public synchronized long lowMark() {
    return (long) epoch * count + lowMark;
  }

  /**
   * The sample at absolute position {@code position} (this epoch or the next) as {@code {offset,
   * length}}, or null if it is read already or outside those two epochs.
   */
  public synchronized long[] rangeAt(long position) {
    long p = position - (long) epoch * count;
    int s;
    if (p >= 0 && p < count) {
      s = order[(int) p];
      if (read.get(s)) {
        return null;
      }
    } else if (p >= count && p < 2L * count) {
      s = nextOrder[(int) (p - count)];
    } else {
      return null;
    }
    return new long[] {base + s * stride, stride};
  }

  /**
   * The soonest absolute position at which bytes {@code from} to {@code to} (exclusive) are needed:
   * the soonest next use of a sample they overlap; {@link Long#MIN_VALUE} if they hold bytes
   * outside every sample (needed always).
   */
  public synchronized long nextUse(long from, long to) {
    long end = base + stride * count;
    if (from < base || to > end) {
      return Long.MIN_VALUE;
    }
    long first = (from - base) / stride;
    long last = (to - 1 - base) / stride;
    long soonest = Long.MAX_VALUE;
    for (long s = first; s <= last; s++) {
      int i = (int) s;
      long at =
          read.get(i)
              ? (long) (epoch + 1) * count + nextInverse[i]
              : (long) epoch * count + inverse[i];
      soonest = Math.min(soonest, at);
    }
    return soonest;
  }
}
