package org.hintfs.fs.concurrent;

/**
 * Marks where a kernel-request thread waits on something slow: the source, a peer, another thread's
 * fetch. The FUSE loop keeps only a few threads reading requests; a thread that enters a marked
 * wait hands its place to another at once, so cached reads never queue behind it (the idea of
 * {@link java.util.concurrent.ForkJoinPool.ManagedBlocker}, and of Go's runtime handing a thread's
 * processor on when it enters a system call).
 *
 * <p>Use as {@code Blocking.begin(); try { wait } finally { Blocking.end(); }}. On any other thread
 * both calls do nothing; marks nest. A wait that is not marked is found by the loop's watchdog
 * instead, a few milliseconds later: a mark is a promptness, never a correctness, matter.
 */
public final class Blocking {
  private Blocking() {}

  /** What a request thread's pool does when one of its threads starts and stops waiting. */
  public interface Compensator {
    /** Thread {@code t}, the caller, starts to wait: another should take its place. */
    void blocked(RequestThread t);

    /** Thread {@code t}, the caller, is back from its wait. */
    void unblocked(RequestThread t);
  }

  /** A thread that serves kernel requests for a pool that compensates for its waits. */
  public static class RequestThread extends Thread {
    private final Compensator pool;
    private int depth;

    /** A thread running {@code body}, named {@code name}, whose waits {@code pool} covers. */
    public RequestThread(Compensator pool, Runnable body, String name) {
      super(body, name);
      this.pool = pool;
    }
  }

  /** The calling thread starts a wait that may be long. */
  public static void begin() {
    if (Thread.currentThread() instanceof RequestThread t && t.depth++ == 0) {
      t.pool.blocked(t);
    }
  }

  /** The calling thread's wait, begun with {@link #begin}, is over. */
  public static void end() {
    if (Thread.currentThread() instanceof RequestThread t && --t.depth == 0) {
      t.pool.unblocked(t);
    }
  }
}
