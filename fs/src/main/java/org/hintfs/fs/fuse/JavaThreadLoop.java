package org.hintfs.fs.fuse;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.PointerByReference;
import org.hintfs.fs.concurrent.Blocking;
import org.hintfs.fs.concurrent.SchedStat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs libfuse2's request loop on Java threads instead of libfuse's own.
 *
 * <p>Why: jnr-fuse's {@code fuse_main_real} serves requests on libfuse's pthreads, and jffi
 * attaches a native thread to the JVM at the start of every callback and detaches it at the end
 * (its {@code closure_begin}/{@code closure_end}): a new {@code java.lang.Thread} per request,
 * measured here at ~200 us per open+close against 5 us for a local file. Requests served on threads
 * the JVM started are already attached, so that cost disappears.
 *
 * <p>How: {@code fuse_setup} parses the options and mounts; each Java thread then loops on {@code
 * fuse_read_cmd} (one blocking read of /dev/fuse, which hands each request to one reader) and
 * {@code fuse_process_cmd} (which dispatches it to the callbacks) until the mount goes away; {@code
 * fuse_teardown} cleans up. This is what libfuse's {@code fuse_loop_mt} does.
 *
 * <p>Threads: a few of them ({@code idleThreads}) read /dev/fuse and serve what they read; a thread
 * about to wait on the source or a peer ({@link Blocking}) hands its place to a spare or a new
 * thread, up to {@code maxThreads}, so a miss holds its own thread, never the cached reads, lookups
 * and {@code .hintfs} files behind it; a watchdog covers waits nobody marked. Past {@code
 * maxThreads} requests wait in the kernel's queue until a thread is free: the bound on threads (and
 * their stacks) a flood of misses can cost. See {@link Pool}.
 *
 * <p>Exit: an unmount makes every read fail with ENODEV, libfuse marks the session exited and the
 * threads end. SIGINT/SIGTERM/SIGHUP: libfuse's own handler is installed only where a signal's
 * disposition is the default, and the JVM has its own for all three (which would exit with the
 * mount left behind, a dead endpoint), so this loop takes them ({@link #onExitSignals}): each
 * unmounts lazily, which wakes the blocked readers, and {@link #run} returns as after an unmount
 * (the container's stop, the unit's stop: exit status 0). One that has not ended the loop in {@link
 * #SIGNAL_GRACE_SECONDS} exits the JVM.
 */
final class JavaThreadLoop {
  private static final Logger log = LoggerFactory.getLogger(JavaThreadLoop.class);
  private static final long EXIT_POLL_MS = 200;

  /** The libfuse2 calls this loop needs (jnr-fuse binds only fuse_main_real). */
  public interface LibFuseLoop {
    Pointer fuse_setup(
        int argc,
        String[] argv,
        Pointer op,
        long opSize,
        PointerByReference mountpoint,
        IntByReference multithreaded,
        Pointer userData);

    Pointer fuse_read_cmd(Pointer fuse);

    void fuse_process_cmd(Pointer fuse, Pointer cmd);

    int fuse_exited(Pointer fuse);

    void fuse_teardown(Pointer fuse, Pointer mountpoint);
  }

  private JavaThreadLoop() {}

  /**
   * Mounts and serves until unmounted.
   *
   * @param ops the filled {@code fuse_operations} struct
   * @param idleThreads request threads started at once, and kept waiting for requests
   * @param maxThreads the most request threads at once (each request waiting on the source holds
   *     one)
   * @throws IllegalStateException if libfuse refuses the mount (it printed why on stderr)
   */
  static void run(
      Pointer ops,
      long opsSize,
      Path mountpoint,
      String[] fuseArgs,
      int idleThreads,
      int maxThreads,
      Consumer<Pool> started)
      throws InterruptedException {
    LibFuseLoop lib = LibraryLoader.create(LibFuseLoop.class).failImmediately().load("fuse");
    List<String> argv = new ArrayList<>(List.of("hintfs", "-f", mountpoint.toString()));
    argv.addAll(List.of(fuseArgs));
    PointerByReference mp = new PointerByReference();
    Pointer fuse =
        lib.fuse_setup(
            argv.size(), argv.toArray(String[]::new), ops, opsSize, mp, new IntByReference(), null);
    if (fuse == null) {
      throw new IllegalStateException("libfuse refused the mount");
    }
    Pool pool = new Pool(lib, fuse, idleThreads, maxThreads);
    started.accept(pool);
    pool.start();
    onExitSignals(mountpoint);
    // Set before the session is torn down: the watcher must never touch a freed session (it did,
    // now and then: a SIGSEGV in fuse_session_exited at unmount, before the cache was flushed).
    java.util.concurrent.atomic.AtomicBoolean tornDown =
        new java.util.concurrent.atomic.AtomicBoolean();
    Thread watcher =
        new Thread(
            () -> {
              try {
                while (!tornDown.get() && lib.fuse_exited(fuse) == 0) {
                  Thread.sleep(EXIT_POLL_MS);
                }
                if (tornDown.get()) {
                  return;
                }
                if (isMounted(mountpoint)) {
                  log.info("signalled to exit: unmounting {}", mountpoint);
                  lazyUnmount(mountpoint);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "fuse-exit-watcher");
    watcher.setDaemon(true);
    watcher.start();
    pool.joinAll();
    tornDown.set(true);
    watcher.interrupt();
    watcher.join(10_000);
    lib.fuse_teardown(fuse, mp.getValue());
  }

  /**
   * The request threads.
   *
   * <p>Runners: {@code running} counts the threads that neither wait in a {@link Blocking} section
   * nor park as spares; they read /dev/fuse and serve what they read. The pool keeps {@code target}
   * of them, from {@code idle} up to {@code ceiling}: few readers find requests already queued when
   * they come back for the next one, where many sleep on /dev/fuse and every request wakes one of
   * them (the kernel wakes its readers in turn: 32 of them took a context switch or two per
   * request, and twice bindfs's CPU per cached open). A runner that enters a blocking section hands
   * its place on at once: a spare is woken, or a thread started, up to {@code max} alive. A runner
   * that finishes a request while more than {@code target} run parks as a spare; a spare not woken
   * for {@link #SPARE_KEEP_NANOS} ends.
   *
   * <p>Watchdog: a thread that looks every {@link #WATCH_TICK_MS}. A wait nobody marked (a page of
   * the cache read from disk, a lock, a long control write) must not hold the others: when no
   * thread has waited on /dev/fuse and none has taken a request for {@link #STALL_NANOS}, every
   * runner is held, and it adds one (spare or new); the held one parks once it is done. And the
   * target follows the load: every {@link #WINDOW_TICKS} ticks, runners inside requests (outside
   * their blocking sections) more than {@link #BUSY_HIGH} of the last {@link #HORIZON_WINDOWS}
   * windows' time add one to the target; less than {@link #BUSY_LOW}, take one off. Busy time is
   * wall time less the runners' waits for a core ({@link SchedStat}): a runner waiting for a page
   * of the map counts, one waiting for a core does not. On 2 cores shared with a DataLoader's
   * workers, counting those waits as busy took the target to 4 and back every second: twice the
   * run-queue waits, and 1.3x the CPU per cached open.
   *
   * <p>All counters change by CAS or atomically, with no lock: never more than {@code max} alive.
   */
  static final class Pool implements org.hintfs.fs.serve.RequestThreads, Blocking.Compensator {
    /** A spare idle this long ends: a burst of misses leaves no hundreds of parked threads. */
    static final long SPARE_KEEP_NANOS = TimeUnit.SECONDS.toNanos(30);

    /**
     * How often the watchdog looks; cheap (two reads), and the bound on an unmarked wait's hold.
     */
    static final long WATCH_TICK_MS = 5;

    /**
     * No request taken for this long while a runner waits on /dev/fuse, and the target at its
     * least: the mount is idle, and the watchdog sleeps until the next request is taken (looking
     * once per this much meanwhile). Ticking every {@link #WATCH_TICK_MS} through an idle mount
     * cost 2% of a core (0.60 CPU s in 30 s, measured).
     */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** No request taken and no reader for this long: every runner is held by one request. */
    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** Ticks per look at the runners' busy time: 100 ms, long enough to average bursts. */
    static final int WINDOW_TICKS = 20;

    /**
     * Windows whose busy time and waits for a core are summed for each decision (300 ms): a
     * request's busy time counts when it ends, a wait for a core when the thread gets its core, so
     * one window alone may see another's.
     */
    static final int HORIZON_WINDOWS = 3;

    /** Runners busier than this share of a window: one more reads. */
    static final double BUSY_HIGH = 0.75;

    /** Runners busy less than this share of a window: one fewer reads. */
    static final double BUSY_LOW = 0.25;

    /**
     * The most runners the load adds, per core: a runner waiting for the disk needs no core, but
     * runners past the cores only take turns on them.
     */
    static final int RUNNERS_PER_CORE = 2;

    private final LibFuseLoop lib;
    private final Pointer fuse;
    private final long stallNanos;
    private final int idle;
    private final int ceiling;
    private final int max;
    private volatile int target;
    private final LongAdder busyNanos = new LongAdder();
    private final LongAdder leftWaits = new LongAdder();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicInteger alive = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicInteger names = new AtomicInteger();
    private final LongAdder atMax = new LongAdder();
    private final LongAdder stalls = new LongAdder();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedDeque<Worker> spares = new ConcurrentLinkedDeque<>();
    private volatile long lastTake = System.nanoTime();
    private volatile boolean exiting;
    private volatile Thread watchdog;

    /** Set while the watchdog sleeps through an idle mount: the next take wakes it. */
    private volatile boolean watchdogAsleep;

    /** Times the watchdog looked (tests). */
    private final LongAdder looks = new LongAdder();

    /**
     * A request thread, whether a waker has taken it off the spares, and since when it runs the
     * request it serves (outside a blocking section; its own thread's field).
     */
    private final class Worker extends Blocking.RequestThread {
      volatile boolean woken;
      long since;

      /** Its id in the kernel (-1: not known). */
      volatile long tid = -1;

      /** Reads /dev/fuse and serves: neither in a blocking section nor parked as a spare. */
      volatile boolean runner;

      /**
       * Its run-queue wait when it last became a runner or was last counted, whichever is later
       * (-1: not known, or not a runner). Taken by whoever counts the waits since: the watchdog's
       * look or the thread itself as it leaves the runners, never both.
       */
      final AtomicLong delayMark = new AtomicLong(-1);

      /**
       * Its own schedstat, opened at its first wait or park (a thread's first open loads classes:
       * not on the way of a request); its own thread's.
       */
      private SchedStat.Own own;

      private boolean ownOpened;

      Worker(String name) {
        super(Pool.this, null, name);
        setDaemon(true);
      }

      /** Starts running requests (started, woken, back from a wait): its waits count from now. */
      void joinRunners() {
        delayMark.set(ownDelay());
        runner = true;
      }

      /** This thread's waits for a core so far, or -1 if not known; called on its own thread. */
      private long ownDelay() {
        if (!ownOpened) {
          ownOpened = true;
          own = SchedStat.Own.open();
        }
        return own == null ? -1 : own.runDelayNanos();
      }

      /**
       * Stops running requests (a wait, a park): the waits for a core since the last count are the
       * runners', counted now, so a runner that comes and goes between two looks (one woken for a
       * stall, say: its busy time counts) has its waits counted too.
       */
      void leaveRunners() {
        runner = false;
        long now = ownDelay();
        long last = delayMark.getAndSet(-1);
        if (now >= 0 && last >= 0 && now > last) {
          leftWaits.add(now - last);
        }
      }

      @Override
      public void run() {
        tid = SchedStat.currentTid();
        delayMark.set(0); // a new thread's figure starts at 0, and it was started as a runner
        runner = true;
        try {
          serve(this);
        } finally {
          runner = false;
          threads.remove(this);
          if (own != null) {
            own.close();
          }
        }
      }
    }

    Pool(LibFuseLoop lib, Pointer fuse, int idle, int max) {
      this(lib, fuse, idle, max, STALL_NANOS);
    }

    /** A pool whose watchdog takes {@code stallNanos} with no reader for a stall (tests). */
    Pool(LibFuseLoop lib, Pointer fuse, int idle, int max, long stallNanos) {
      this.stallNanos = stallNanos;
      this.lib = lib;
      this.fuse = fuse;
      this.idle = Math.max(1, idle);
      this.max = Math.max(this.idle, max);
      this.ceiling =
          Math.min(
              this.max,
              Math.max(this.idle, RUNNERS_PER_CORE * Runtime.getRuntime().availableProcessors()));
      this.target = this.idle;
    }

    void start() {
      for (int i = 0; i < idle; i++) {
        addRunner();
      }
      Thread w = new Thread(this::watch, "fuse-watchdog");
      w.setDaemon(true);
      watchdog = w;
      w.start();
    }

    /**
     * One more runner: a spare woken, or a thread started unless {@code max} are alive; false if at
     * the bound (the requests behind wait in the kernel's queue until a thread is free).
     */
    private boolean addRunner() {
      running.incrementAndGet();
      Worker w;
      while ((w = spares.pollFirst()) != null) {
        w.woken = true;
        LockSupport.unpark(w);
        return true;
      }
      if (tryStart()) {
        return true;
      }
      running.decrementAndGet();
      return false;
    }

    /** Starts one more thread unless {@code max} are alive; true if it did. */
    private boolean tryStart() {
      int a;
      do {
        a = alive.get();
        if (a >= max) {
          atMax.increment();
          return false;
        }
      } while (!alive.compareAndSet(a, a + 1));
      peak.accumulateAndGet(a + 1, Math::max);
      Worker t = new Worker("fuse-" + names.getAndIncrement());
      threads.add(t);
      try {
        t.start();
      } catch (OutOfMemoryError e) {
        // "unable to create native thread" (a ulimit, a container's pids limit): serve with the
        // threads there are, as at the bound.
        threads.remove(t);
        alive.decrementAndGet();
        atMax.increment();
        log.warn("cannot start another FUSE thread ({} alive): {}", a, e.getMessage());
        return false;
      }
      return true;
    }

    private void serve(Worker me) {
      while (!exiting && lib.fuse_exited(fuse) == 0) {
        waiting.incrementAndGet();
        Pointer cmd;
        try {
          cmd = lib.fuse_read_cmd(fuse);
        } finally {
          waiting.decrementAndGet();
        }
        if (cmd == null) {
          continue;
        }
        me.since = System.nanoTime();
        lastTake = me.since;
        if (watchdogAsleep) {
          wakeWatchdog();
        }
        lib.fuse_process_cmd(fuse, cmd);
        busyNanos.add(System.nanoTime() - me.since);
        if (surplus() && !parkAsSpare(me)) {
          return;
        }
      }
      exiting = true;
      wakeWatchdog();
      running.decrementAndGet();
      alive.decrementAndGet();
      for (Worker w : spares) {
        LockSupport.unpark(w); // each sees exiting and ends
      }
    }

    /** Takes this thread off the runners if more than {@code target} run. */
    private boolean surplus() {
      int r;
      do {
        r = running.get();
        if (r <= target) {
          return false;
        }
      } while (!running.compareAndSet(r, r - 1));
      return true;
    }

    /**
     * Parks {@code me} as a spare until a waker takes it (true: it runs again, counted by the
     * waker) or it has been idle {@link #SPARE_KEEP_NANOS} or the mount exits (false: it ends).
     */
    private boolean parkAsSpare(Worker me) {
      me.woken = false;
      me.leaveRunners();
      spares.addFirst(me); // last in, first woken: the warmest thread runs
      long deadline = System.nanoTime() + SPARE_KEEP_NANOS;
      while (!me.woken) {
        long left = deadline - System.nanoTime();
        if (exiting || left <= 0) {
          if (spares.remove(me)) {
            alive.decrementAndGet();
            return false;
          }
          continue; // a waker took it meanwhile and is about to set woken
        }
        LockSupport.parkNanos(this, left);
      }
      me.joinRunners();
      return true;
    }

    @Override
    public void blocked(Blocking.RequestThread t) {
      Worker w = (Worker) t;
      long now = System.nanoTime();
      busyNanos.add(now - w.since);
      if (running.decrementAndGet() < target && !exiting) {
        addRunner();
      }
      w.leaveRunners(); // after the hand-off: the requests behind need not wait for this count
    }

    @Override
    public void unblocked(Blocking.RequestThread t) {
      Worker w = (Worker) t;
      w.joinRunners();
      w.since = System.nanoTime();
      running.incrementAndGet();
    }

    /**
     * The watchdog's loop: adds a runner while every runner is held by a request, and moves the
     * target with the runners' busy share.
     */
    private void watch() {
      long windowStart = System.nanoTime();
      long busyAtStart = busyNanos.sum();
      long[] held = new long[HORIZON_WINDOWS];
      long[] capacity = new long[HORIZON_WINDOWS];
      for (int tick = 1; !exiting; tick++) {
        try {
          Thread.sleep(WATCH_TICK_MS);
        } catch (InterruptedException e) {
          return;
        }
        looks.increment();
        long now = System.nanoTime();
        if (waiting.get() == 0 && now - lastTake >= stallNanos && !exiting) {
          stalls.increment();
          lastTake = now; // the next one after another stall's length
          addRunner();
        }
        if (sleepWhileIdle(now)) {
          // Windows start afresh: the idle time is not a window's, and waits since are not busy.
          now = System.nanoTime();
          java.util.Arrays.fill(held, 0);
          java.util.Arrays.fill(capacity, 0);
          runQueueWait(0);
          windowStart = now;
          busyAtStart = busyNanos.sum();
          tick = 0;
          continue;
        }
        if (tick % WINDOW_TICKS == 0) {
          long busy = busyNanos.sum();
          int slot = (tick / WINDOW_TICKS) % HORIZON_WINDOWS;
          held[slot] = busy - busyAtStart - runQueueWait(now - windowStart); // on a core or I/O
          capacity[slot] = (now - windowStart) * target;
          retarget(Math.max(0, sum(held)) / (double) sum(capacity));
          windowStart = now;
          busyAtStart = busy;
        }
      }
    }

    /**
     * Sleeps while the mount is idle ({@link #IDLE_NANOS}): a runner waits on /dev/fuse, none has
     * taken a request for that long, and the target is at its least. A stall needs a request taken
     * (the last reader takes one), and the runner that takes it wakes this thread first: the flag
     * is written before {@code lastTake} is read again here, and read after the runner writes
     * {@code lastTake} there, so one of the two sees the other.
     *
     * @return true if it slept
     */
    private boolean sleepWhileIdle(long now) {
      long seen = lastTake;
      if (now - seen < IDLE_NANOS || waiting.get() == 0 || target > idle || exiting) {
        return false;
      }
      watchdogAsleep = true;
      while (watchdogAsleep && lastTake == seen && waiting.get() > 0 && !exiting) {
        LockSupport.parkNanos(this, IDLE_NANOS);
        looks.increment();
      }
      watchdogAsleep = false;
      return true;
    }

    private void wakeWatchdog() {
      watchdogAsleep = false;
      Thread w = watchdog;
      if (w != null) {
        LockSupport.unpark(w);
      }
    }

    /** Times the watchdog has looked at the runners (tests: it sleeps through an idle mount). */
    long looks() {
      return looks.sum();
    }

    /**
     * The runners' waits for a core since the last window, summed: those of threads that left the
     * runners meanwhile, counted as each left, and those of the runners now, read here. A thread's
     * waits count only while it is a runner, from when it became one (its waits while it was none
     * are not the runners': counted, after a burst of misses they took away seconds a window). The
     * kernel adds a wait to the figure when the thread gets its core, so a window may see a wait
     * that began in the one before: a runner's share is at most the window's length, and over
     * windows of 100 ms with requests of microseconds the sums agree.
     */
    private long runQueueWait(long windowNanos) {
      long sum = leftWaits.sumThenReset();
      for (Thread t : threads) {
        Worker w = (Worker) t;
        if (!w.runner) {
          continue;
        }
        long now = SchedStat.runDelayNanos(w.tid);
        if (now < 0) {
          continue;
        }
        long last = w.delayMark.getAndSet(now);
        if (last >= 0 && now > last) {
          sum += Math.min(now - last, windowNanos);
        }
      }
      return sum;
    }

    private static long sum(long[] a) {
      long s = 0;
      for (long x : a) {
        s += x;
      }
      return s;
    }

    /** One runner more or fewer for a window whose runners were busy {@code share} of it. */
    private void retarget(double share) {
      if (share > BUSY_HIGH && target < ceiling) {
        target++;
        addRunner();
      } else if (share < BUSY_LOW && target > idle) {
        target--; // the next runner done with a request while more run parks
      }
    }

    /** The runners the load asks for now, between the idle count and the ceiling. */
    @Override
    public int readers() {
      return target;
    }

    /** Waits until every thread, those started meanwhile too, has ended. */
    void joinAll() throws InterruptedException {
      while (!threads.isEmpty()) {
        for (Thread t : List.copyOf(threads)) {
          t.join();
        }
      }
    }

    /** Threads reading /dev/fuse now. */
    int reading() {
      return waiting.get();
    }

    /** Request threads alive now. */
    @Override
    public int alive() {
      return alive.get();
    }

    @Override
    public int peak() {
      return peak.get();
    }

    /** The most threads this pool may have. */
    @Override
    public int max() {
      return max;
    }

    /** Times a request left no thread waiting and none could be started (at the bound). */
    @Override
    public long atMax() {
      return atMax.sum();
    }

    @Override
    public long stalls() {
      return stalls.sum();
    }
  }

  private static boolean isMounted(Path mountpoint) {
    try {
      String needle = " " + mountpoint.toAbsolutePath().normalize() + " ";
      return java.nio.file.Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
          .anyMatch(l -> l.contains(needle) && l.contains(" fuse.hintfs "));
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** How long after an exit signal the loop may take to end before the JVM exits anyway. */
  static final int SIGNAL_GRACE_SECONDS = 20;

  /** SIGTERM, SIGINT and SIGHUP unmount lazily (see the class's "Exit"). */
  private static void onExitSignals(Path mountpoint) {
    java.util.concurrent.atomic.AtomicBoolean once =
        new java.util.concurrent.atomic.AtomicBoolean();
    for (String name : List.of("TERM", "INT", "HUP")) {
      try {
        sun.misc.Signal.handle(
            new sun.misc.Signal(name),
            sig -> {
              if (!once.compareAndSet(false, true)) {
                return;
              }
              Thread t =
                  new Thread(
                      () -> {
                        log.info("SIG{}: unmounting {}", sig.getName(), mountpoint);
                        if (isMounted(mountpoint)) {
                          lazyUnmount(mountpoint);
                        }
                        try {
                          Thread.sleep(TimeUnit.SECONDS.toMillis(SIGNAL_GRACE_SECONDS));
                        } catch (InterruptedException e) {
                          return;
                        }
                        log.warn(
                            "still running {} s after SIG{}: exiting",
                            SIGNAL_GRACE_SECONDS,
                            sig.getName());
                        Runtime.getRuntime().halt(128 + sig.getNumber());
                      },
                      "fuse-exit-signal");
              t.setDaemon(true);
              t.start();
            });
      } catch (IllegalArgumentException e) {
        log.debug("SIG{} not handled here: {}", name, e.getMessage()); // e.g. under -Xrs
      }
    }
  }

  private static void lazyUnmount(Path mountpoint) {
    for (List<String> cmd :
        List.of(
            List.of("fusermount", "-u", "-z", mountpoint.toString()),
            List.of("umount", "-l", mountpoint.toString()))) {
      try {
        if (new ProcessBuilder(cmd).redirectErrorStream(true).start().waitFor() == 0) {
          return;
        }
      } catch (java.io.IOException e) {
        log.debug("{} failed: {}", cmd, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    log.warn(
        "could not unmount {} after a signal; run: fusermount -u -z {}", mountpoint, mountpoint);
  }
}
