package org.hintfs.fs.fuse;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
 * <p>How: {@code fuse_setup} parses the options and mounts; each of N Java threads then loops on
 * {@code fuse_read_cmd} (one blocking read of /dev/fuse, which hands each request to one reader)
 * and {@code fuse_process_cmd} (which dispatches it to the callbacks) until the mount goes away;
 * {@code fuse_teardown} cleans up. This is what libfuse's {@code fuse_loop_mt} does, with fixed
 * threads.
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
   * @param threads request threads: each blocked source read holds one
   * @throws IllegalStateException if libfuse refuses the mount (it printed why on stderr)
   */
  static void run(Pointer ops, long opsSize, Path mountpoint, String[] fuseArgs, int threads)
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
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t =
          new Thread(
              () -> {
                while (lib.fuse_exited(fuse) == 0) {
                  Pointer cmd = lib.fuse_read_cmd(fuse);
                  if (cmd != null) {
                    lib.fuse_process_cmd(fuse, cmd);
                  }
                }
              },
              "fuse-" + i);
      t.setDaemon(true);
      t.start();
      workers.add(t);
    }
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
    for (Thread t : workers) {
      t.join();
    }
    tornDown.set(true);
    watcher.interrupt();
    watcher.join(10_000);
    lib.fuse_teardown(fuse, mp.getValue());
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
