package org.hintfs.fs.concurrent;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Thread pools of named daemon threads: background work never keeps the JVM alive. */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** A fixed pool of {@code threads} (at least 1) named {@code name}. */
  public static ExecutorService pool(String name, int threads) {
    return pool(name, threads, Thread.NORM_PRIORITY);
  }

  /** A fixed pool of {@code threads} (at least 1) named {@code name}, at {@code priority}. */
  public static ExecutorService pool(String name, int threads, int priority) {
    return Executors.newFixedThreadPool(
        Math.max(1, threads),
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          t.setPriority(priority);
          return t;
        });
  }
}
