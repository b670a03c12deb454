package org.hintfs.fs.stream;

import java.util.concurrent.atomic.LongAdder;
import org.hintfs.policy.ImageFolderView;

/**
 * One reader of the mount: a rank of a training job, with its DataLoader workers.
 *
 * <p>What a stream knows: the ImageFolder root its {@code #index} samples refer to, the sampler
 * (seed hint) or explicit order it follows, its epoch, its predicted order and the reader's
 * position in it. Importance is not here: it belongs to the job ({@link #job()}), shared by its
 * ranks.
 *
 * <p>Owner: the process that wrote the stream's first hint line. Opens by the owner or any of its
 * descendants (its DataLoader workers) belong to the stream. A stream is "adopted" once such an
 * open was seen: it then ends when its owner exits. A stream whose hints came from a short-lived
 * writer (a shell's {@code echo}) is never adopted; its opens are found by its predicted window,
 * and it ends after {@link Streams#IDLE_NS} without an open.
 *
 * <p>Concurrency: the prediction fields are volatile and written by the hint applier; the judging
 * window is guarded by the stream's monitor; where prefetching got to ({@link #scheduledUpTo}) by
 * the prefetcher's lock alone, and for the order it was found in, so a new order is scheduled from
 * its start whoever sets it and when.
 */
public final class Stream {
  /** The opens over which the prediction is judged. */
  public static final int JUDGE_OVER = 128;

  private final int id;
  private final String explicitJob;
  private volatile long owner;
  private volatile int rank;
  private volatile int world = 1;
  private volatile Dataset dataset;
  private volatile SamplerSpec sampler;
  private volatile boolean explicitOrder;
  private volatile int epoch;
  private volatile boolean adopted;
  private volatile boolean ended;
  private volatile long lastActiveNs = Streams.nowNs();
  private final PredictedOrder order = new PredictedOrder();

  // Pace: an exponentially weighted mean of the time between opens, per open.
  private long lastOpenNs;
  private double nsPerOpen;

  // Judging (under the stream's monitor).
  private final boolean[] recent = new boolean[JUDGE_OVER];
  private int recentCount;
  private int recentExpected;
  private int recentNext;

  // Where prefetching got to, and in which order (under the prefetcher's lock only).
  private int[] scheduledIn;
  private int scheduledUpTo;

  public final LongAdder opens = new LongAdder();
  public final LongAdder hits = new LongAdder();
  public final LongAdder offOrder = new LongAdder();

  /** Misses on a file whose prefetch was under way: the window was too short for the reader. */
  public final LongAdder lateMisses = new LongAdder();

  public final LongAdder prefetched = new LongAdder();
  public final LongAdder staleDrops = new LongAdder();

  Stream(int id, long owner, String explicitJob, int rank, boolean implicit) {
    this.id = id;
    this.owner = owner;
    this.explicitJob = explicitJob;
    this.rank = rank;
    this.implicit = implicit;
  }

  private final boolean implicit;
  private final StreamRecognition recognition = new StreamRecognition();
  private final java.util.concurrent.atomic.AtomicInteger advancedTo =
      new java.util.concurrent.atomic.AtomicInteger(-1);

  /**
   * The stream's ImageFolder root, its view, and each catalog id's index in it (null where a
   * declared root did not compute it): published together, never a mix of a declared and a detected
   * root.
   */
  private record Dataset(String dir, ImageFolderView view, int[] sampleOfNode) {}

  /** True if the mount started this stream for a reader that sent no hint (to recognise it). */
  public boolean implicit() {
    return implicit;
  }

  /** What recognising this stream's order has found (for streams that sent no seed or order). */
  public StreamRecognition recognition() {
    return recognition;
  }

  /** The dataset index of catalog id {@code id} under the stream's view, or -1. */
  public int sampleOf(int id) {
    Dataset d = dataset;
    int[] m = d == null ? null : d.sampleOfNode();
    return m == null || id < 0 || id >= m.length ? -1 : m[id];
  }

  /**
   * Sets the view a recognised order is searched in (the root the first opens fall under), unless
   * the stream has one already: a root its writer declared meanwhile wins.
   */
  public void setDetectionView(String dir, ImageFolderView v, int entries) {
    Dataset detected = new Dataset(dir, v, v.sampleOfNode(entries));
    synchronized (this) {
      if (dataset == null) {
        dataset = detected;
      }
    }
  }

  /**
   * Marks read, in a just recognised order, what the reader opened before it was known ({@link
   * StreamRecognition#noteOpen}): else those just behind the reader's position would look like a
   * slow DataLoader worker's files still to come, needed now, and hold the cache from the window's.
   */
  public void markOpenedBeforeOrderRead() {
    for (int id : recognition.takeOpened()) {
      order.markRead(order.positionOf(id));
    }
  }

  /** True the first time it is asked to move on from the order in force (one advance each). */
  public boolean claimAdvance() {
    int g = generation;
    int prev = advancedTo.get();
    return prev < g && advancedTo.compareAndSet(prev, g);
  }

  private volatile int generation;

  /** A small number, unique in this mount, for stats. */
  public int id() {
    return id;
  }

  /** The pid that owns the stream. */
  public long owner() {
    return owner;
  }

  void setOwner(long pid) {
    owner = pid;
  }

  /**
   * The job whose importance this stream's losses feed: the name given by {@code job <name>}; else,
   * for a DDP rank (world > 1), the launcher that started the ranks ({@code ppid:N}: torchrun and
   * {@code mp.spawn} start all ranks of a job from one parent); else the owner ({@code pid:N}).
   */
  public String job(ProcessTree tree) {
    if (explicitJob != null) {
      return explicitJob;
    }
    if (world <= 1) {
      return "pid:" + owner;
    }
    long launcher = this.launcher;
    if (launcher <= 0) {
      // Kept once found: after the owner exits, /proc no longer knows its parent.
      launcher = tree.parent(owner);
      this.launcher = launcher;
    }
    return "ppid:" + launcher;
  }

  private volatile long launcher;

  /** The name given by {@code job <name>}, or null. */
  public String explicitJob() {
    return explicitJob;
  }

  public int rank() {
    return rank;
  }

  public int world() {
    return world;
  }

  /** The stream's ImageFolder root, or null if it declared none (the mount's applies). */
  public String datasetDir() {
    Dataset d = dataset;
    return d == null ? null : d.dir();
  }

  /** The stream's dataset view, or null. */
  public ImageFolderView view() {
    Dataset d = dataset;
    return d == null ? null : d.view();
  }

  /** Sets the ImageFolder root of this stream's {@code #index} samples (a catalog of entries). */
  public void setDataset(String dir, ImageFolderView v, int entries) {
    Dataset now = dataset;
    int[] m = now != null && now.view() == v ? now.sampleOfNode() : v.sampleOfNode(entries);
    synchronized (this) {
      dataset = new Dataset(dir, v, m);
    }
  }

  /** The seed hint in force, or null. */
  public SamplerSpec sampler() {
    return sampler;
  }

  /** True if the prediction came from an {@code order} hint. */
  public boolean explicitOrder() {
    return explicitOrder;
  }

  public int epoch() {
    return epoch;
  }

  public void setEpoch(int e) {
    epoch = e;
  }

  /** The predicted order and the reader's position. */
  public PredictedOrder order() {
    return order;
  }

  /** Predicts {@code ids} for a seed hint (null spec: an explicit order) at the stream's pace. */
  public void predict(SamplerSpec spec, int[] ids, int entries) {
    sampler = spec;
    explicitOrder = spec == null;
    if (spec != null) {
      world = spec.world();
      rank = spec.rank();
    }
    synchronized (this) {
      // Judged afresh before the new order is visible: a reader's opens must not be judged
      // against the old order's verdicts.
      clearJudging();
      carried = 0;
      order.set(ids, entries, pace());
    }
    generation++;
  }

  // Positions [0, carried) of the current order are the previous order's unfinished tail
  // (setCarried), under the stream's monitor.
  private int carried;

  /**
   * Positions [0, {@code n}) of the order just set are the previous order's tail, carried over when
   * a recognised stream moved on by itself: an open of one still unread there is a slower worker
   * finishing the old epoch, expected whatever the new order's verdicts so far.
   */
  public synchronized void setCarried(int n) {
    carried = n;
  }

  /** How far behind its position the stream's reader may still open files (see expects). */
  public void setBehind(int window, int minBehind) {
    order.setBehind(Math.max(minBehind, window));
  }

  /** The measured time between this stream's opens, or the default before any. */
  public synchronized double pace() {
    return nsPerOpen > 0 ? nsPerOpen : PredictedOrder.DEFAULT_NS_PER_OPEN;
  }

  /** Counts an open of a dataset sample attributed to this stream. */
  public void opened(boolean hit, boolean byAncestry) {
    long now = Streams.nowNs();
    opens.increment();
    if (hit) {
      hits.increment();
    }
    if (byAncestry) {
      adopted = true;
    }
    lastActiveNs = now;
    synchronized (this) {
      if (lastOpenNs != 0) {
        // Gaps over a second are pauses (evaluation, checkpoints), not the pace of reading.
        double gap = Math.min(now - lastOpenNs, 1e9);
        nsPerOpen = nsPerOpen == 0 ? gap : 0.98 * nsPerOpen + 0.02 * gap;
      }
      lastOpenNs = now;
    }
  }

  /** Notes a hint from the stream's writer. */
  public void touched() {
    lastActiveNs = Streams.nowNs();
  }

  public long lastActiveNs() {
    return lastActiveNs;
  }

  /** True once an open by the owner or a descendant was seen. */
  public boolean adopted() {
    return adopted;
  }

  public boolean ended() {
    return ended;
  }

  void end() {
    ended = true;
    order.clear();
  }

  /** Restarts judging and scheduling (a new order). Under the prefetcher's lock. */
  public void resetJudging() {
    synchronized (this) {
      clearJudging();
    }
    scheduledIn = null;
  }

  /** Forgets the verdicts (a new order is judged afresh). */
  private void clearJudging() {
    recentCount = 0;
    recentExpected = 0;
    recentNext = 0;
  }

  /**
   * True if the prefetcher should look again from the oldest unread position of order {@code o}:
   * the order just became {@link #confirmed} (before, positions the furthest open jumped past were
   * not looked at). Under the prefetcher's lock.
   */
  public boolean becameConfirmed(int[] o) {
    boolean now = confirmed();
    boolean was = o == confirmedIn && wasConfirmed;
    confirmedIn = o;
    wasConfirmed = now;
    return now && !was;
  }

  private int[] confirmedIn;
  private boolean wasConfirmed;

  /**
   * The next position of order {@code o} the prefetcher has not looked at yet: 0 in an order it has
   * not scheduled from. Under the prefetcher's lock.
   */
  public int scheduledUpTo(int[] o) {
    return o != null && o == scheduledIn ? scheduledUpTo : 0;
  }

  /** Records that the prefetcher looked at order {@code o} up to {@code next}. Its lock held. */
  public void scheduledUpTo(int[] o, int next) {
    scheduledIn = o;
    scheduledUpTo = next;
  }

  /**
   * Records whether an open was where the prediction expected it. Under the prefetcher's lock.
   *
   * @return true if fewer than half of the last {@link #JUDGE_OVER} opens were expected: the
   *     prediction is wrong and must be dropped
   */
  public synchronized boolean judge(boolean expected) {
    if (recentCount == JUDGE_OVER) {
      recentExpected -= recent[recentNext] ? 1 : 0;
    } else {
      recentCount++;
    }
    recent[recentNext] = expected;
    recentExpected += expected ? 1 : 0;
    recentNext = (recentNext + 1) % JUDGE_OVER;
    return recentCount == JUDGE_OVER && recentExpected * 2 < JUDGE_OVER;
  }

  /**
   * True once at least 32 of the last opens were judged and nine in ten of them were expected: the
   * prediction is trusted enough to fetch what lies behind the furthest open (a slower worker's
   * files). A wrong order, matching only by chance until it is dropped, is never trusted so.
   */
  public synchronized boolean confirmed() {
    return recentCount >= 32 && recentExpected * 10 >= recentCount * 9;
  }

  /**
   * The position of {@code id} near the furthest open, or -1: at most one window (at least {@code
   * minBehind}) behind the reader's position, up to four windows ahead (DataLoader workers run a
   * few batches apart).
   */
  private int nearFurthestOpen(int id, int window, int minBehind) {
    if (!order.known()) {
      return -1;
    }
    int pos = order.position();
    // Following does not depend on prefetching: with no window (--prefetch-window 0) the reader
    // is still followed, at least minBehind either way, so clairvoyance keeps its positions.
    int reach = Math.max(minBehind, window);
    int p = order.occurrenceFrom(id, pos - reach);
    return p >= 0 && p < pos + 4 * reach ? p : -1;
  }

  /**
   * Where an open of {@code id} by process {@code pid} is expected in the order, or -1: {@link
   * #nearFurthestOpen}, or, for an open by a DataLoader worker, the position just after that
   * process's last open in this order: a worker reads its batch's samples one after another,
   * however far it lags the furthest open. With large batches the workers' opens spread over
   * several batches (4 workers x batch 256: over 1,000 positions), more than the window around the
   * furthest open that {@link #nearFurthestOpen} allows; a wrong order matches this rule by chance
   * for only {@link #NEXT_OF_READER} in the order's length of opens. Once the order is {@link
   * #confirmed}, also any unread position behind the furthest open (a worker starting its next
   * batch while another has already gone further).
   */
  public int expectedPosition(int id, int window, int minBehind, long pid) {
    int c = carriedPositions();
    if (c > 0) {
      // First: a slower worker's file of the epoch before, carried over unread. Looked for near
      // the furthest open it would be found in the new epoch by chance (the same rank reads many
      // of the same files again) and move the position on.
      int q = order.occurrenceFrom(id, 0);
      if (q >= 0 && q < c && !order.isRead(q)) {
        return q;
      }
    }
    int p = nearFurthestOpen(id, window, minBehind);
    if (p >= 0 || !order.known()) {
      return p;
    }
    int last = pid > 0 ? lastOpenOf(pid) : -1;
    if (last >= 0) {
      int q = order.occurrenceFrom(id, last + 1);
      if (q >= 0 && q <= last + NEXT_OF_READER) {
        return q;
      }
    }
    if (confirmed()) {
      // A worker's first file of its next batch, behind the furthest open: a slower worker's
      // file, unread, as lowMark() counts them. Only for a confirmed order: a wrong one would
      // match everything its furthest open raced past.
      int q = order.occurrenceFrom(id, order.lowMark());
      if (q >= 0 && q < order.position() && !order.isRead(q)) {
        return q;
      }
    }
    return -1;
  }

  private synchronized int carriedPositions() {
    return carried;
  }

  /** How far past its last open a reading process's next open may be (files it skipped). */
  public static final int NEXT_OF_READER = 8;

  /** How many reading processes of a stream are followed each (DataLoader workers). */
  static final int READERS = 32;

  // The last few reading processes and the position of each one's last open, in the order of
  // readersIn (under the stream's monitor). Replaced least recently used first.
  private final long[] readerPid = new long[READERS];
  private final int[] readerLast = new int[READERS];
  private final long[] readerUsed = new long[READERS];
  private int[] readersIn;
  private long readerClock;

  /** How many reading processes (DataLoader workers) are followed in the current order. */
  public synchronized int readersFollowed() {
    if (readersIn == null || readersIn != order.order()) {
      return 0;
    }
    int n = 0;
    for (long pid : readerPid) {
      n += pid != 0 ? 1 : 0;
    }
    return n;
  }

  /** The position of {@code pid}'s last open in the current order, or -1. */
  private synchronized int lastOpenOf(long pid) {
    if (readersIn != order.order()) {
      return -1;
    }
    for (int i = 0; i < READERS; i++) {
      if (readerPid[i] == pid) {
        return readerLast[i];
      }
    }
    return -1;
  }

  /**
   * Records that {@code pid} opened {@code id}: at {@code p} where it was expected, else where the
   * order has it (from the oldest unread position on), so its next opens can follow on from it.
   */
  public synchronized void noteReader(long pid, int id, int p) {
    int[] o = order.order();
    if (pid <= 0 || o == null) {
      return;
    }
    if (p < 0) {
      p = order.occurrenceFrom(id, order.lowMark());
      if (p < 0) {
        p = order.positionOf(id);
      }
      if (p < 0) {
        return;
      }
    }
    if (readersIn != o) {
      java.util.Arrays.fill(readerPid, 0);
      readersIn = o;
    }
    int slot = 0;
    for (int i = 0; i < READERS; i++) {
      if (readerPid[i] == pid) {
        slot = i;
        break;
      }
      if (readerUsed[i] < readerUsed[slot] || readerPid[i] == 0 && readerPid[slot] != 0) {
        slot = i;
      }
    }
    readerPid[slot] = pid;
    readerLast[slot] = p;
    readerUsed[slot] = ++readerClock;
  }
}
