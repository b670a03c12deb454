package org.hintfs.fs.store;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.policy.AutoPolicy;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.Rekeyer;
import org.hintfs.policy.Residency;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the disk tier holds and the policy that decides it, under one monitor: charged bytes, the
 * blocks of large files, pins and holds, the capacity, admission and eviction ({@link Residency},
 * shared with the simulator), and every store put and delete, so the store's writer queue sees them
 * in the order the accounting did.
 *
 * <p>Nothing here waits on I/O: lookups, the RAM tier and source fetches stay in {@link
 * TieredCache}, outside this lock.
 */
public final class CacheIndex {
  private static final Logger log = LoggerFactory.getLogger(CacheIndex.class);

  /** Told, under the index's lock, when a file enters or leaves the cache. */
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

  private final Catalog catalog;
  private final Units units;
  private final LmdbStore store; // null: no disk tier
  private final CacheStats stats;
  private final Map<Integer, BitSet> blocksOf = new HashMap<>();
  private final Residency residency;

  /** Files open on readers' handles, with how many handles each (opened as hits, stand-ins). */
  private final java.util.concurrent.ConcurrentHashMap<Integer, Integer> inUse =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Files evicted while open: their stored bytes are deleted when the last handle closes. */
  private final java.util.Set<Integer> deleteAtClose =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final java.util.concurrent.atomic.LongAdder evictedWhileOpen =
      new java.util.concurrent.atomic.LongAdder();
  private final Rekeyer rekeyer;
  private volatile Listener listener = NO_LISTENER;
  private volatile long capacityNow; // residency's capacity, readable without the lock

  /** The capacity configured, and as lowered by a full map; the floor may hold it lower still. */
  private final long configured;

  private long mapCapacity = Long.MAX_VALUE;

  private volatile MinFree minFree = MinFree.DEFAULT;

  /** True while the floor holds the capacity below the configured one (logged once each way). */
  private boolean floorBound;

  CacheIndex(
      Catalog catalog,
      Units units,
      CachePolicy policy,
      LmdbStore store,
      long capacity,
      CacheStats stats) {
    this.catalog = catalog;
    this.units = units;
    this.store = store;
    this.stats = stats;
    this.capacityNow = capacity;
    this.configured = capacity;
    this.residency =
        new Residency(
            catalog.entryCount(),
            policy,
            capacity,
            new Residency.Events() {
              @Override
              public void added(int id) {
                deleteAtClose.remove(id); // stored anew: a close must not delete it
                listener.added(id);
              }

              @Override
              public void evicting(int id) {
                evictStored(id);
                listener.removed(id);
                stats.evictions.increment();
              }
            });
    this.rekeyer = new Rekeyer(this, residency);
  }

  /**
   * Rebuilds the accounting from the store's index; drops what the source no longer matches, and
   * the blocks of large files cut in another block size than this mount's ({@code --block-size}):
   * their length tells, and past block 0 their key, which that size salted ({@link CacheKey}).
   */
  void recover() {
    int[] kept = {0};
    int[] dropped = {0};
    int[] blocksDropped = {0};
    store.scanMeta(
        m -> {
          int id = catalog.lookup(m.path());
          boolean valid =
              id > 0
                  && !catalog.isDirectory(id)
                  && CacheKey.versionHash(catalog.versionTag(id)) == m.versionHash()
                  && m.block() >= 0
                  && m.block() < units.slotCount(id);
          if (valid && units.isBlocked(id) && !units.cutAsHere(id, m)) {
            store.delete(new CacheKey(m.key(), 0));
            blocksDropped[0]++;
            return;
          }
          if (!valid) {
            store.delete(new CacheKey(m.key(), 0));
            dropped[0]++;
            return;
          }
          synchronized (this) {
            residency.restore(id, m.charge());
            if (units.isBlocked(id)) {
              blocksOf.computeIfAbsent(id, k -> new BitSet()).set(m.block());
            }
          }
          kept[0]++;
        });
    store.account(accounting);
    synchronized (this) {
      residency.setCapacity(residency.capacity());
      log.info(
          "cache recovered: {} entries, {} bytes of {}; {} stale entries dropped",
          kept[0],
          residency.used(),
          residency.capacity(),
          dropped[0]);
      if (blocksDropped[0] > 0) {
        log.info(
            "{} blocks of large files dropped: they were cut in another block size than this"
                + " mount's {} bytes (--block-size), and are fetched again as read",
            blocksDropped[0],
            units.blockSize());
      }
    }
  }

  /**
   * An open: a hit if in RAM ({@code inRam}) or on disk; the policy sees it. With {@code use}, the
   * file's stored bytes stay readable until {@link #doneWith}, even if it is evicted meanwhile (one
   * lock hold: no eviction between the two).
   *
   * @return {@link TieredCache#HIT} and {@link TieredCache#IN_USE} bits
   */
  synchronized int accessed(int id, boolean inRam, boolean use) {
    boolean onDisk = diskUp() && residency.isResident(id);
    boolean hit = inRam || onDisk;
    residency.accessed(id, hit); // and a hold has done its work
    return (hit ? TieredCache.HIT : 0) | (use && keepOpen(id, onDisk) ? TieredCache.IN_USE : 0);
  }

  /**
   * A reader's handle will read this file's stored bytes (a stand-in): they stay readable until
   * {@link #doneWith}.
   *
   * @return false if it is not stored (nothing owed)
   */
  synchronized boolean use(int id) {
    return keepOpen(id, diskUp() && residency.isResident(id));
  }

  /**
   * Counts one more handle reading {@code id}'s stored bytes, if there are any: it is on disk
   * ({@code onDisk}), or was evicted while another handle had it open and its bytes wait for that
   * close (a miss all the same: the cache no longer counts it). Caller holds the lock.
   *
   * @return true if counted (one {@link #doneWith} owed)
   */
  private boolean keepOpen(int id, boolean onDisk) {
    if (!onDisk && !deleteAtClose.contains(id)) {
      return false;
    }
    inUse.merge(id, 1, Integer::sum);
    return true;
  }

  /**
   * A reader's handle that {@link #accessed(int, boolean, boolean)} or {@link #use} answered for
   * was closed: if the file was evicted while open, its bytes are deleted now. Takes the lock only
   * then: a reader's close never waits on the cache's maintenance.
   */
  void doneWith(int id) {
    inUse.computeIfPresent(id, (k, n) -> n > 1 ? n - 1 : null);
    if (deleteAtClose.contains(id)) {
      synchronized (this) {
        if (!inUse.containsKey(id) && deleteAtClose.remove(id)) {
          deleteStored(id);
        }
      }
    }
  }

  /** Files open on readers' handles now, whose stored bytes are kept for them. */
  public int openFiles() {
    return inUse.size();
  }

  /**
   * Files evicted while open on a reader's handle, their bytes deleted at its close, since mount.
   */
  public long evictedWhileOpen() {
    return evictedWhileOpen.sum();
  }

  /** The file, if stored as a guest, is this node's own now. */
  synchronized void own(int id) {
    residency.own(id);
  }

  /**
   * Re-files what is cached after the homes moved (a join, a healed partition): a file whose home
   * is now another member ({@code homedHere} false) becomes a guest, one whose home is now this
   * node is its own. Without it, the files a node had been home to kept the room of homed samples
   * after their homes moved away, and a node that had been home to more (while a member was away)
   * had no room left to stage its readers' next samples. Walks the cached ids off the lock, then
   * takes the lock a slice at a time.
   *
   * @return how many became guests
   */
  public int refileMoved(java.util.function.IntPredicate homedHere) {
    int[] ids = cachedIds();
    int n = 0;
    for (int from = 0; from < ids.length; from += REFILE_SLICE) {
      int to = Math.min(ids.length, from + REFILE_SLICE);
      boolean[] here = new boolean[to - from];
      for (int i = from; i < to; i++) {
        here[i - from] = homedHere.test(ids[i]);
      }
      synchronized (this) {
        for (int i = from; i < to; i++) {
          if (here[i - from]) {
            residency.own(ids[i]);
          } else if (residency.disown(ids[i])) {
            n++;
          }
        }
      }
    }
    return n;
  }

  /** Files {@link #refileMoved} re-files per hold of the lock. */
  static final int REFILE_SLICE = 4096;

  /** How many files are stored as guests (copies of samples other members are home to). */
  synchronized int guestFiles() {
    return residency.guestCount();
  }

  /** Whether a fetch of whole file {@code id} of {@code length} bytes would be stored now. */
  synchronized boolean wouldAdmit(int id, int length) {
    if (store == null || !store.admitting()) {
      return false;
    }
    return residency.wouldAdmit(id, StoredValue.charge(length));
  }

  /** A read served (recorded at read time when the open did not record it). */
  synchronized void served(int id, boolean hit) {
    residency.policy().recordAccess(id, hit);
  }

  /** Admits a fetched unit if the policy makes room for it, and queues it to the store. */
  synchronized void admit(int id, int block, String path, long vh, CacheKey key, byte[] payload) {
    admit(id, block, path, vh, key, payload, false);
  }

  /**
   * Admits a fetched unit; a {@code guest} (a copy of a sample another member is home to) only in
   * room no sample of this node's needs ({@link org.hintfs.policy.Residency}).
   *
   * @return true if it was not stored only because the disk writer's queue was full (the policy was
   *     not asked): offered again later, it may be
   */
  boolean admit(
      int id, int block, String path, long vh, CacheKey key, byte[] payload, boolean guest) {
    return admit(id, block, path, vh, key, payload, null, guest);
  }

  /**
   * {@link #admit(int, int, String, long, CacheKey, byte[], boolean)} of a payload that may share
   * {@code shared}, a native copy of it the caller holds (the RAM tier's): a large one then waits
   * for the writer as that copy, not as one of its own. The caller keeps its reference. {@code
   * payload} null: the unit is in {@code shared} only (fetched straight into native memory, or
   * owed), which the payload shares whatever its size, its checksum computed there.
   */
  boolean admit(
      int id,
      int block,
      String path,
      long vh,
      CacheKey key,
      byte[] payload,
      NativeBytes shared,
      boolean guest) {
    if (store == null) {
      return false;
    }
    // Its copy and checksum outside the lock; none for a unit the writer's queue will refuse.
    LmdbStore.Payload p =
        payload == null
            ? store.payload(shared)
            : store.hasRoom(payload.length)
                ? store.payload(payload, shared)
                : LmdbStore.onHeap(payload);
    if (p == null) {
      return false; // in native memory only, and freed meanwhile (the caller holds a reference)
    }
    try {
      return admit(id, block, path, vh, key, p, guest);
    } finally {
      p.releaseUnlessTaken();
    }
  }

  /** {@link #admit(int, int, String, long, CacheKey, byte[], boolean)} of a payload made ready. */
  private synchronized boolean admit(
      int id,
      int block,
      String path,
      long vh,
      CacheKey key,
      LmdbStore.Payload payload,
      boolean guest) {
    if (store == null || !store.healthy()) {
      return false;
    }
    if (!store.admitting()) {
      // The disk is full: what is stored stays served, nothing new is stored until there is room.
      stats.fullSkipped.increment();
      stats.fullSkippedBytes.add(payload.length);
      return false;
    }
    BitSet blocks = blocksOf.get(id);
    if (units.isBlocked(id) ? blocks != null && blocks.get(block) : residency.isResident(id)) {
      if (!guest) {
        residency.own(id); // stored as a guest, asked of this node as its home now
      }
      return false; // already stored by an earlier fetch of the same unit
    }
    boolean page = units.isPage(id, block);
    if (page && blocks != null && blocks.get(units.blockOfPage(id, block))) {
      return false; // its block is stored: one copy of each byte
    }
    org.hintfs.policy.PackedOrder po = page ? packed.get(id) : null;
    if (po != null
        && blocks != null
        && !roomAmongPages(id, block, po, blocks, StoredValue.charge(payload.length))) {
      return false; // every page sampled is needed sooner than this one
    }
    if (!store.hasRoom(payload.length)) {
      // The disk is behind the source: served without being stored (it is still in the RAM tier,
      // if there is one), never a wait here, under the lock every open takes.
      stats.writeQueueFull.increment();
      return true;
    }
    if (!residency.admit(id, StoredValue.charge(payload.length), guest)) {
      return false;
    }
    if (units.isBlocked(id)) {
      blocks = blocksOf.computeIfAbsent(id, k -> new BitSet());
      blocks.set(block);
      if (!page) {
        dropPagesOf(id, block, blocks);
      }
    }
    stats.admitted.increment();
    // fits: only this lock's holder adds to the queue. A large file's block leaves the page cache
    // once stored: its readers are served from memory (LmdbStore, "Memory").
    if (!store.put(key, vh, payload, block, path, units.isBlocked(id))) {
      // The writer found the disk full since the check above: not stored after all.
      stats.fullSkipped.increment();
      stats.fullSkippedBytes.add(payload.length);
      drop(id, block, key, payload.length);
    }
    return false;
  }

  /**
   * Packed files whose samples and order are known ({@code packed} hints): their pages are evicted
   * among themselves by next use ({@link #roomAmongPages}).
   */
  private final Map<Integer, org.hintfs.policy.PackedOrder> packed =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Seeded: which stored pages {@link #roomAmongPages} compares. Guarded by this. */
  private final java.util.SplittableRandom pageSampler = new java.util.SplittableRandom(61);

  /** How many stored pages a packed file's admission compares, and how many slots it tries. */
  static final int PAGE_CANDIDATES = 16;

  static final int PAGE_TRIES = 256;

  /** The samples and order of packed file {@code id}, from a {@code packed} hint; null: none. */
  public void setPacked(int id, org.hintfs.policy.PackedOrder order) {
    if (order == null) {
      packed.remove(id);
    } else {
      packed.put(id, order);
    }
  }

  /** The samples and order of packed file {@code id}, or null. */
  public org.hintfs.policy.PackedOrder packedOrder(int id) {
    return packed.isEmpty() ? null : packed.get(id);
  }

  /**
   * Room for page {@code slot} of packed file {@code id} among the file's own pages, Belady's way
   * with sampling (as Redis samples its LRU): while the cache is full, of up to {@link
   * #PAGE_CANDIDATES} stored pages of the file picked at random, the one needed last goes, if it is
   * needed later than this page; a page needed sooner than every one sampled is not stored. With
   * the cache half the file, half the slots hold a page, so 256 tries find 16 at once. Caller holds
   * the lock.
   *
   * @return true if there is room now (or the file's pages cannot give it: the policy decides)
   */
  private boolean roomAmongPages(
      int id, int slot, org.hintfs.policy.PackedOrder po, BitSet blocks, long charge) {
    long mine = po.nextUse(units.offset(id, slot), units.offset(id, slot) + units.length(id, slot));
    int first = units.pageSlot(id, 0);
    int pages = units.pageCount(id);
    while (residency.used() + charge > residency.capacity()) {
      int victim = -1;
      long latest = mine;
      for (int t = 0, found = 0; t < PAGE_TRIES && found < PAGE_CANDIDATES; t++) {
        int s = first + pageSampler.nextInt(pages);
        if (!blocks.get(s)) {
          continue;
        }
        found++;
        long at = po.nextUse(units.offset(id, s), units.offset(id, s) + units.length(id, s));
        if (at > latest) {
          latest = at;
          victim = s;
        }
      }
      if (victim < 0) {
        return false;
      }
      store.delete(units.key(id, victim));
      blocks.clear(victim);
      residency.release(id, StoredValue.charge(units.length(id, victim)));
      stats.pagesEvicted.increment();
    }
    return true;
  }

  /**
   * Block {@code block} of file {@code id} is stored now: the pages inside it that a random reader
   * stored go (one copy of each byte). Caller holds the lock.
   */
  private void dropPagesOf(int id, int block, BitSet blocks) {
    int[] range = units.pagesOfBlock(id, block);
    for (int s = blocks.nextSetBit(range[0]);
        s >= 0 && s <= range[1];
        s = blocks.nextSetBit(s + 1)) {
      store.delete(units.key(id, s));
      blocks.clear(s);
      residency.release(id, StoredValue.charge(units.length(id, s)));
      stats.pagesMerged.increment();
    }
  }

  /**
   * A file is being evicted: its stored units are deleted, or, while a reader's handle has it open,
   * at that handle's close ({@link #doneWith}), as a Unix file unlinked while open stays readable.
   * The accounting and the policy see the eviction now. Without this, a file opened as a hit and
   * evicted for the next prefetch before its reads came was read from the source (the policy counts
   * the open as the file's access and sees its next use an epoch away: the next victim). Caller
   * holds the lock.
   */
  private void evictStored(int id) {
    if (!inUse.isEmpty() && blocksOf.get(id) == null) {
      deleteAtClose.add(id);
      // Its last handle may have closed between the add and now: that close saw no entry, or is
      // waiting for this lock and will find none.
      if (inUse.containsKey(id)) {
        evictedWhileOpen.increment();
        return;
      }
      deleteAtClose.remove(id);
    }
    deleteStored(id);
  }

  /** Deletes every stored unit of a file (it is being evicted). Caller holds the lock. */
  private void deleteStored(int id) {
    String path = catalog.path(id);
    BitSet blocks = blocksOf.remove(id);
    if (blocks == null) {
      store.delete(CacheKey.of(path, 0));
    } else {
      for (int b = blocks.nextSetBit(0); b >= 0; b = blocks.nextSetBit(b + 1)) {
        store.delete(units.key(id, b));
      }
    }
  }

  /** Drops a damaged or stale unit. */
  synchronized void drop(int id, int block, CacheKey key, int length) {
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

  /** Evicts a file from disk and unpins it (an admin's {@code evict}); true if it was on disk. */
  synchronized boolean evict(int id) {
    boolean had = residency.isResident(id);
    residency.evict(id);
    if (had) {
      stats.adminEvictions.increment();
    }
    return had;
  }

  /** True while there is a disk tier to store into (none, or gone down: false). */
  public synchronized boolean storing() {
    return diskUp();
  }

  /** When the disk tier stopped storing for a full disk (epoch milliseconds), or 0. */
  public long fullSince() {
    return store == null ? 0 : store.fullSince();
  }

  /** True if block {@code block} of file {@code id} is stored. */
  synchronized boolean isStored(int id, int block) {
    if (!diskUp()) {
      return false;
    }
    BitSet b = blocksOf.get(id);
    return b != null && b.get(block);
  }

  /** True if the unit is stored: its block, or a whole file. */
  synchronized boolean isStored(Unit u) {
    return units.isBlocked(u.id()) ? isStored(u.id(), u.block()) : isResident(u.id());
  }

  /** True if every block of a blocked file is on disk. */
  synchronized boolean allBlocksStored(int id) {
    if (!diskUp()) {
      return false;
    }
    BitSet b = blocksOf.get(id);
    return b != null && b.nextClearBit(0) >= units.blockCount(id);
  }

  /** Called by the store's writer when LMDB's map is full: lower the capacity and evict. */
  synchronized void onMapFull(long bytesToFree) {
    long lowered = Math.max(0, Math.min(residency.capacity(), residency.used()) - bytesToFree);
    log.warn(
        "LMDB map full with {} bytes cached; lowering the cache capacity from {} to {}",
        residency.used(),
        residency.capacity(),
        lowered);
    mapCapacity = lowered;
    residency.setCapacity(lowered);
    capacityNow = lowered;
  }

  /** Sets the free-space floor of the cache's disk ({@code --cache-min-free}). */
  public void keepFree(MinFree floor) {
    minFree = floor;
  }

  /** The free-space floor in force. */
  public MinFree minFree() {
    return minFree;
  }

  /**
   * Where the capacity comes from: {@code configured} (the option, or the disk's room at mount), or
   * the floor while it holds the cache below that.
   */
  public synchronized String capacityBasis(String configured) {
    return floorBound
        ? "held at its size: the disk is at its free-space floor (--cache-min-free " + minFree + ")"
        : configured;
  }

  /** What the store's writer tells the accounting (on its thread): kept off the public API. */
  private final LmdbStore.Accounting accounting =
      new LmdbStore.Accounting() {
        @Override
        public void notStored(String path, int block, CacheKey key, int length) {
          int id = catalog.lookup(path);
          if (id > 0) {
            stats.fullSkipped.increment();
            stats.fullSkippedBytes.add(length);
            drop(id, block, key, length);
          }
        }

        @Override
        public boolean space(long usable, long total, long fileBytes) {
          return onSpace(usable, total, fileBytes);
        }
      };

  /**
   * The disk's free space, every few seconds (see {@link LmdbStore#WATCH_MILLIS}): the capacity is
   * what the store's file holds now plus the free space above the floor, never above the configured
   * one, and never below what is charged now. The floor bounds growth and never evicts: LMDB's file
   * does not shrink (an evicted entry's pages are reused inside it), so evicting for the floor
   * would lose cached files and give the disk nothing back. When others take the disk to the floor,
   * the cache holds its size and the policy replaces within it (each admission evicts its victims);
   * the capacity grows back as the disk frees.
   *
   * @return true if there is room to store (admission, if paused for a full disk, resumes): at
   *     least 1% of the disk (at most 64 MiB) free above the floor
   */
  synchronized boolean onSpace(long usable, long total, long fileBytes) {
    long floor = minFree.bytesOf(total);
    long above = usable - floor;
    long cap =
        Math.min(
            Math.min(configured, mapCapacity),
            Math.max(residency.used(), fileBytes + Math.max(0, above)));
    boolean bound = cap < Math.min(configured, mapCapacity);
    if (bound != floorBound) {
      floorBound = bound;
      if (bound) {
        log.warn(
            "the disk under the cache has {} bytes free, its floor is {} (--cache-min-free {}):"
                + " the cache grows no further than {} bytes",
            usable,
            floor,
            minFree,
            cap);
      } else {
        log.info("the disk under the cache has room again: cache capacity back to {}", cap);
      }
    }
    if (cap != residency.capacity()) {
      residency.setCapacity(cap);
      capacityNow = cap;
    }
    return above >= Math.min(64L << 20, total / 100);
  }

  /** Sets the listener told of files entering and leaving the cache. */
  public void setListener(Listener l) {
    listener = l == null ? NO_LISTENER : l;
  }

  /**
   * Runs {@code r} under the lock that guards the policy: hints that change the policy's inputs
   * (scores re-key its heap) or the substitution chooser (which follows residency through the
   * listener) take it here.
   */
  public synchronized void underLock(Runnable r) {
    r.run();
  }

  /**
   * The known future order changed: the policy re-keys what is cached ({@link Rekeyer}: requests
   * that come while one runs are merged into one more run; the keys are computed outside the lock
   * and applied under it a slice at a time). Returns at once if another thread is re-keying.
   */
  public void orderChanged() {
    rekeyer.request();
  }

  /** A prefetch of {@code id} is starting; true if it is on disk already. */
  synchronized boolean prefetching(int id) {
    residency.policy().prefetching(id);
    return diskUp() && residency.isResident(id);
  }

  /** True if at least one unit of the file is on disk. */
  public synchronized boolean isResident(int id) {
    return diskUp() && residency.isResident(id);
  }

  /**
   * False once the store has gone down (a full disk, an I/O error): what residency remembers is no
   * longer on disk to serve, so nothing counts as a disk hit or as cached, and the prefetcher fills
   * the RAM tier instead. A later mount opens the store again.
   */
  private boolean diskUp() {
    return store != null && store.healthy();
  }

  /** Replaces the policy; the new one is told of every file cached now. */
  public synchronized void switchPolicy(CachePolicy next) {
    residency.setPolicy(next);
    log.info("cache policy is now {}", next.name());
  }

  /** Ids of the files on disk now. */
  public synchronized int[] cachedIds() {
    if (!diskUp()) {
      return new int[0];
    }
    return residency.residents();
  }

  /** Bytes charged now. */
  public synchronized long usedBytes() {
    return residency.used();
  }

  /**
   * The capacity in force (it can be lowered at run time, see {@link #onMapFull}); without the
   * lock: the prefetcher asks on every open.
   */
  public long capacityBytes() {
    return capacityNow;
  }

  /** Number of files with at least one unit cached. */
  public synchronized int cachedFiles() {
    return diskUp() ? residency.policy().size() : 0;
  }

  /** The policy's name ("auto (shade)" while auto follows shade). */
  public synchronized String policyName() {
    CachePolicy p = residency.policy();
    return p instanceof AutoPolicy a ? a.describe() : p.name();
  }

  /** Checks the policy and the accounting agree; for tests and the end of a run. */
  public synchronized void checkInvariants() {
    residency.checkInvariants();
  }
}
