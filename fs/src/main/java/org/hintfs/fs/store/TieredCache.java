package org.hintfs.fs.store;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.backing.DatasetSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.policy.CachePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read path behind every open file: the {@link Tier}s in order, RAM ({@link RamTier}), disk
 * ({@link DiskTier}, LMDB), in a cluster the unit's home ({@link PeerTier}), the source ({@link
 * SourceTier}). A miss in the near tiers is fetched from the far ones once however many readers
 * race for it ({@link Fetcher}), and offered to the near ones. A copy of a sample another member is
 * home to is stored as a guest (it never takes a homed sample's room).
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
 * <p>Concurrency: this class holds no lock. Lookups run in parallel; policy calls, accounting and
 * every store put and delete happen under the {@link CacheIndex}'s lock, which is never held across
 * I/O or a wait. Source reads happen outside it, one per unit at a time ({@link Fetcher}).
 *
 * <p>Failure: the cache never fails a read the source can serve. A damaged entry is counted,
 * dropped and refetched; if the store fails it marks itself down and every read goes to the source.
 */
public final class TieredCache implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TieredCache.class);

  /** Sizes of the cache. */
  public record Config(
      long capacityBytes,
      String capacityBasis,
      long ramBytes,
      int wholeObjectLimit,
      int blockSize,
      int maxFetches,
      long writeQueueBytes) {
    /** Sizes with the disk writer's queue at its default bound. */
    public Config(
        long capacityBytes,
        String capacityBasis,
        long ramBytes,
        int wholeObjectLimit,
        int blockSize,
        int maxFetches) {
      this(
          capacityBytes,
          capacityBasis,
          ramBytes,
          wholeObjectLimit,
          blockSize,
          maxFetches,
          LmdbStore.DEFAULT_QUEUE_LIMIT);
    }
  }

  private final DatasetSource source;
  private final Catalog catalog;
  private final LmdbStore store; // null: no disk tier
  private final String storeProblem;
  private final RamTier ram;
  private final DiskTier disk; // null: no disk tier
  private final SourceTier sourceTier;
  private final Fetcher fetcher;
  private final Config config;
  private final CacheStats stats = new CacheStats();
  private final Units units;
  private final CacheIndex index;
  private final PeerTier peers; // null: not in a cluster
  private final RecentKeys keys;

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
      Config config,
      PeerTier peers) {
    this.source = source;
    this.peers = peers;
    this.catalog = catalog;
    this.store = store;
    this.storeProblem = storeProblem;
    this.config = config;
    this.units = new Units(catalog, config.wholeObjectLimit(), config.blockSize());
    this.keys = new RecentKeys(catalog);
    this.index =
        new CacheIndex(
            catalog, units, policy, store, store == null ? 0 : config.capacityBytes(), stats);
    this.fetcher = new Fetcher(config.maxFetches());
    this.ram = new RamTier(config.ramBytes());
    this.disk =
        store == null
            ? null
            : new DiskTier(store, index, stats, id -> peers != null && !peers.isHome(id));
    this.sourceTier = new SourceTier(source, stats);
    this.owedMax = config.writeQueueBytes();
    if (store != null) {
      index.recover();
      if (peers == null) {
        store.onRoom(this::repayOwed);
      }
    }
  }

  /**
   * Blocks of large files the disk writer refused for a full queue, oldest first, each with its
   * bytes outside the heap (a reference on the RAM tier's copy, or a copy of its own when the tier
   * no longer had it): offered again when the writer has room ({@link #repayOwed}). Without this, 8
   * readers of 8 shards read again fetched 32-49 of the 256 blocks a second time: the RAM tier had
   * let go of the blocks the writer refused (BENCHMARKS.md, issue 38). At most {@code
   * --write-queue} bytes are owed (a second queue as large as the writer's, off the heap); past
   * that the oldest are dropped, and a later read fetches them.
   */
  private record Owed(Unit unit, NativeBytes bytes) {}

  /** Native bytes of the owed blocks' own copies (those not shared with the RAM tier). */
  private final java.util.concurrent.atomic.AtomicLong owedCopies =
      new java.util.concurrent.atomic.AtomicLong();

  private final java.util.concurrent.ConcurrentLinkedDeque<Owed> owed =
      new java.util.concurrent.ConcurrentLinkedDeque<>();

  /** Bytes of the owed blocks (their copies, or references on the RAM tier's). */
  private final java.util.concurrent.atomic.AtomicLong owedBytes =
      new java.util.concurrent.atomic.AtomicLong();

  private final long owedMax;

  /**
   * Notes a block the writer refused for a full queue, to be offered again: with a reference on
   * {@code shared}, the RAM tier's copy of it, if the caller holds one, else with a copy of its
   * own.
   */
  private void owe(Unit u, byte[] b, NativeBytes shared) {
    int length = b != null ? b.length : shared.length();
    if (length > owedMax) {
      return;
    }
    NativeBytes held =
        shared != null && shared.acquire()
            ? shared
            : b == null ? null : NativeBytes.copyOf(b, owedCopies);
    if (held == null) {
      return; // no memory for it: a later read fetches it
    }
    owedBytes.addAndGet(length);
    owed.addLast(new Owed(u, held));
    while (owedBytes.get() > owedMax) {
      Owed oldest = owed.pollFirst();
      if (oldest == null) {
        break;
      }
      drop(oldest);
    }
  }

  /** Lets an owed block go (taken off {@link #owed} by the caller). */
  private void drop(Owed o) {
    owedBytes.addAndGet(-o.bytes().length());
    o.bytes().release();
  }

  /**
   * On the disk writer's thread, when it has room again ({@link LmdbStore#onRoom}): offers the owed
   * blocks again, oldest first, while it keeps up. A block is offered only if its file's version is
   * the one it was fetched at and it is not stored yet; the policy decides as for any fetch. No
   * access is recorded and nothing is fetched.
   */
  private void repayOwed() {
    Owed o;
    while (diskKeepsUp() && (o = owed.pollFirst()) != null) {
      Unit u = o.unit();
      int id = u.id();
      try {
        if (index.isStored(id, u.block())) {
          continue;
        }
        Unit now = units.unit(id, u.block(), false);
        if (now.versionHash() != u.versionHash() || now.length() != o.bytes().length()) {
          continue; // the file changed since: its old bytes are not to be stored
        }
        if (!store.hasRoom(o.bytes().length())) {
          owed.addFirst(o); // not counted as refused again: the next commit tries again
          o = null;
          return;
        }
        if (disk.offer(now, null, o.bytes())) {
          owed.addFirst(o); // still behind: the next commit tries again
          o = null;
          return;
        }
        if (index.isStored(id, u.block())) {
          stats.writeQueueRepaid.increment();
        }
      } finally {
        if (o != null) {
          drop(o);
        }
      }
    }
  }

  /** Drops every owed block and frees its copy. */
  private void forgiveAll() {
    for (Owed o; (o = owed.pollFirst()) != null; ) {
      drop(o);
    }
  }

  /** Drops the owed blocks of file {@code id} (evicted: not to be stored again by a repay). */
  private void forgive(int id) {
    for (Owed o : owed) {
      // remove() succeeds for one thread only (the writer may be polling the same entry).
      if (o.unit().id() == id && owed.remove(o)) {
        drop(o);
      }
    }
  }

  /**
   * Native bytes held for blocks the writer refused for a full queue, until it has room for them
   * (at most {@code --write-queue}).
   */
  public long owedBytes() {
    return owedBytes.get();
  }

  /** Blocks refused for a full queue and waiting to be offered again (tests). */
  int owedBlocks() {
    return owed.size();
  }

  /**
   * Native bytes of owed blocks' own copies, as opposed to references on the RAM tier's (tests).
   */
  long owedCopyBytes() {
    return owedCopies.get();
  }

  /** Drops a unit from the RAM tier alone (tests: the tier evicts it). */
  boolean dropFromRam(int id, int block) {
    return ram.evict(id, block);
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
    return open(source, catalog, policy, dir, config, null);
  }

  /**
   * A cache as {@link #open(DatasetSource, Catalog, CachePolicy, java.nio.file.Path, Config)},
   * whose misses go to their home in the cluster through {@code peers} (null: straight to the
   * source).
   */
  public static TieredCache open(
      DatasetSource source,
      Catalog catalog,
      CachePolicy policy,
      java.nio.file.Path dir,
      Config config,
      PeerTier peers) {
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
        store =
            new LmdbStore(
                dir, mapSize, bytes -> self.get().index.onMapFull(bytes), config.writeQueueBytes());
      } catch (IOException | RuntimeException e) {
        problem = e.getMessage();
        log.warn("disk cache disabled, serving from the source: {}", problem);
      }
    }
    TieredCache c = new TieredCache(source, catalog, policy, store, problem, config, peers);
    self.set(c);
    return c;
  }

  /**
   * What the whole dataset would occupy in the cache, in LMDB pages: the base of a capacity given
   * as a share ({@code 100%} must hold every file, page rounding included).
   */
  public static long footprint(Catalog catalog, int wholeObjectLimit, int blockSize) {
    return new Units(catalog, wholeObjectLimit, blockSize).footprint();
  }

  /** Whether a file is cached in blocks (larger than the whole-object limit). */
  public boolean isBlocked(int id) {
    return units.isBlocked(id);
  }

  /** The block size for blocked files. */
  public int blockSize() {
    return units.blockSize();
  }

  /** How files are cut into units (tests). */
  Units units() {
    return units;
  }

  /** What the disk tier holds, the policy, pins and holds. */
  public CacheIndex index() {
    return index;
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
    return (access(id, false) & HIT) != 0;
  }

  /** {@link #access(int, boolean)}'s bit: the open was a hit. */
  public static final int HIT = 1;

  /**
   * {@link #access(int, boolean)}'s bit: the file's stored bytes stay readable until {@link
   * #doneWith}, even if it is evicted meanwhile.
   */
  public static final int IN_USE = 2;

  /**
   * Records an open as {@link #access(int)} does; with {@code use}, a file stored on disk stays
   * readable there until the reader's handle is closed ({@link #doneWith}): the policy counts the
   * open as the file's access and, seeing its next use an epoch away, may evict it for the next
   * prefetch before the handle's reads come. The eviction stands (the policy and the accounting see
   * it, as the simulator does); the bytes are deleted at the close.
   *
   * @return {@link #HIT} and {@link #IN_USE} bits
   */
  public int access(int id, boolean use) {
    // The RAM tier is looked at outside the lock; disk membership and the policy under one hold.
    boolean inRam = ram.contains(id, 0);
    int r = index.accessed(id, inRam, use && !isBlocked(id));
    boolean hit = (r & HIT) != 0;
    (hit ? stats.openHits : stats.openMisses).increment();
    if (hit && !inRam && disk != null && !isBlocked(id)) {
      disk.willNeed(keys.whole(id, units.length(id, 0)));
    }
    return r;
  }

  /**
   * Keeps a whole file's stored bytes readable for a reader's handle until {@link #doneWith} (a
   * stand-in being served).
   *
   * @return true if kept (one {@link #doneWith} owed), false if it is not on disk
   */
  public boolean use(int id) {
    return !isBlocked(id) && index.use(id);
  }

  /** The handle an {@link #IN_USE} open or a true {@link #use} kept {@code id} for was closed. */
  public void doneWith(int id) {
    index.doneWith(id);
  }

  /**
   * The bytes of one unit; {@code recordAccess} false when the access was already recorded at open
   * ({@link #access}).
   */
  public byte[] read(int id, int block, boolean recordAccess) throws IOException {
    return read(id, block, recordAccess, false, false);
  }

  /** Whole files up to this size are served from LMDB's map by every read ({@link #copyOut}). */
  public static final int COPY_OUT_MAX = 256 * 1024;

  /**
   * Serves {@code n} bytes of whole file {@code id} from {@code offset} straight from the disk
   * tier's map into {@code sink}, checked (version, length, CRC32C) on this read: no Java array is
   * made. For files up to {@link #COPY_OUT_MAX}, whose open was recorded ({@link #access}); a file
   * of more READs than two is read once into the heap instead (each call checks the whole file).
   *
   * @param countHit count the disk hit (once per open handle)
   * @return false if the bytes must come the usual way ({@link #read}): not on disk alone, in RAM,
   *     still queued for writing, or failing a check
   */
  public boolean copyOut(int id, long offset, int n, boolean countHit, NativeSink sink) {
    int len = units.length(id, 0);
    if (!servedFromMap(id, len)) {
      return false;
    }
    if (!disk.copyOut(keys.whole(id, len), offset, n, sink)) {
      return false;
    }
    if (countHit) {
      counted(stats.diskHits, id, len, false); // the access was recorded at open
    }
    return true;
  }

  /**
   * Block {@code block} of file in blocks {@code id}, for a reader's handle to serve its READs of
   * it from the disk tier's map ({@link #copyOut(MappedBlock, long, int, boolean, NativeSink)}).
   */
  public MappedBlock mappedBlock(int id, int block) {
    Unit u = unitOf(id, block);
    return new MappedBlock(u);
  }

  /** Block {@code block} of file {@code id}: block 0 with its key from {@link #keys}. */
  private Unit unitOf(int id, int block) {
    return block == 0 ? keys.whole(id, units.length(id, 0)) : units.unit(id, block, false);
  }

  /** The length of block {@code block} of file {@code id} (the whole file's for block 0 of one). */
  public int blockLength(int id, int block) {
    return units.length(id, block);
  }

  /**
   * Serves {@code n} bytes of a block of a file in blocks from {@code offset} (within the block)
   * straight from the disk tier's map into {@code sink}: no Java array is made; the header is
   * checked on every call, the payload's CRC32C once per stored copy for {@code m}.
   *
   * @param countHit count the disk hit and the access (once per block a handle reads)
   *     <p>A block in the RAM tier when a handle comes to it ({@code countHit}: its first READ of
   *     it) is held for that handle ({@link MappedBlock#close}) and served from there the same way.
   * @return false if the block must come the usual way ({@link #read}): not in RAM or on disk,
   *     still queued for writing, or failing a check
   */
  public boolean copyOut(MappedBlock m, long offset, int n, boolean countHit, NativeSink sink) {
    Unit u = m.unit;
    NativeBytes held = m.ram();
    if (held == null && countHit) {
      held = ram.hold(u.id(), u.block());
      if (held != null && !m.holdRam(held)) {
        held.release();
        held = m.ram();
      } else if (held != null) {
        counted(stats.ramHits, u.id(), u.length(), true);
      }
    }
    if (held != null) {
      return held.copyTo(offset, n, sink);
    }
    if (disk == null || ram.contains(u.id(), u.block())) {
      return false;
    }
    if (!disk.copyOut(m, offset, n, sink)) {
      return false;
    }
    if (countHit) {
      counted(stats.diskHits, u.id(), u.length(), true);
    }
    return true;
  }

  /**
   * True if whole file {@code id} of {@code len} bytes is one whose reads {@link #copyOut} serves
   * from the disk tier's map: small enough, not in blocks, not in the RAM tier (which comes first).
   */
  private boolean servedFromMap(int id, int len) {
    return disk != null && !isBlocked(id) && len <= COPY_OUT_MAX && !ram.contains(id, 0);
  }

  /**
   * One unit for a peer that asked this node, the unit's home: from RAM or disk, else from the
   * source (never from another peer), and admitted here like any fetch, so that the job fetches it
   * once. Not an access of this node's readers.
   */
  public byte[] readForPeer(int id, int block) throws IOException {
    return readForPeer(id, block, null);
  }

  /**
   * {@link #readForPeer(int, int)}, asking {@code formerHome} (a member's name: where the asker
   * last knew the unit's home) before the source if neither RAM nor disk holds it.
   */
  public byte[] readForPeer(int id, int block, String formerHome) throws IOException {
    byte[] b = read(id, block, false, false, true, FetchGate.Priority.DEMAND, formerHome);
    index.own(id); // held as a guest before its home moved here: the job's copy now
    return b;
  }

  /**
   * One unit from RAM or disk for the member that is its home now and lacks it; null if neither
   * holds it. Never fetches, never an access of this node's readers.
   */
  public byte[] peekForPeer(int id, int block) {
    byte[] b = ram.peek(id, block);
    if (b == null && disk != null) {
      b = disk.get(units.unit(id, block, true));
    }
    if (b != null) {
      stats.bytesFromCache.add(b.length);
    }
    return b;
  }

  private byte[] read(int id, int block, boolean recordAccess, boolean promoting, boolean forPeer)
      throws IOException {
    return read(id, block, recordAccess, promoting, forPeer, FetchGate.Priority.DEMAND);
  }

  private byte[] read(
      int id,
      int block,
      boolean recordAccess,
      boolean promoting,
      boolean forPeer,
      FetchGate.Priority priority)
      throws IOException {
    return read(id, block, recordAccess, promoting, forPeer, priority, null);
  }

  private byte[] read(
      int id,
      int block,
      boolean recordAccess,
      boolean promoting,
      boolean forPeer,
      FetchGate.Priority priority,
      String formerHome)
      throws IOException {
    // A promotion leaves a unit it finds in RAM there; any other read takes a promoted one out.
    // A RAM hit needs nothing else: the unit (its length, path, version) is made on a miss.
    byte[] b = promoting ? ram.peek(id, block) : ram.take(id, block);
    if (b != null) {
      return servedFromCache(stats.ramHits, id, b, recordAccess);
    }
    Unit u =
        block == 0 && !forPeer
            ? keys.whole(id, units.length(id, 0))
            : units.unit(id, block, forPeer).formerHome(formerHome);
    if (disk != null) {
      b = disk.get(u);
      if (b != null) {
        servedFromCache(stats.diskHits, id, b, recordAccess);
        if (promoting) {
          // Read ahead of a predicted open: held in RAM until that open's read takes it. An
          // ordinary disk hit is not kept: a pass that reads each file once would only make the
          // collector copy the RAM tier's bytes (cache-bench: 20-30% slower cold, see BENCHMARKS).
          ram.promote(u, b);
        }
        return b;
      }
    }
    if (recordAccess) {
      index.served(id, false);
    }
    return fetcher.fetch(u.ramKey(), () -> fetchAndOffer(u), priority);
  }

  private byte[] servedFromCache(LongAdder tierHits, int id, byte[] b, boolean recordAccess) {
    counted(tierHits, id, b.length, recordAccess);
    return b;
  }

  /** A hit of {@code length} bytes in a tier; the access recorded with {@code recordAccess}. */
  private void counted(LongAdder tierHits, int id, int length, boolean recordAccess) {
    tierHits.increment();
    stats.bytesFromCache.add(length);
    if (recordAccess) {
      index.served(id, true);
    }
  }

  /**
   * The far tiers, for a unit the near ones did not hold: its home (in a cluster, unless a peer
   * asked this node, its home), else the source; what they answer is offered to RAM and disk.
   */
  private byte[] fetchAndOffer(Unit u) throws IOException {
    // A fetch of the same unit may have finished between this caller's lookups and its turn as
    // the leader: look again before going farther. With the RAM tier off (or the unit already
    // evicted from it), the finished fetch left its bytes only on disk.
    byte[] done = ram.peek(u.id(), u.block());
    if (done == null && disk != null) {
      done = disk.get(u);
    }
    if (done != null) {
      return done;
    }
    byte[] b = peers == null ? null : u.forPeer() ? peers.fromFormerHome(u) : peers.get(u);
    if (b == null) {
      b = sourceTier.get(u);
    }
    offer(u, b);
    return b;
  }

  /** Offers {@code b}, just fetched, to the RAM tier and the disk (or, with none, the index). */
  private void offer(Unit u, byte[] b) {
    ram.put(u, b);
    if (disk != null) {
      // A large unit waits for the writer (and, refused, to be offered again) as the RAM tier's
      // copy, one reference more on it, rather than as one more copy of its own.
      NativeBytes inRam =
          b.length >= LmdbStore.OFF_HEAP_MIN ? ram.holdQuietly(u.id(), u.block(), b.length) : null;
      try {
        toDisk(u, b, inRam);
      } finally {
        if (inRam != null) {
          inRam.release();
        }
      }
    } else {
      // No disk: the index still tells the policy (and substitution) what was fetched.
      boolean guest = peers != null && !u.forPeer() && !peers.isHome(u.id());
      index.admit(u.id(), u.block(), u.path(), u.versionHash(), u.key(), b, guest);
    }
  }

  /**
   * Offers a fetched unit to the disk ({@code b}, or null for one in {@code shared} only; {@code
   * shared} its native copy the caller holds, or null): refused for a full writer's queue, a block
   * of a large file is owed, to be offered again.
   */
  private void toDisk(Unit u, byte[] b, NativeBytes shared) {
    if (disk.offer(u, b, shared) && peers == null && !u.forPeer() && isBlocked(u.id())) {
      owe(u, b, shared);
    } else if (!owed.isEmpty() && !store.healthy()) {
      forgiveAll(); // the store went down: nothing held will be stored
    }
  }

  /** Files stored as guests: copies of samples another member of the cluster is home to. */
  public int guestFiles() {
    return index.guestFiles();
  }

  /**
   * The far tiers' deadline: 4x the p90 of their recent answers, at least {@code floorMillis}, at
   * most 5 s (1 s before 16 answers).
   */
  public long fetchDeadlineMillis(long floorMillis) {
    return Math.max(floorMillis, fetcher.deadlineMillis());
  }

  /**
   * True if the far tiers have answered nothing for {@code millis} while a fetch waited that long:
   * the source hangs, as opposed to one slow request.
   */
  public boolean sourceSilentFor(long millis) {
    return fetcher.silentFor(millis);
  }

  /** True while a source fetch of the file (its first block) is under way. */
  public boolean isFetching(int id) {
    return fetcher.isFetching(((long) id) << 32);
  }

  /**
   * Removes a file from both tiers and unpins it (an admin's {@code evict}).
   *
   * @return true if something was cached
   */
  public boolean evictFile(int id) {
    forgive(id);
    boolean had = index.evict(id);
    for (int b = 0; b < units.blockCount(id); b++) {
      had |= ram.evict(id, b);
    }
    return had;
  }

  /** Native bytes the RAM tier's entries hold now, with those readers still hold (stats, tests). */
  public long ramNativeBytes() {
    return ram.nativeBytes();
  }

  /** True if every unit of the file is on disk (or, for a whole file, in RAM). */
  public boolean isFullyCached(int id) {
    if (!isBlocked(id)) {
      return isCached(id);
    }
    return index.allBlocksStored(id);
  }

  /**
   * Fetches every unit of a file that is not cached (an admin's {@code prefetch}); no access. Its
   * source reads go after readers' misses and prefetches ({@link FetchGate}).
   */
  public long prefetchAll(int id) throws IOException {
    long bytes = 0;
    for (int b = 0; b < units.blockCount(id); b++) {
      bytes += read(id, b, false, false, false, FetchGate.Priority.ADMIN).length;
    }
    return bytes;
  }

  /**
   * Fetches a whole file ahead of its read (not an access); admission as for any fetch. A file
   * already on disk is brought nearer instead: up to {@link #COPY_OUT_MAX}, the kernel is asked to
   * read its pages of the map ({@link LmdbStore#willNeed}: no copy, its reads check and copy it out
   * of the map); larger, it is read into the RAM tier (promoted), so its open finds it in memory.
   * Its source read goes after readers' misses and never takes the reads kept for them ({@link
   * FetchGate}).
   */
  public void prefetch(int id) throws IOException {
    if (isBlocked(id) && index.storing()) {
      prefetchBlocks(id);
      return;
    }
    boolean onDisk = index.prefetching(id);
    int len = units.length(id, 0);
    if (onDisk && servedFromMap(id, len)) {
      // Its reads will copy it out of the map: have the kernel read its pages now, no heap copy.
      stats.diskReadAhead.increment();
      disk.willNeed(keys.whole(id, len));
      return;
    }
    (onDisk ? stats.promotions : stats.prefetches).increment();
    read(id, 0, false, onDisk && ram.enabled(), false, FetchGate.Priority.PREFETCH);
  }

  /**
   * A large file ahead of its reader (a shard next in a hinted order): every block not stored yet,
   * in order, one ranged GET each as a prefetch, stored as the reader's blocks are. While the disk
   * writer is behind, it waits (up to {@link #WRITER_WAIT_MILLIS} a block) rather than fetch what
   * could not be stored; past that, or when a block was not kept (the policy declined it, the cache
   * is full of what is needed sooner), it stops, and the reader's read-ahead fetches the rest.
   * Without a disk tier (or with it down) a large file is prefetched as before: its first block.
   */
  private void prefetchBlocks(int id) throws IOException {
    stats.prefetches.increment();
    index.prefetching(id);
    for (int b = 0; b < units.blockCount(id); b++) {
      if (index.isStored(id, b)) {
        continue;
      }
      if (Thread.currentThread().isInterrupted()) {
        return; // the mount is closing
      }
      try {
        if (!diskKeepsUp() && !store.awaitRoom(WRITER_WAIT_MILLIS)) {
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      read(id, b, false, false, false, FetchGate.Priority.PREFETCH);
      stats.blocksPrefetched.increment();
      if (!index.isStored(id, b)) {
        return;
      }
    }
  }

  /** How long a large file's prefetch waits for the disk writer before each block. */
  static final long WRITER_WAIT_MILLIS = 5_000;

  /**
   * Whether whole file {@code id}, fetched now, would be kept: the disk tier's policy would admit
   * it. Without a disk tier or in a cluster, true (a fetch fills the RAM tier, or the home's copy).
   */
  public boolean wouldKeep(int id) {
    if (disk == null || peers != null) {
      return true;
    }
    return index.wouldAdmit(id, units.length(id, 0));
  }

  /**
   * One block of a large file read ahead of its reader ({@code ReadAhead}): from the near tiers,
   * else fetched as a prefetch (after readers' misses, never in the reads kept for them) and
   * offered to the tiers as any fetch (a large one straight into native memory: {@link
   * #fetchIntoRam}). Not an access: the reader's read records it ({@link #servedBlock}).
   */
  public Fetched readAhead(int id, int block) throws IOException {
    if (fetchesIntoRam(id, block)) {
      Fetched f = fetchIntoRam(id, block, FetchGate.Priority.PREFETCH);
      if (f != null) {
        return f;
      }
    }
    byte[] b = read(id, block, false, false, false, FetchGate.Priority.PREFETCH);
    return heldAhead(id, block, b);
  }

  /**
   * A reader's own read of a block no read-ahead had (the first of a file, one after a seek, one
   * whose read-ahead failed): {@link #read}, except that a large block in neither RAM nor on disk
   * is fetched as {@link #readAhead} fetches it, straight into native memory, as a reader's miss,
   * and handed over held there (with 8 readers of 8 shards, 40% of the blocks came this way, each a
   * 4 MiB array through OkHttp). The access is recorded either way.
   */
  public Fetched readBlock(int id, int block) throws IOException {
    if (fetchesIntoRam(id, block)) {
      Fetched f = fetchIntoRam(id, block, FetchGate.Priority.DEMAND);
      if (f != null) {
        index.served(id, false);
        return f;
      }
    }
    return new Fetched(null, read(id, block));
  }

  /** A block read ahead as an array {@code b}: held where the RAM tier put it, if it did. */
  private Fetched heldAhead(int id, int block, byte[] b) {
    NativeBytes e = ram.holdQuietly(id, block, b.length);
    if (e == null) {
      return new Fetched(null, b);
    }
    return heldAhead(id, block, e);
  }

  /** A block read ahead, held in native memory with the caller's reference on {@code e}. */
  private Fetched heldAhead(int id, int block, NativeBytes e) {
    MappedBlock m = mappedBlock(id, block);
    m.holdRam(e);
    return new Fetched(m, null);
  }

  /**
   * True if a block read ahead is fetched straight into native memory: a large block (1 MiB and up)
   * with a RAM tier and a disk tier to take it, outside a cluster (a peer's answer comes as an
   * array).
   */
  private boolean fetchesIntoRam(int id, int block) {
    return disk != null
        && peers == null
        && ram.enabled()
        && isBlocked(id)
        && units.length(id, block) >= LmdbStore.OFF_HEAP_MIN;
  }

  /**
   * A block not in RAM or on disk ({@link #readAhead}, or {@link #readBlock} with {@code priority}
   * {@code DEMAND}), its GET's body read straight into native memory that the RAM tier keeps and
   * the writer's queue shares: no 4 MiB array on the heap, no copy of one into the tier (young
   * collections and the copy took about a tenth of a warm daemon's first read, BENCHMARKS.md). Null
   * if it is near after all, or a joined fetch's bytes were freed: the usual way then.
   */
  private Fetched fetchIntoRam(int id, int block, FetchGate.Priority priority) throws IOException {
    if (ram.contains(id, block) || index.isStored(id, block)) {
      return null;
    }
    Unit u = unitOf(id, block);
    Object r = fetcher.fetchAny(u.ramKey(), () -> fetchIntoRamAndOffer(u), priority);
    if (r instanceof byte[] b) {
      return heldAhead(id, block, b); // joined a fetch into an array, or found it near
    }
    NativeBytes e = ((Fetcher.Landed) r).claim();
    return e == null ? null : heldAhead(id, block, e);
  }

  /**
   * {@link #fetchAndOffer} of a unit fetched straight into native memory: the RAM tier adopts it,
   * the writer's queue (or the owed blocks) shares it. An array if it was found near, or no native
   * memory could be had.
   */
  private Object fetchIntoRamAndOffer(Unit u) throws IOException {
    byte[] done = ram.peek(u.id(), u.block());
    if (done == null) {
      done = disk.get(u);
    }
    if (done != null) {
      return done;
    }
    NativeBytes e = sourceTier.getNative(u, ram::allocate);
    if (e == null) {
      byte[] b = sourceTier.get(u);
      offer(u, b);
      return b;
    }
    boolean handed = false;
    try {
      ram.adopt(u, e);
      toDisk(u, null, e);
      handed = true;
      return new Fetcher.Landed(e);
    } finally {
      if (!handed) {
        e.release();
      }
    }
  }

  /**
   * True if a random reader's READ in block {@code block} of file {@code id} is served by pages
   * ({@link #readPages}): the block is neither in RAM nor on disk (a stored block serves every
   * reader as before), and this node is not in a cluster (a peer answers whole units).
   */
  public boolean servesPages(int id, int block) {
    return peers == null && isBlocked(id) && !nearAhead(id, block);
  }

  /**
   * Serves {@code n} bytes at {@code offset} of file in blocks {@code id} to a random reader, page
   * by page ({@link Units#PAGE_SIZE}): a stored page from the disk tier's map, checked (its header
   * and its own CRC32C: a read again checks what it returns, not a whole block); the pages missing
   * fetched in one ranged GET, from the first missing one to the READ's end or {@code want} bytes
   * on, whichever is further ({@code want}: the reader's usual run, so a reader of 1 MiB records
   * makes one GET per record, not eight), stopping before a page already stored. What is fetched is
   * offered to the disk as pages, each admitted on its own; no block is fetched. The policy sees
   * one access of the file per READ.
   */
  public boolean readPages(int id, long offset, int n, int want, ReadSink sink, long[] missed)
      throws IOException {
    stats.pageReads.increment();
    boolean hit = pages(id, offset, n, want, sink, FetchGate.Priority.DEMAND, missed);
    if (hit) {
      stats.pageReadHits.increment();
    }
    index.served(id, hit);
    return hit;
  }

  /**
   * Fetches the pages of bytes {@code offset .. offset+n} of file in blocks {@code id} that are not
   * stored, as a prefetch (after readers' misses), and offers them to the disk: a packed file's
   * samples ahead of its reader ({@code PackedPrefetcher}). Not an access.
   *
   * @return true if every page was stored already
   */
  public boolean prefetchPages(int id, long offset, int n) throws IOException {
    return pages(id, offset, n, n, null, FetchGate.Priority.PREFETCH, null);
  }

  /**
   * True if file in blocks {@code id} could be stored whole in the room the cache has free now (a
   * disk tier, not in a cluster): with the default capacity, the whole dataset, a file always fits.
   */
  public boolean hasRoomForWhole(int id) {
    if (disk == null || peers != null || !isBlocked(id)) {
      return false;
    }
    long whole = (long) units.blockCount(id) * StoredValue.charge(units.blockSize());
    return whole <= index.capacityBytes() - index.usedBytes();
  }

  /** The size of a random reader's page ({@link Units#PAGE_SIZE}). */
  public int pageSize() {
    return units.pageSize();
  }

  /** The samples and order of packed file {@code id} ({@code packed} hint), or null. */
  public org.hintfs.policy.PackedOrder packedOrder(int id) {
    return index.packedOrder(id);
  }

  /**
   * {@link #readPages} into {@code sink} (null: only fetched and stored) with {@code priority}.
   *
   * @return true if every page was served from the disk tier
   */
  private boolean pages(
      int id,
      long offset,
      int n,
      int want,
      ReadSink sink,
      FetchGate.Priority priority,
      long[] missed)
      throws IOException {
    long end = Math.min(catalog.size(id), offset + n);
    long pos = offset;
    boolean hit = true;
    while (pos < end) {
      int page = (int) (pos / units.pageSize());
      Unit u = units.unit(id, units.pageSlot(id, page), false);
      int in = (int) (pos - u.offset());
      int k = (int) Math.min(end - pos, u.length() - in);
      if (sink == null ? index.isStored(id, u.block()) : servedPage(u, in, k, sink)) {
        pos += k;
        continue;
      }
      hit = false;
      long runEnd = Math.min(catalog.size(id), Math.max(end, pos + want));
      int last = (int) ((runEnd - 1) / units.pageSize());
      int pages = 1;
      while (page + pages <= last && !index.isStored(id, units.pageSlot(id, page + pages))) {
        pages++;
      }
      int count = pages;
      byte[] b = fetcher.fetch(u.ramKey(), () -> fetchPages(u, count), priority);
      // A fetch of the same first page that another READ started may have asked for fewer pages:
      // what it brought is served, the loop goes on past it.
      int got = (int) Math.min(end - pos, b.length - in);
      if (sink != null) {
        sink.put(b, in, got);
      }
      if (missed != null) {
        missed[0] = Math.min(missed[0], pos);
        missed[1] = Math.max(missed[1], pos + got);
      }
      pos += got;
    }
    return hit;
  }

  /** A stored page's bytes {@code in .. in+k} into {@code sink}, checked; false if not stored. */
  private boolean servedPage(Unit u, int in, int k, ReadSink sink) {
    if (disk == null) {
      return false;
    }
    if (!disk.copyOut(new MappedBlock(u), in, k, sink::putNative)) {
      byte[] b = disk.get(u); // queued for the writer, or failing its check (then dropped)
      if (b == null) {
        return false;
      }
      sink.put(b, in, k);
    }
    stats.pageHits.increment();
    stats.bytesFromCache.add(k);
    return true;
  }

  /**
   * Pages {@code u} and the {@code count - 1} after it, in one ranged GET from the source; each
   * offered to the disk as a unit of its own.
   */
  private byte[] fetchPages(Unit u, int count) throws IOException {
    if (disk != null) {
      byte[] done = disk.get(u); // a fetch of it finished between the caller's look and its turn
      if (done != null) {
        return done;
      }
    }
    int id = u.id();
    long length = Math.min((long) count * units.pageSize(), catalog.size(id) - u.offset());
    Unit run =
        new Unit(
            catalog,
            id,
            u.block(),
            (int) length,
            false,
            u.offset(),
            units.pageSize(),
            units.blockSize());
    byte[] b = sourceTier.get(run);
    stats.pageGets.increment();
    stats.pagesFetched.add(count);
    if (disk != null) {
      for (int i = 0; i < count; i++) {
        Unit p = units.unit(id, u.block() + i, false);
        int from = (int) (p.offset() - u.offset());
        disk.offer(p, java.util.Arrays.copyOfRange(b, from, from + p.length()), null);
      }
    }
    return b;
  }

  /**
   * A block read ahead, until its reader takes it: where the RAM tier put it ({@code held}, one
   * reference on its native memory, given up by {@link MappedBlock#close}), or, when the RAM tier
   * did not keep it, as an array ({@code bytes}). Held rather than copied to the heap: a block
   * waits for its reader long enough to outlive young collections, and each one that found it on
   * the heap copied it, to the old generation at last.
   */
  public record Fetched(MappedBlock held, byte[] bytes) {
    /** Gives up the native memory, if held (more than once does nothing). */
    public void discard() {
      if (held != null) {
        held.close();
      }
    }
  }

  /**
   * A reader now waits for a block read ahead: if its fetch still waits for its turn, it goes as a
   * reader's miss (the fetch is not started again).
   */
  public void demand(int id, int block) {
    fetcher.promote(Unit.ramKey(id, block));
  }

  /**
   * True if block {@code block} of {@code id} is in the RAM tier or on disk: read-ahead leaves it
   * to its READ, which reads it as it did before read-ahead. Neither a 4 MiB copy held on the heap
   * ahead of the reader (it cost the collector more than the disk read it saved) nor MADV_WILLNEED
   * on its pages of the map (a madvise per block on the FUSE thread, under the read-ahead's lock;
   * 6% of a cached pass's CPU) made a cached pass faster: a restarted daemon with it read 1 GiB
   * from its disk cache at 444-516 MB/s, the build before read-ahead at 711-735 (same cache, same
   * run).
   */
  public boolean nearAhead(int id, int block) {
    return ram.contains(id, block) || (disk != null && index.isStored(id, block));
  }

  /** A reader's read of a block it was handed by the read-ahead: the access, hit or miss. */
  public void servedBlock(int id, boolean hit) {
    index.served(id, hit);
  }

  /**
   * True while the disk writer keeps up: its queue is under half its bound. Read-ahead asks for no
   * more while it is not, or what it fetched would be served without being stored, and fetched
   * again on the next pass.
   */
  public boolean diskKeepsUp() {
    return store == null || store.queuedBytes() <= store.queueLimit() / 2;
  }

  /** Blocks in file {@code id} ({@code 1} for a whole file). */
  public int blockCount(int id) {
    return units.blockCount(id);
  }

  /**
   * True if an open would find the file as near as it can be: in the RAM tier, or on disk when
   * there is no RAM tier. The prefetcher brings the rest closer.
   */
  public boolean isNear(int id) {
    if (isBlocked(id) && index.storing()) {
      return index.allBlocksStored(id); // a large file: all of it, not its first block
    }
    if (ram.contains(id, 0)) {
      return true;
    }
    if (ram.enabled()) {
      return false;
    }
    return index.isResident(id);
  }

  /**
   * A whole file's bytes from disk, checked as every disk read is (length, CRC32C, version), for
   * the warm-up at mount: counted nowhere, no access recorded, nothing kept in RAM, never fetched.
   *
   * @return null if the file is not on disk (or its entry does not check)
   */
  public byte[] peek(int id) {
    if (store == null || isBlocked(id)) {
      return null;
    }
    Unit u = keys.whole(id, units.length(id, 0));
    LmdbStore.Lookup l = store.get(u.key(), u.versionHash(), u.length());
    return l.hit() ? l.payload() : null;
  }

  /** True if the file can be served without the source: on disk or in RAM (whole files). */
  public boolean isCached(int id) {
    if (index.isResident(id)) {
      return true;
    }
    return ram.contains(id, 0);
  }

  /** Counters. */
  public CacheStats stats() {
    return stats;
  }

  /** Source requests in flight now. */
  public int fetchesInFlight() {
    return fetcher.inFlight();
  }

  /** The most source requests that ran at once so far. */
  public int fetchesPeak() {
    return fetcher.peak();
  }

  /** Source requests allowed at once ({@code --max-fetches}). */
  public int fetchLimit() {
    return fetcher.limit();
  }

  /** Source requests only readers' misses may take (prefetches and admin fetches never do). */
  public int fetchReserve() {
    return fetcher.reserve();
  }

  /** Readers' misses waiting for a source request now (all {@code --max-fetches} are busy). */
  public int demandFetchesWaiting() {
    return fetcher.demandWaiting();
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

  /**
   * Where the disk tier's capacity comes from: the option, or the disk's room when that is less.
   */
  public String capacityBasis() {
    return config.capacityBasis();
  }

  /** "ok", "none: reason", "down: reason" or "full since TIME: reason". */
  public String storeHealth() {
    if (store == null) {
      return "none" + (storeProblem == null ? "" : ": " + storeProblem);
    }
    return store.health();
  }

  /** The disk tier's store (tests), or null. */
  LmdbStore store() {
    return store;
  }

  /** Payload bytes waiting for the disk writer now (0 without a disk tier). */
  public long writeQueuedBytes() {
    return store == null ? 0 : store.queuedBytes();
  }

  /** The most payload bytes the disk writer's queue holds ({@code --write-queue}). */
  public long writeQueueLimit() {
    return store == null ? config.writeQueueBytes() : store.queueLimit();
  }

  /** Waits for queued writes to commit. */
  public void flush() throws InterruptedException {
    if (store != null) {
      store.flush();
    }
  }

  @Override
  public void close() throws InterruptedException {
    ram.clear();
    if (store != null) {
      store.close();
    }
    forgiveAll();
  }
}
