package org.hintfs.fs.serve;

import java.io.FileNotFoundException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceUnavailableException;
import org.hintfs.fs.Errno;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns what went wrong into an errno, and counts and logs it exactly once. A mount keeps two: the
 * errors answered to readers (an errno returned to an open or a read), and the failures of
 * background work no reader saw (a prefetch or background fetch that failed, the trace); {@code
 * status} shows them apart.
 *
 * <p>ENOENT is the normal answer to a probe (Python looks for many files that do not exist), so it
 * is counted but not logged. Everything else is logged at WARN, the first 20 of each errno in full
 * and then every 1000th, so a dead source cannot flood the log.
 */
public final class ErrorTable {
  private static final Logger log = LoggerFactory.getLogger(ErrorTable.class);
  private static final int LOG_FIRST = 20;
  private static final int LOG_EVERY = 1000;

  private final Map<Errno, LongAdder> counts = new EnumMap<>(Errno.class);

  /** An empty table. */
  public ErrorTable() {
    for (Errno e : Errno.values()) {
      counts.put(e, new LongAdder());
    }
  }

  /** The errno for a failure. */
  public static Errno errnoFor(Throwable t) {
    if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
      return Errno.ENOENT;
    }
    if (t instanceof ReadOnlyException) {
      return Errno.EROFS;
    }
    if (t instanceof NotDirectoryException) {
      return Errno.ENOTDIR;
    }
    if (t instanceof IsDirectoryException) {
      return Errno.EISDIR;
    }
    if (t instanceof BadHandleException) {
      return Errno.EBADF;
    }
    if (t instanceof AccessDeniedException) {
      return Errno.EACCES;
    }
    if (t instanceof ObjectChangedException) {
      return Errno.ESTALE;
    }
    if (t instanceof org.hintfs.fs.control.StillApplyingException) {
      return Errno.EINPROGRESS; // accepted, not applied yet: applied in order
    }
    if (t instanceof IllegalArgumentException) {
      return Errno.EINVAL; // InvalidHintException included: a rejected control line
    }
    if (t instanceof SourceUnavailableException) {
      return Errno.EIO;
    }
    return Errno.EIO;
  }

  /** Maps, counts and (rate-limited) logs a failure of {@code op} on {@code path}. */
  public Errno record(String op, String path, Throwable t) {
    Errno e = errnoFor(t);
    LongAdder c = counts.get(e);
    c.increment();
    if (e != Errno.ENOENT && !(t instanceof org.hintfs.fs.control.InvalidHintException)) {
      long n = c.sum();
      if (n <= LOG_FIRST || n % LOG_EVERY == 0) {
        if (e == Errno.EIO && !(t instanceof java.io.IOException)) {
          log.warn("{} {} -> {} (#{}): unexpected", op, path, e, n, t);
        } else {
          log.warn("{} {} -> {} (#{}): {}", op, path, e, n, t.toString());
        }
      }
    }
    return e;
  }

  /** Counts an errno answered without an exception (such as EROFS for a write). */
  public void count(Errno e) {
    counts.get(e).increment();
  }

  /** Nonzero counts by errno name. */
  public Map<String, Long> snapshot() {
    Map<String, Long> m = new java.util.TreeMap<>();
    counts.forEach(
        (k, v) -> {
          long n = v.sum();
          if (n > 0) {
            m.put(k.name(), n);
          }
        });
    return m;
  }
}
