package org.hintfs.fs.concurrent;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Thread pools of named daemon threads: background work never keeps the JVM alive. */
public final class DaemonThreads {
  private DaemonThreads() {}

  /**
   * The nice value of a {@link Thread#MIN_PRIORITY} pool's threads on Linux. HotSpot ignores Java
   * priorities there (ThreadPriorityPolicy 0; policy 1 needs root), so such a thread competed with
   * the FUSE threads as an equal. Nice 10 weighs about a tenth of a normal thread when they
   * contend, and costs nothing when a core is free; not 19 or SCHED_IDLE: a training node's cores
   * are busy with DataLoader workers, and order recognition starved there would never prefetch.
   * Raising a thread's nice needs no privilege (lowering it back would).
   */
  static final int LOW_NICE = 10;

  /** The libc call that lowers a thread's priority. */
  public interface LibC {
    int setpriority(int which, int who, int prio);
  }

  private static final class Lib {
    static final LibC C = jnr.ffi.LibraryLoader.create(LibC.class).load("c");
  }

  /** A fixed pool of {@code threads} (at least 1) named {@code name}. */
  public static ExecutorService pool(String name, int threads) {
    return pool(name, threads, Thread.NORM_PRIORITY);
  }

  /**
   * A fixed pool of {@code threads} (at least 1) named {@code name}, at {@code priority}; at {@link
   * Thread#MIN_PRIORITY} its threads also run at nice {@link #LOW_NICE} (Linux).
   */
  public static ExecutorService pool(String name, int threads, int priority) {
    return Executors.newFixedThreadPool(
        Math.max(1, threads),
        r -> {
          Runnable body =
              priority == Thread.MIN_PRIORITY
                  ? () -> {
                    lowerCurrentThread();
                    r.run();
                  }
                  : r;
          Thread t = new Thread(body, name);
          t.setDaemon(true);
          t.setPriority(priority);
          return t;
        });
  }

  /**
   * Sets the calling thread's nice to {@link #LOW_NICE}: on Linux {@code setpriority(PRIO_PROCESS,
   * 0, n)} applies to the calling thread alone. Elsewhere, or if libc refuses, the thread runs as
   * it would have.
   */
  static void lowerCurrentThread() {
    if (!System.getProperty("os.name", "").startsWith("Linux")) {
      return;
    }
    try {
      Lib.C.setpriority(0, 0, LOW_NICE);
    } catch (RuntimeException | LinkageError e) {
      // a priority is a preference: run at the usual one
    }
  }
}
