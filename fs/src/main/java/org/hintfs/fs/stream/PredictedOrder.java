package org.hintfs.fs.stream;

import java.util.Arrays;
import org.hintfs.policy.NextUse;

/**
 * The order one stream will read catalog ids in this epoch, and where its reader is in it.
 *
 * <p>Positions and time: the mount compares next uses across streams in one unit, nanoseconds of
 * estimated time. When an order is set, position {@code p} is mapped to {@code anchor + p *
 * nsPerOpen}, with the stream's measured pace; the map stays fixed for that order, so within one
 * stream time keeps exactly the order of positions (one stream alone gets Belady's MIN on
 * positions, as before streams). A reader that drifts from its map (a rank that speeds up once its
 * files are local, or stalls) gets a new one, from where it is at its measured pace ({@link
 * #reanchorIfDrifted}), and the cache re-keys: otherwise a fast rank's files would look needed
 * later than they are and lose their place to a slow rank's.
 *
 * <p>The next epoch's head: for a seed hint, the first window of the following epoch's order (what
 * {@code set_epoch(e + 1)} will read) is known too. Its positions continue after this order's end,
 * so the prefetcher fills the window across the epoch boundary and the reader starts the next epoch
 * on local files; the next epoch's own hint then replaces the whole order.
 *
 * <p>A sample read twice in one epoch (DistributedSampler's padding) keeps its first position; that
 * is what the reader meets first.
 */
public final class PredictedOrder {
  /** The pace assumed before a stream's own is measured: 1 ms per open. */
  static final double DEFAULT_NS_PER_OPEN = 1e6;

  private volatile int[] order = null;
  private volatile int[] positionOf = new int[0];
  // The next position holding the same id, or -1: an order may name a sample more than once
  // (DistributedSampler's padding, an order hint over several epochs).
  private volatile int[] nextSame = new int[0];
  private volatile int position;
  private volatile long anchorNs;
  private volatile int anchorPosition;
  private volatile double nsPerOpen = DEFAULT_NS_PER_OPEN;
  private volatile int[] nextHead;
  private volatile java.util.concurrent.atomic.AtomicLongArray read =
      new java.util.concurrent.atomic.AtomicLongArray(0);
  private volatile int behind = 64;
  // No position below this one is unread (lowMark() moves it on lazily).
  private volatile int low;

  /**
   * How many windows ({@link #setBehind}) a slow DataLoader worker may lag the furthest open with
   * its files still counted as about to be read: with large batches each worker is a batch or more
   * apart (4 workers x batch 256: 1,024 positions).
   */
  static final int LAG_WINDOWS = 8;

  private volatile java.util.Map<Integer, Integer> nextHeadPosition = java.util.Map.of();

  /**
   * An order's lookup tables: each id's first position (one int per catalog entry) and each
   * position's next of the same id. They depend on the order alone, so streams handed the same
   * order array (several jobs reading with one seed: {@code SamplerReplay} hands each the same)
   * share one, not one each; kept while the order is (the order is the weak key, and the tables do
   * not refer to it).
   */
  private record Index(int entries, int[] positionOf, int[] nextSame) {}

  private static final java.util.Map<int[], Index> INDEXES = new java.util.WeakHashMap<>();

  /** The tables of {@code ids}, built once per order array (arrays are keyed by identity). */
  private static Index indexOf(int[] ids, int entries) {
    synchronized (INDEXES) {
      Index x = INDEXES.get(ids);
      if (x != null && x.entries() == entries) {
        return x;
      }
    }
    int[] pos = new int[entries];
    Arrays.fill(pos, -1);
    int[] same = new int[ids.length];
    for (int i = ids.length - 1; i >= 0; i--) {
      same[i] = pos[ids[i]];
      pos[ids[i]] = i;
    }
    Index x = new Index(entries, pos, same);
    synchronized (INDEXES) {
      INDEXES.put(ids, x);
    }
    return x;
  }

  /**
   * Replaces the order; the reader starts at its beginning now, at {@code nsPerOpen}. The order is
   * not changed afterwards, here or by the caller: it may be shared with other streams.
   */
  public synchronized void set(int[] ids, int entries, double nsPerOpen) {
    Index x = indexOf(ids, entries);
    positionOf = x.positionOf();
    nextSame = x.nextSame();
    position = 0;
    low = 0;
    anchorPosition = 0;
    anchorNs = Streams.nowNs();
    this.nsPerOpen = nsPerOpen > 0 ? nsPerOpen : DEFAULT_NS_PER_OPEN;
    nextHead = null;
    nextHeadPosition = java.util.Map.of();
    read = new java.util.concurrent.atomic.AtomicLongArray((ids.length + 63) / 64);
    order = ids;
  }

  /**
   * Sets the stream's window: DataLoader workers read their batches side by side, so the reader's
   * position (the furthest open) runs ahead of a slower worker's files, by up to {@link
   * #LAG_WINDOWS} windows ({@link #lowMark}). Those keep their next use (now) until they are read.
   */
  public void setBehind(int positions) {
    behind = Math.max(0, positions);
  }

  /** Marks position {@code p} read. */
  public void markRead(int p) {
    java.util.concurrent.atomic.AtomicLongArray r = read;
    if (p >= 0 && p / 64 < r.length()) {
      r.getAndAccumulate(p / 64, 1L << (p % 64), (a, b) -> a | b);
    }
  }

  /**
   * The oldest position still to be read: the first unread one, but at most {@link #LAG_WINDOWS}
   * windows behind the furthest open (a file the reader skipped must not hold it back for good). A
   * slower DataLoader worker's files lie between it and {@link #position}.
   */
  public int lowMark() {
    int[] o = order;
    int l = low;
    int n = o == null ? 0 : o.length;
    int pos = position;
    l = Math.max(l, pos - LAG_WINDOWS * Math.max(1, behind));
    while (l < n && l < pos && isRead(l)) {
      l++;
    }
    low = l;
    return l;
  }

  /** True if the reader has opened position {@code p}. */
  public boolean isRead(int p) {
    java.util.concurrent.atomic.AtomicLongArray r = read;
    return p / 64 < r.length() && (r.get(p / 64) & (1L << (p % 64))) != 0;
  }

  /** The first reads of the epoch after this one (null: unknown). */
  public synchronized void setNextHead(int[] head) {
    java.util.Map<Integer, Integer> m = new java.util.HashMap<>();
    for (int i = head.length - 1; i >= 0; i--) {
      m.put(head[i], i);
    }
    nextHeadPosition = m;
    nextHead = head;
  }

  /** Positions known: this order, then the next epoch's head. */
  public int extent() {
    int[] o = order;
    int[] h = nextHead;
    return o == null ? 0 : o.length + (h == null ? 0 : h.length);
  }

  /**
   * The id at position {@code i} (below {@link #extent}), past the end from the next head; -1 if
   * there is none (the order changed meanwhile).
   */
  public int at(int i) {
    // Read once each: a new order may be published between extent() and here (then -1).
    int[] o = order;
    int[] h = nextHead;
    if (o == null || i < 0) {
      return -1;
    }
    if (i < o.length) {
      return o[i];
    }
    return h != null && i - o.length < h.length ? h[i - o.length] : -1;
  }

  /** Replaces the order, at the default pace. */
  public void set(int[] ids, int entries) {
    set(ids, entries, DEFAULT_NS_PER_OPEN);
  }

  /** Forgets the order (a wrong hint): prefetching and clairvoyance stop. */
  public synchronized void clear() {
    order = null;
    nextHead = null;
    nextHeadPosition = java.util.Map.of();
    position = 0;
    low = 0;
  }

  /** The order, or null. */
  public int[] order() {
    return order;
  }

  /** True while an order is known. */
  public boolean known() {
    return order != null;
  }

  /** Where the reader is: the index of the next expected read. */
  public int position() {
    return position;
  }

  /** Moves the reader to position {@code p} (as it reads on: the time map stays). */
  public void moveTo(int p) {
    position = p;
  }

  /**
   * Places the reader at position {@code p} now, and draws the time map from there: for a jump that
   * no reading took time for (a new order whose first positions were read before it was set, a
   * recognition that lands after its reader read on). With {@link #moveTo} the map would put the
   * reader {@code p} opens in the future, and its files would look needed later than every other
   * stream's: the first to be evicted. Keys computed with the old map are stale: the caller
   * re-keys.
   */
  public synchronized void startAt(int p) {
    position = p;
    anchorPosition = p;
    anchorNs = Streams.nowNs();
  }

  /** True if this order's lookup tables are {@code other}'s (the same order, shared). */
  boolean sharesTablesWith(PredictedOrder other) {
    return positionOf == other.positionOf && nextSame == other.nextSame;
  }

  /** The first position of an id in the order, or -1. */
  public int positionOf(int id) {
    int[] p = positionOf;
    return id >= 0 && id < p.length ? p[id] : -1;
  }

  /** The first position at or after {@code from} that holds {@code id}, or -1. */
  public int occurrenceFrom(int id, int from) {
    int p = positionOf(id);
    int[] same = nextSame;
    while (p >= 0 && p < from) {
      p = p < same.length ? same[p] : -1;
    }
    return p;
  }

  /** The pace this order's time map uses. */
  public double nsPerOpen() {
    return nsPerOpen;
  }

  /** Estimated time (ns, {@link Streams#nowNs} clock) of the next read of {@code id}, or NEVER. */
  public long nextUse(int id) {
    int[] o = order;
    if (o == null) {
      return NextUse.NEVER;
    }
    int position = this.position;
    int q = occurrenceFrom(id, lowMark());
    if (q >= 0 && q < position && !isRead(q)) {
      return timeAt(position); // a slower worker's file, behind the furthest open: now
    }
    int p = occurrenceFrom(id, position);
    if (p < 0) {
      Integer k = nextHeadPosition.get(id);
      p = k == null ? -1 : o.length + k;
    }
    return p >= 0 ? timeAt(p) : NextUse.NEVER;
  }

  /** The estimated time of position {@code p} by the current map. */
  public long timeAt(int p) {
    return anchorNs + (long) ((p - anchorPosition) * nsPerOpen);
  }

  /**
   * Re-draws the time map when the reader drifted from it: the reader at its position now, at
   * {@code pace}. Keys computed with the old map are stale after this: the caller re-keys.
   *
   * @return true if the map was re-drawn (the reader was off by more than a quarter of the time
   *     since the last anchor, and at least 50 ms, and the last anchor is at least 1 s old)
   */
  public synchronized boolean reanchorIfDrifted(double pace) {
    long now = Streams.nowNs();
    long since = now - anchorNs;
    if (order == null || since < 1_000_000_000L) {
      return false;
    }
    long drift = Math.abs(now - timeAt(position));
    if (drift < Math.max(50_000_000L, since / 4)) {
      return false;
    }
    anchorPosition = position;
    anchorNs = now;
    nsPerOpen = pace > 0 ? pace : nsPerOpen;
    return true;
  }
}
