package org.hintfs.fs.fuse;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.PointerByReference;
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
 * <p>Threads: the pool grows the way libfuse3's loop does. A thread that takes a request and leaves
 * no other thread waiting on /dev/fuse starts one more (up to {@code maxThreads}), so a request
 * always finds a reader while others wait on the source or a peer: a miss holds its thread, never
 * the cached reads, lookups and {@code .hintfs} files behind it. A thread that finishes a request
 * while more than {@code idleThreads} others wait ends. Past {@code maxThreads} requests wait in
 * the kernel's queue until a thread is free: the bound on threads (and their stacks) a flood of
 * misses can cost.
 *
 * <p>Exit: an unmount makes every read fail with ENODEV, libfuse marks the session exited and the
 * threads end. SIGINT/SIGTERM/SIGHUP go to libfuse's handler (installed by {@code fuse_setup}),
 * which only marks the session exited; a watcher sees that and unmounts lazily, which wakes the
 * blocked readers.
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
   * The request threads: {@code waiting} counts those in (or on their way to) {@code
   * fuse_read_cmd}, {@code alive} all of them. Both only change by CAS, so the bounds hold without
   * a lock: never more than {@code max} threads, never fewer than {@code idle} waiting once a burst
   * is over.
   */
  static final class Pool implements org.hintfs.fs.serve.RequestThreads {
    private final LibFuseLoop lib;
    private final Pointer fuse;
    private final int idle;
    private final int max;
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicInteger alive = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicInteger names = new AtomicInteger();
    private final LongAdder atMax = new LongAdder();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

    Pool(LibFuseLoop lib, Pointer fuse, int idle, int max) {
      this.lib = lib;
      this.fuse = fuse;
      this.idle = Math.max(1, idle);
      this.max = Math.max(this.idle, max);
    }

    private void start() {
      for (int i = 0; i < idle; i++) {
        tryStart();
      }
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
      waiting.incrementAndGet();
      Thread t = new Thread(this::serve, "fuse-" + names.getAndIncrement());
      t.setDaemon(true);
      threads.add(t);
      try {
        t.start();
      } catch (OutOfMemoryError e) {
        // "unable to create native thread" (a ulimit, a container's pids limit): serve with the
        // threads there are, as at the bound.
        threads.remove(t);
        waiting.decrementAndGet();
        alive.decrementAndGet();
        atMax.increment();
        log.warn("cannot start another FUSE thread ({} alive): {}", a, e.getMessage());
        return false;
      }
      return true;
    }

    private void serve() {
      try {
        while (lib.fuse_exited(fuse) == 0) {
          Pointer cmd = lib.fuse_read_cmd(fuse);
          if (cmd == null) {
            continue;
          }
          if (waiting.decrementAndGet() == 0) {
            tryStart(); // nobody is left reading /dev/fuse while this request is served
          }
          try {
            lib.fuse_process_cmd(fuse, cmd);
          } finally {
            waiting.incrementAndGet();
          }
          if (retire()) {
            return;
          }
        }
        waiting.decrementAndGet();
        alive.decrementAndGet();
      } finally {
        threads.remove(Thread.currentThread());
      }
    }

    /** Ends this thread if more than {@code idle} others are waiting for requests. */
    private boolean retire() {
      int w;
      do {
        w = waiting.get();
        if (w <= idle) {
          return false;
        }
      } while (!waiting.compareAndSet(w, w - 1));
      alive.decrementAndGet();
      return true;
    }

    /** Waits until every thread, those started meanwhile too, has ended. */
    private void joinAll() throws InterruptedException {
      while (!threads.isEmpty()) {
        for (Thread t : List.copyOf(threads)) {
          t.join();
        }
      }
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
