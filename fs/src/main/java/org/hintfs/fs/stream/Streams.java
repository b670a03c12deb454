package org.hintfs.fs.stream;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.hintfs.policy.NextUse;

/**
 * Every stream of the mount: which stream a hint line or an open belongs to, when a stream ends,
 * and the next use of a sample over all of them.
 *
 * <p>Attribution: a hint line belongs to the stream its writer owns, or the one its nearest owning
 * ancestor owns, or (with {@code job <name> [rank <r>]} in front of the line) to the stream of that
 * name; a writer with none gets a new stream. An open belongs to the stream owned by the opening
 * process or its nearest owning ancestor (DataLoader workers are children of their rank; FUSE gives
 * the opener's pid, {@code /proc/PID/stat} its parent); failing that, to the stream whose predicted
 * window holds the sample; else to none. Ancestry answers are cached per pid (cleared whenever a
 * stream starts or ends, and every {@link #PID_CACHE_NS}, so a reused pid is not trusted for long).
 *
 * <p>Next use ({@link NextUse}, for the clairvoyant policy): the soonest estimated time over all
 * streams with a prediction; each stream maps its positions to time by its own pace. In a cluster
 * the other ranks of each stream's job count too ({@link #countWholeJobs}).
 *
 * <p>Lifecycle: a stream ends when its owner exits, if the owner (or a descendant) ever read
 * through it; a stream written by a short-lived process (a shell's {@code echo}) lives on, found by
 * its window, until {@link #IDLE_NS} pass without an open or a hint. Ending drops the prediction
 * and tells the listener (the prefetcher cancels what it queued for the stream).
 */
public final class Streams implements NextUse, AutoCloseable {
  /** An unadopted stream whose writer has exited ends after 5 minutes without an open or hint. */
  public static final long IDLE_NS = TimeUnit.MINUTES.toNanos(5);

  /** Cached ancestry answers are forgotten after 10 s (pids are reused). */
  static final long PID_CACHE_NS = TimeUnit.SECONDS.toNanos(10);

  /**
   * At most 64 live streams: each predicted stream holds an int per catalog entry, and a node runs
   * a few jobs of at most 8-16 ranks.
   */
  public static final int MAX_STREAMS = 64;

  /** The least distance behind the position at which an open still counts as expected. */
  public static final int MIN_BEHIND = 64;

  private static final long ORIGIN = System.nanoTime();
  private static final Stream NONE = new Stream(-1, 0, null, 0, false);

  /** Nanoseconds since this class loaded: the clock of every estimated next use (positive). */
  public static long nowNs() {
    return System.nanoTime() - ORIGIN + 1;
  }

  /** The stream an open belongs to, and whether ancestry said so (not the window). */
  public record Attribution(Stream stream, boolean byAncestry) {}

  private final ProcessTree tree;
  private final int window;
  private final AtomicInteger ids = new AtomicInteger(1);
  private final Map<Long, Stream> byOwner = new ConcurrentHashMap<>();
  private final Map<String, Stream> byName = new ConcurrentHashMap<>();

  /**
   * Ancestry answers. Never cleared in place: a new map replaces it once the stream maps changed,
   * and {@link #attribute} stores its answer in the map it read before looking: an answer computed
   * from the old maps lands in the discarded map, not in the new one (else an open racing a
   * stream's start could cache "no stream" for its owner until the next clearing).
   */
  private volatile Map<Long, Stream> pidCache = new ConcurrentHashMap<>();

  private volatile Stream[] active = new Stream[0];
  private volatile Consumer<Stream> onEnd = s -> {};
  private final ScheduledExecutorService reaper;
  private long pidCacheClearedNs = nowNs();
  public final LongAdder endedCount = new LongAdder();

  /**
   * @param window the prefetch window: how far ahead of its position a stream expects opens
   * @param reapEveryMs how often owners are checked (0: never, for tests that call {@link #reap})
   */
  public Streams(ProcessTree tree, int window, long reapEveryMs) {
    this.tree = tree;
    this.window = window;
    if (reapEveryMs > 0) {
      reaper =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "stream-reaper");
                t.setDaemon(true);
                return t;
              });
      reaper.scheduleWithFixedDelay(
          this::reapQuietly, reapEveryMs, reapEveryMs, TimeUnit.MILLISECONDS);
    } else {
      reaper = null;
    }
  }

  /** Sets what is told when a stream ends (after its prediction is dropped). */
  public void onEnd(Consumer<Stream> c) {
    onEnd = c;
  }

  /** The process tree streams are traced through. */
  public ProcessTree tree() {
    return tree;
  }

  /** Live streams, oldest first. */
  public Stream[] active() {
    return active;
  }

  /**
   * The stream a hint line from {@code pid} belongs to.
   *
   * @param job the name in front of the line, or null
   * @param rank the rank in front of the line (with a name), else 0
   * @param create whether to start a stream if there is none (lines that describe a reader)
   * @return the stream, or null if there is none and {@code create} is false
   * @throws TooManyStreamsException if {@link #MAX_STREAMS} are live
   */
  public Stream forWriter(long pid, String job, int rank, boolean create) {
    // The common case, a line from a writer whose stream exists, takes no monitor (the maps are
    // concurrent; streams start only under the monitor, which checks again).
    String key = job == null ? null : job + "\u0000" + rank;
    Stream s = key != null ? named(key) : owned(pid);
    if (s != null || !create) {
      if (s != null) {
        s.touched();
      }
      return s;
    }
    // /proc is read before taking the monitor: a slow read must not hold up the other writers.
    long[] chain = key == null ? ancestry(pid) : new long[] {pid, tree.process(pid)};
    synchronized (this) {
      s = key != null ? named(key) : owned(chain);
      if (s != null) {
        s.touched();
        return s;
      }
      s = start(key != null ? pid : chain[1], job, rank, false);
      if (key != null) {
        byName.put(key, s);
        byOwner.putIfAbsent(chain[1], s);
      } else {
        byOwner.put(chain[1], s);
      }
      forgetPids();
      return s;
    }
  }

  /** The live stream named {@code key} (job and rank), or null. */
  private Stream named(String key) {
    Stream s = byName.get(key);
    return s != null && !s.ended() ? s : null;
  }

  /**
   * A stream for a reader that sent no hint, whose order the mount will try to recognise: owned by
   * the opener's parent if the opener is a fork of it (a DataLoader worker of its rank), else by
   * the opener. Null if too many streams are live.
   */
  public Stream implicitFor(long pid) {
    if (pid <= 1) {
      return null;
    }
    // /proc is read before taking the monitor (see forWriter).
    pid = tree.process(pid);
    long parent = tree.parent(pid);
    long owner = parent > 1 && tree.sameProgram(pid, parent) ? parent : pid;
    long[] chain = ancestry(owner);
    synchronized (this) {
      Stream s = owned(chain);
      if (s != null) {
        return s;
      }
      if (active.length >= MAX_STREAMS) {
        return null;
      }
      s = start(owner, null, 0, true);
      byOwner.put(owner, s);
      forgetPids();
      return s;
    }
  }

  private Stream start(long pid, String job, int rank, boolean implicit) {
    if (active.length >= MAX_STREAMS) {
      throw new TooManyStreamsException(
          "too many streams: " + MAX_STREAMS + " are live; end one (its writer exits) first");
    }
    Stream s = new Stream(ids.getAndIncrement(), pid, job, rank, implicit);
    s.setBehind(window, MIN_BEHIND);
    Stream[] a = Arrays.copyOf(active, active.length + 1);
    a[a.length - 1] = s;
    active = a;
    return s;
  }

  /**
   * Drops every cached ancestry answer ("no stream" answers may now be wrong). Called after the
   * owner maps changed, never before: see {@link #pidCache}.
   */
  private void forgetPids() {
    pidCache = new ConcurrentHashMap<>();
  }

  /**
   * {@code pid}, then its process, then that process's ancestors while above init (at most 64),
   * read from {@code /proc}; 0 after the last. {@code chain[1]} is always the process.
   */
  private long[] ancestry(long pid) {
    long[] chain = new long[66];
    chain[0] = pid;
    long p = tree.process(pid);
    chain[1] = p;
    for (int depth = 0; depth < 64 && p > 1; depth++) {
      chain[depth + 1] = p;
      p = tree.parent(p);
    }
    return chain;
  }

  /** The stream the first of {@code chain} ({@link #ancestry}) that owns one owns, or null. */
  private Stream owned(long[] chain) {
    Stream own = byOwner.get(chain[0]);
    if (own != null && !own.ended()) {
      return own;
    }
    for (int i = 1; i < chain.length && chain[i] > 1; i++) {
      Stream s = byOwner.get(chain[i]);
      if (s != null && !s.ended()) {
        return s;
      }
    }
    return null;
  }

  /**
   * The stream {@code pid} or its nearest owning ancestor owns, or null; reads /proc only as far as
   * it must (for {@link #attribute}, which holds no monitor).
   */
  private Stream owned(long pid) {
    Stream own = byOwner.get(pid);
    if (own != null && !own.ended()) {
      return own;
    }
    long p = tree.process(pid);
    for (int depth = 0; depth < 64 && p > 1; depth++) {
      Stream s = byOwner.get(p);
      if (s != null && !s.ended()) {
        return s;
      }
      p = tree.parent(p);
    }
    return null;
  }

  /**
   * The stream an open of catalog id {@code id} by {@code pid} belongs to, or null. Costs a map
   * lookup once the pid's answer is cached.
   */
  public Attribution attribute(long pid, int id) {
    Stream[] act = active;
    if (act.length == 0) {
      return null;
    }
    if (pid > 0) {
      Map<Long, Stream> cache = pidCache; // read before the owner maps: see pidCache
      Stream s = cache.get(pid);
      if (s == null) {
        Stream found = owned(pid);
        s = found == null ? NONE : found;
        cache.put(pid, s);
      }
      if (s != NONE && !s.ended()) {
        return new Attribution(s, true);
      }
    }
    Stream best = null;
    long bestDistance = Long.MAX_VALUE;
    for (Stream s : act) {
      int p = s.expectedPosition(id, window, MIN_BEHIND, pid); // pid: a worker's next file too
      if (p >= 0) {
        long d = Math.abs((long) p - s.order().position());
        if (d < bestDistance) {
          bestDistance = d;
          best = s;
        }
      }
    }
    return best == null ? null : new Attribution(best, false);
  }

  /** Ends the streams whose owner has exited (see the class comment). */
  public void reap() {
    long now = nowNs();
    if (now - pidCacheClearedNs > PID_CACHE_NS) {
      forgetPids();
      pidCacheClearedNs = now;
    }
    for (Stream s : active) {
      if (tree.alive(s.owner())) {
        continue;
      }
      if (s.adopted() || !s.order().known() || now - s.lastActiveNs() > IDLE_NS) {
        end(s);
      }
    }
  }

  private void reapQuietly() {
    try {
      reap();
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(Streams.class).warn("reaping streams failed", e);
    }
  }

  /** Ends a stream: its prediction is dropped and the listener told. */
  public void end(Stream s) {
    synchronized (this) {
      if (s.ended()) {
        return;
      }
      s.end();
      active = Arrays.stream(active).filter(x -> x != s).toArray(Stream[]::new);
      byOwner.values().removeIf(x -> x == s);
      byName.values().removeIf(x -> x == s);
      forgetPids();
      endedCount.increment();
    }
    onEnd.accept(s);
  }

  private volatile JobOrders jobWide;

  /**
   * In a cluster: the next use of a sample counts every rank of the jobs read here, the other
   * nodes' ranks too ({@link JobOrders}), since this node is home to samples they read.
   */
  public void countWholeJobs(boolean on) {
    jobWide = on ? new JobOrders() : null;
  }

  /** Computes the job's positions for {@code s}'s epoch and the next, if the clock is on. */
  public void warmJobClock(Stream s) {
    JobOrders job = jobWide;
    if (job != null) {
      job.warm(s);
    }
  }

  /** Epochs of jobs whose positions are computed (tests). */
  int jobClockEpochsReady() {
    JobOrders job = jobWide;
    return job == null ? 0 : job.ready();
  }

  @Override
  public long after(int sample) {
    long best = NEVER;
    JobOrders job = jobWide;
    for (Stream s : active) {
      long t = s.order().nextUse(sample);
      if (t < best) {
        best = t;
      }
      if (job != null) {
        t = job.after(s, sample);
        if (t < best) {
          best = t;
        }
      }
    }
    return best;
  }

  @Override
  public long now() {
    return nowNs();
  }

  @Override
  public boolean known() {
    for (Stream s : active) {
      if (s.order().known()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    if (reaper != null) {
      reaper.shutdownNow();
    }
  }

  /** More streams than {@link #MAX_STREAMS}. */
  public static final class TooManyStreamsException extends IllegalStateException {
    TooManyStreamsException(String m) {
      super(m);
    }
  }
}
