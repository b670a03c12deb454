package org.hintfs.fs.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.control.Hint;
import org.hintfs.fs.store.TieredCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the admin lines of the control file.
 *
 * <ul>
 *   <li>{@code prefetch}: the files go on one queue, worked by a fixed pool ({@code threads}); a
 *       file already cached whole is skipped, so a prefetch stopped halfway resumes where it was.
 *       Progress is in {@link #counters()}, which {@code hintfs prefetch} polls through stats.
 *   <li>{@code prefetch cancel}: empties the queue; fetches under way finish.
 *   <li>{@code pin}: never evicted to make room, admitted whatever the policy says, and fetched
 *       like a prefetch. Pins are kept in {@code pinned.txt} in the cache directory and come back
 *       at the next mount.
 *   <li>{@code evict}: out of RAM and disk now (and unpinned).
 * </ul>
 */
public final class AdminOps implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AdminOps.class);

  private final TieredCache cache;
  private final Catalog catalog;
  private final java.util.function.BiConsumer<String, Exception> onError;
  private final Path pinFile;
  private final LinkedBlockingDeque<Integer> queue = new LinkedBlockingDeque<>();
  private final ExecutorService workers;
  private final AtomicLong queued = new AtomicLong();
  private final AtomicLong queuedBytes = new AtomicLong();
  private final LongAdder fetched = new LongAdder();
  private final LongAdder alreadyCached = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder cancelled = new LongAdder();
  private final LongAdder bytes = new LongAdder();
  private final LongAdder evicted = new LongAdder();
  private final LongAdder applied = new LongAdder();

  public AdminOps(
      TieredCache cache,
      Catalog catalog,
      java.util.function.BiConsumer<String, Exception> onError,
      Path cacheDir,
      int threads) {
    this.cache = cache;
    this.catalog = catalog;
    this.onError = onError;
    this.pinFile = cacheDir == null ? null : cacheDir.resolve("pinned.txt");
    this.workers = DaemonThreads.pool("admin-prefetch", threads);
    for (int i = 0; i < threads; i++) {
      workers.execute(this::work);
    }
    restorePins();
  }

  /** Carries out one admin line (on the hint applier's thread). */
  public void apply(Hint.Admin a) {
    switch (a.verb()) {
      case CANCEL -> {
        List<Integer> dropped = new ArrayList<>();
        queue.drainTo(dropped);
        cancelled.add(dropped.size());
        log.info("prefetch cancelled: {} queued files dropped", dropped.size());
      }
      case PREFETCH -> enqueue(a.files());
      case PIN -> {
        for (int id : a.files()) {
          cache.index().pin(id);
        }
        savePins();
        enqueue(a.files());
      }
      case UNPIN -> {
        for (int id : a.files()) {
          cache.index().unpin(id);
        }
        savePins();
      }
      case EVICT -> {
        boolean unpinned = false;
        for (int id : a.files()) {
          unpinned |= cache.index().isPinned(id);
          queue.remove(id);
          if (cache.evictFile(id)) {
            evicted.increment();
          }
        }
        if (unpinned) {
          savePins();
        }
      }
    }
    applied.increment();
  }

  private void enqueue(int[] files) {
    for (int id : files) {
      queue.add(id);
    }
    long b = 0;
    for (int id : files) {
      b += catalog.size(id);
    }
    queued.addAndGet(files.length);
    queuedBytes.addAndGet(b);
  }

  private void work() {
    while (true) {
      int id;
      try {
        id = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      try {
        if (cache.isFullyCached(id)) {
          alreadyCached.increment();
          continue;
        }
        bytes.add(cache.prefetchAll(id));
        fetched.increment();
      } catch (IOException | RuntimeException e) {
        failed.increment();
        onError.accept(catalog.path(id), e);
      }
    }
  }

  /** Progress and totals, for {@code stats}. */
  public Map<String, Object> counters() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("prefetch_queued", queued.get());
    m.put("prefetch_queued_bytes", queuedBytes.get());
    m.put("prefetch_fetched", fetched.sum());
    m.put("prefetch_already_cached", alreadyCached.sum());
    m.put("prefetch_failed", failed.sum());
    m.put("prefetch_cancelled", cancelled.sum());
    m.put("prefetch_bytes", bytes.sum());
    m.put("prefetch_waiting", queue.size());
    long[] p = cache.index().pinnedUsage();
    m.put("pinned_files", p[0]);
    m.put("pinned_bytes", p[1]);
    // Files open on readers' handles now, and those evicted while open (their bytes deleted at
    // the close): an admin's evict of an open file waits for its close as well.
    m.put("open_files", cache.index().openFiles());
    m.put("evicted_while_open", cache.index().evictedWhileOpen());
    m.put("evicted_files", evicted.sum());
    m.put("applied", applied.sum());
    return m;
  }

  private void savePins() {
    if (pinFile == null) {
      return;
    }
    StringBuilder b = new StringBuilder();
    for (int id : cache.index().pinnedIds()) {
      b.append(catalog.path(id)).append('\n');
    }
    try {
      Path tmp = pinFile.resolveSibling("pinned.txt.tmp");
      Files.writeString(tmp, b, StandardCharsets.UTF_8);
      Files.move(tmp, pinFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      log.warn("cannot save the pins to {}: {}", pinFile, e.toString());
    }
  }

  private void restorePins() {
    if (pinFile == null || !Files.exists(pinFile)) {
      return;
    }
    try {
      List<Integer> ids = new ArrayList<>();
      for (String p : Files.readAllLines(pinFile, StandardCharsets.UTF_8)) {
        int id = p.isEmpty() ? -1 : catalog.lookup(p);
        if (id >= 0 && !catalog.isDirectory(id)) {
          cache.index().pin(id);
          ids.add(id);
        } else if (!p.isEmpty()) {
          log.warn("pinned {} is no longer in the source", p);
        }
      }
      log.info("restored {} pins from {}", ids.size(), pinFile);
      enqueue(ids.stream().mapToInt(Integer::intValue).toArray());
    } catch (IOException e) {
      log.warn("cannot read the pins in {}: {}", pinFile, e.toString());
    }
  }

  @Override
  public void close() {
    workers.shutdownNow();
  }
}
