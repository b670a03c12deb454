package org.hintfs.fs.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.Residency;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read path behind every open file: RAM tier, then LMDB, then the source.
 *
 * <p>Units: a file up to the whole-object limit is one unit (block 0, its whole length); a larger
 * file is cut into fixed blocks, each a unit of its own. The policy sees catalog ids: it admits and
 * evicts files, and evicting a large file drops every block of it that is cached.
 *
 * <p>Capacity: {@code used} is the sum of what each entry occupies in LMDB pages ({@link
 * StoredValue#charge}), never above {@code capacity}. Admission evicts the policy's victims until
 * the new entry fits; an entry larger than the whole capacity is served but not stored. If LMDB
 * still runs out of map (free-page fragmentation), the capacity is lowered and the writer retries.
 *
 * <p>Concurrency: lookups run in parallel; policy calls and accounting happen under this object's
 * lock, and so does every store put and delete, so the writer's queue sees them in the order the
 * accounting did. Source reads happen outside the lock, one per unit at a time ({@link Fetcher}).
 *
 * <p>Failure: the cache never fails a read the source can serve. A damaged entry is counted,
 * dropped and refetched; if the store fails it marks itself down and every read goes to the source.
 */
public final class TieredCache implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TieredCache.class);

  /** Sizes of the cache. */
  public record Config(
      long capacityBytes, long ramBytes, int wholeObjectLimit, int blockSize, int maxFetches) {}

  private final DatasetSource source;
  private final Catalog catalog;
  private volatile Listener listener = NO_LISTENER;

  /** Told, under the cache's lock, when a file enters or leaves the cache. */
  public interface Listener {
    void added(int id);

    void removed(int id);
  }

  private static final Listener NO_LISTENER =
      new Listener() {
        @Override
        public void added(int id) {}

        @Override
        public void removed(int id) {}
      };
  private final LmdbStore store; // null: no disk tier
  private final String storeProblem;
  private final Cache<Long, byte[]> ram;
  private final Fetcher fetcher;
  private final Config config;
  private final CacheStats stats = new CacheStats();
  private final Map<Integer, BitSet> blocksOf = new HashMap<>();
  private final Residency residency;

  /** RAM entries read ahead from disk for a predicted open, dropped once that open reads them. */
  private final java.util.Set<Long> promoted = ConcurrentHashMap.newKeySet();

  /**
   * A cache over {@code source}.
   *
   * @param store the disk tier, or null if there is none ({@code storeProblem} says why)
   */
  private TieredCache(
      DatasetSource source,
      Catalog catalog,
      CachePolicy policy,
      LmdbStore store,
      String storeProblem,
      Config config) {
    this.source = source;
    this.catalog = catalog;
    this.store = store;
    this.storeProblem = storeProblem;
    this.config = config;
    this.residency =
        new Residency(
            catalog.entryCount(),
            policy,
            store == null ? 0 : config.capacityBytes(),
            new Residency.Events() {
              @Override
              public void added(int id) {
                listener.added(id);
              }

              @Override
              public void evicting(int id) {
                deleteStored(id);
                listener.removed(id);
                stats.evictions.increment();
              }
            });
    this.fetcher = new Fetcher(config.maxFetches());
    this.ram =
        Caffeine.newBuilder()
            .maximumWeight(config.ramBytes())
            .weigher((Long k, byte[] v) -> v.length)
            .build();
    if (store != null) {
      recover();
    }
  }

  /**
   * A cache with its disk tier in {@code dir} (null for RAM only). If the store cannot be opened,
   * the cache runs without it and says why in {@link #storeHealth()}: never a reason to fail.
   */
  public static TieredCache open(
      DatasetSource source,
      Catalog catalog,
      CachePolicy policy,
      java.nio.file.Path dir,
      Config config) {
    java.util.concurrent.atomic.AtomicReference<TieredCache> self =
        new java.util.concurrent.atomic.AtomicReference<>();
    LmdbStore store = null;
    String problem = null;
    if (dir != null) {
      // Far above the capacity: LMDB needs room for free pages and copy-on-write, and a sparse
      // file costs nothing until used. Twice the capacity, and at least 1 GiB above it.
      long cap = config.capacityBytes();
      long mapSize = Math.max(2 * cap, cap + (1L << 30));
      try {
        store = new LmdbStore(dir, mapSize, bytes -> self.get().onMapFull(bytes));
      } catch (IOException | RuntimeException e) {
        problem = e.getMessage();
        log.warn("disk cache disabled, serving from the source: {}", problem);
      }
    }
    TieredCache c = new TieredCache(source, catalog, policy, store, problem, config);
    self.set(c);
    return c;
  }

  /** Rebuilds the accounting from the store's index; drops what the source no longer matches. */
  private void recover() {
    int[] kept = {0};
    int[] dropped = {0};
    store.scanMeta(
        m -> {
          int id = catalog.lookup(m.path());
          boolean valid =
              id > 0
                  && !catalog.isDirectory(id)
                  && CacheKey.versionHash(catalog.versionTag(id)) == m.versionHash()
                  && m.block() >= 0
                  && m.block() < blockCount(id);
          if (!valid) {
            store.delete(new CacheKey(m.key(), 0));
            dropped[0]++;
            return;
          }
          synchronized (this) {
            residency.restore(id, m.charge());
            if (isBlocked(id)) {
              blocksOf.computeIfAbsent(id, k -> new BitSet()).set(m.block());
            }
          }
          kept[0]++;
        });
    synchronized (this) {
      residency.setCapacity(residency.capacity());
      log.info(
          "cache recovered: {} entries, {} bytes of {}; {} stale entries dropped",
          kept[0],
          residency.used(),
          residency.capacity(),
          dropped[0]);
    }
  }

  /**
   * What the whole dataset would occupy in the cache, in LMDB pages: the base of a capacity given
   * as a share ({@code 100%} must hold every file, page rounding included).
   */
  public static long footprint(Catalog catalog, int wholeObjectLimit, int blockSize) {
    long sum = 0;
    for (int id = 0; id < catalog.entryCount(); id++) {
      if (catalog.isDirectory(id)) {
        continue;
      }
      long size = catalog.size(id);
      if (size <= wholeObjectLimit) {
        sum += StoredValue.charge((int) size);
      } else {
        long full = size / blockSize;
        sum += full * StoredValue.charge(blockSize);
        if (size % blockSize != 0) {
          sum += StoredValue.charge((int) (size % blockSize));
        }
      }
    }
    return sum;
  }

  /** Whether a file is cached in blocks (larger than the whole-object limit). */
  public boolean isBlocked(int id) {
    return catalog.size(id) > config.wholeObjectLimit();
  }

  /** The block size for blocked files. */
  public int blockSize() {
    return config.blockSize();
  }

  private int blockCount(int id) {
    if (!isBlocked(id)) {
      return 1;
    }
    return (int) ((catalog.size(id) + config.blockSize() - 1) / config.blockSize());
  }

  private int unitLength(int id, int block) {
    if (!isBlocked(id)) {
      return (int) catalog.size(id);
    }
    long start = (long) block * config.blockSize();
    return (int) Math.min(config.blockSize(), catalog.size(id) - start);
  }

  /**
   * The bytes of one unit of a file: block 0 of a small file is the whole file.
   *
   * @throws IOException only if the source cannot serve it either
   */
  public byte[] read(int id, int block) throws IOException {
    return read(id, block, true);
  }

  /**
   * Records an open of a whole file as an access (hit if it can be served without the source),
   * before any read: with the kernel's page cache, a reopened file may never reach {@link #read},
   * and the policy must see every access all the same.
   *
   * @return true for a hit
   */
  public boolean access(int id) {
    // The RAM tier is looked at outside the lock; disk membership and the policy under one hold.
    boolean inRam = ram.getIfPresent(((long) id) << 32) != null;
    boolean hit;
    synchronized (this) {
      hit = inRam || residency.isResident(id);
      residency.accessed(id, hit); // and a hold has done its work
    }
    (hit ? stats.openHits : stats.openMisses).increment();
    return hit;
  }

  /**
   * The bytes of one unit; {@code recordAccess} false when the access was already recorded at open
   * ({@link #access}).
   */
  public byte[] read(int id, int block, boolean recordAccess) throws IOException {
    return read(id, block, recordAccess, false);
  }

  private byte[] read(int id, int block, boolean recordAccess, boolean promoting)
      throws IOException {
    long rk = ((long) id << 32) | block;
    byte[] b = ram.getIfPresent(rk);
    if (b != null && !promoting && promoted.remove(rk)) {
      ram.invalidate(rk); // promoted for this read: its work is done
    }
    if (b != null) {
      stats.ramHits.increment();
      stats.bytesFromCache.add(b.length);
      if (recordAccess) {
        served(id, true);
      }
      return b;
    }
    String path = catalog.path(id);
    String version = catalog.versionTag(id);
    long vh = CacheKey.versionHash(version);
    int length = unitLength(id, block);
    CacheKey key = CacheKey.of(path, block);
    if (store != null) {
      LmdbStore.Lookup l = store.get(key, vh, length);
      if (l.hit()) {
        stats.diskHits.increment();
        stats.bytesFromCache.add(length);
        if (recordAccess) {
          served(id, true);
        }
        if (promoting) {
          // Read ahead of a predicted open: held in RAM until that open's read takes it. An
          // ordinary disk hit is not kept: a pass that reads each file once would only make the
          // collector copy the RAM tier's bytes (cache-bench: 20-30% slower cold, see BENCHMARKS).
          ram.put(rk, l.payload());
          promoted.add(rk);
        }
        return l.payload();
      }
      if (l.check() != null) {
        (l.check() == StoredValue.Check.CORRUPT ? stats.corrupt : stats.stale).increment();
        log.warn("dropping {} cache entry of {} block {}", l.check(), path, block);
        drop(id, block, key, length);
      }
    }
    if (recordAccess) {
      served(id, false);
    }
    return fetcher.fetch(rk, () -> fetchAndAdmit(id, block, path, version, vh, key, length));
  }

  private byte[] fetchAndAdmit(
      int id, int block, String path, String version, long vh, CacheKey key, int length)
      throws IOException {
    // A fetch of the same unit may have finished between this caller's lookups and its turn as
    // the leader: look again before going to the source.
    byte[] done = ram.getIfPresent(((long) id << 32) | block);
    if (done != null) {
      return done;
    }
    if (store != null) {
      // With the RAM tier off (or the unit already evicted from it), the finished fetch left its
      // bytes only in the store.
      LmdbStore.Lookup l = store.get(key, vh, length);
      if (l.hit()) {
        return l.payload();
      }
    }
    stats.misses.increment();
    long offset = (long) block * config.blockSize();
    byte[] b = new byte[length];
    ByteBuffer buf = ByteBuffer.wrap(b);
    long t0 = System.nanoTime();
    while (buf.hasRemaining()) {
      int n = source.read(path, version, offset + buf.position(), buf);
      if (n <= 0) {
        break;
      }
    }
    stats.sourceSeconds.observe((System.nanoTime() - t0) / 1e9);
    stats.bytesFromSource.add(buf.position());
    if (buf.position() != length) {
      // A short read is never cached: the object is not what the catalog says it is.
      throw new IOException(
          "short read of " + path + ": " + buf.position() + " of " + length + " bytes");
    }
    if (config.ramBytes() > 0) {
      // With no RAM tier, nothing goes in: Caffeine evicts asynchronously, so even a cache of
      // weight 0 would serve a just-fetched unit for a moment, as a hit nobody admitted.
      ram.put(((long) id << 32) | block, b);
    }
    admit(id, block, path, vh, key, b);
    return b;
  }

  private void served(int id, boolean hit) {
    synchronized (this) {
      residency.policy().recordAccess(id, hit);
    }
  }

  private synchronized void admit(
      int id, int block, String path, long vh, CacheKey key, byte[] payload) {
    if (store == null || !store.healthy()) {
      return;
    }
    BitSet blocks = blocksOf.get(id);
    if (isBlocked(id) ? blocks != null && blocks.get(block) : residency.isResident(id)) {
      return; // already stored by an earlier fetch of the same unit
    }
    if (!residency.admit(id, StoredValue.charge(payload.length))) {
      return;
    }
    if (isBlocked(id)) {
      blocksOf.computeIfAbsent(id, k -> new BitSet()).set(block);
    }
    stats.admitted.increment();
    store.put(key, vh, payload, block, path);
  }

  /** Deletes every stored unit of a file (it is being evicted). Caller holds the lock. */
  private void deleteStored(int id) {
    String path = catalog.path(id);
    BitSet blocks = blocksOf.remove(id);
    if (blocks == null) {
      store.delete(CacheKey.of(path, 0));
    } else {
      for (int b = blocks.nextSetBit(0); b >= 0; b = blocks.nextSetBit(b + 1)) {
        store.delete(CacheKey.of(path, b));
      }
    }
  }

  private synchronized void drop(int id, int block, CacheKey key, int length) {
    store.delete(key);
    BitSet blocks = blocksOf.get(id);
    if (blocks != null) {
      blocks.clear(block);
    }
    long c = blocks == null ? Long.MAX_VALUE : StoredValue.charge(length);
    if (residency.release(id, c)) {
      blocksOf.remove(id);
      listener.removed(id);
    }
  }

  /**
   * Holds a file until its next open: like a pin (admitted whatever the policy says, never evicted
   * for room) but released by that open, or by {@link #releaseHolds}. Substitution's owed samples
   * are held so that what is fetched for the trainer is still there when it asks.
   */
  public synchronized void hold(int id) {
    residency.hold(id);
  }

  /** Releases every hold; the files stay cached until the policy picks them. */
  public synchronized void releaseHolds() {
    residency.releaseHolds();
  }

  /** Held files and their cached bytes: {files, bytes}. */
  public synchronized long[] heldUsage() {
    return residency.heldUsage();
  }

  /** True while a source fetch of the file (its first block) is under way. */
  public boolean isFetching(int id) {
    return fetcher.isFetching(((long) id) << 32);
  }

  /** Pins a file: it is admitted whatever the policy says and never evicted for room. */
  public synchronized void pin(int id) {
    residency.pin(id);
  }

  /** Unpins a file; it stays cached until the policy picks it. */
  public synchronized void unpin(int id) {
    residency.unpin(id);
  }

  /** True if pinned. */
  public synchronized boolean isPinned(int id) {
    return residency.isPinned(id);
  }

  /** Ids of the pinned files. */
  public synchronized int[] pinnedIds() {
    return residency.pinned();
  }

  /** Pinned files and their cached bytes: {files, bytes}. */
  public synchronized long[] pinnedUsage() {
    return residency.pinnedUsage();
  }

  /**
   * Removes a file from both tiers and unpins it (an admin's {@code evict}).
   *
   * @return true if something was cached
   */
  public boolean evictFile(int id) {
    boolean had;
    synchronized (this) {
      had = residency.isResident(id);
      residency.evict(id);
      if (had) {
        stats.adminEvictions.increment();
      }
    }
    for (int b = 0; b < blockCount(id); b++) {
      had |= ram.asMap().remove(((long) id << 32) | b) != null;
    }
    return had;
  }

  /** True if every unit of the file is on disk (or, for a whole file, in RAM). */
  public boolean isFullyCached(int id) {
    if (!isBlocked(id)) {
      return isCached(id);
    }
    synchronized (this) {
      BitSet b = blocksOf.get(id);
      return b != null && b.cardinality() == blockCount(id);
    }
  }

  /** Fetches every unit of a file that is not cached (an admin's {@code prefetch}); no access. */
  public long prefetchAll(int id) throws IOException {
    long bytes = 0;
    for (int b = 0; b < blockCount(id); b++) {
      bytes += read(id, b, false).length;
    }
    return bytes;
  }

  /** Called by the store's writer when LMDB's map is full: lower the capacity and evict. */
  void onMapFull(long bytesToFree) {
    synchronized (this) {
      long lowered = Math.max(0, Math.min(residency.capacity(), residency.used()) - bytesToFree);
      log.warn(
          "LMDB map full with {} bytes cached; lowering the cache capacity from {} to {}",
          residency.used(),
          residency.capacity(),
          lowered);
      residency.setCapacity(lowered);
    }
  }

  /** Sets the listener told of files entering and leaving the cache. */
  public void setListener(Listener l) {
    listener = l == null ? NO_LISTENER : l;
  }

  /** Runs {@code r} under the lock that guards the policy (for hints that change its inputs). */
  public synchronized void underLock(Runnable r) {
    r.run();
  }

  /** The known future order changed: the policy re-keys what is cached. */
  public synchronized void orderChanged() {
    residency.policy().orderChanged(cachedIds());
  }

  /**
   * Fetches a whole file ahead of its read (not an access); admission as for any fetch. A file
   * already on disk is read into the RAM tier instead (promoted), so its open finds it in memory.
   */
  public void prefetch(int id) throws IOException {
    boolean onDisk;
    synchronized (this) {
      residency.policy().prefetching(id);
      onDisk = residency.isResident(id);
    }
    (onDisk ? stats.promotions : stats.prefetches).increment();
    read(id, 0, false, onDisk && config.ramBytes() > 0);
  }

  /**
   * True if an open would find the file as near as it can be: in the RAM tier, or on disk when
   * there is no RAM tier. The prefetcher brings the rest closer.
   */
  public boolean isNear(int id) {
    if (ram.getIfPresent(((long) id) << 32) != null) {
      return true;
    }
    if (config.ramBytes() > 0) {
      return false;
    }
    synchronized (this) {
      return residency.isResident(id);
    }
  }

  /** Replaces the policy; the new one is told of every file cached now. */
  public synchronized void switchPolicy(CachePolicy next) {
    residency.setPolicy(next);
    log.info("cache policy is now {}", next.name());
  }

  /** True if the file can be served without the source: on disk or in RAM (whole files). */
  public boolean isCached(int id) {
    synchronized (this) {
      if (residency.isResident(id)) {
        return true;
      }
    }
    return ram.getIfPresent(((long) id) << 32) != null;
  }

  /** Ids of the files on disk now. */
  public synchronized int[] cachedIds() {
    return residency.residents();
  }

  /** Bytes charged now. */
  public synchronized long usedBytes() {
    return residency.used();
  }

  /** The capacity in force (it can be lowered at run time, see {@link #onMapFull}). */
  public synchronized long capacityBytes() {
    return residency.capacity();
  }

  /** Number of files with at least one unit cached. */
  public synchronized int cachedFiles() {
    return residency.policy().size();
  }

  /** The policy's name ("auto (shade)" while auto follows shade). */
  public synchronized String policyName() {
    CachePolicy p = residency.policy();
    return p instanceof org.hintfs.policy.AutoPolicy a ? a.describe() : p.name();
  }

  /** Counters. */
  public CacheStats stats() {
    return stats;
  }

  /** Source requests in flight now. */
  public int fetchesInFlight() {
    return fetcher.inFlight();
  }

  /** Reads sent to the source, retries included (a retry is one more miss). */
  public long sourceRequests() {
    return stats.misses.sum();
  }

  /** Units read from the source (waiters on a fetch already running are coalesced). */
  public long misses() {
    return stats.misses.sum();
  }

  /** Requests that waited for a fetch another caller had started. */
  public long coalescedFetches() {
    return fetcher.coalesced.sum();
  }

  /** "ok", "none: reason" or "down: reason". */
  public String storeHealth() {
    if (store == null) {
      return "none" + (storeProblem == null ? "" : ": " + storeProblem);
    }
    return store.healthy() ? "ok" : "down: " + store.downReason();
  }

  /** Checks the policy and the accounting agree; for tests and the end of a run. */
  public synchronized void checkInvariants() {
    residency.checkInvariants();
  }

  /** Waits for queued writes to commit. */
  public void flush() throws InterruptedException {
    if (store != null) {
      store.flush();
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (store != null) {
      store.close();
    }
  }
}
