package org.hintfs.fs.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.KeyRange;
import org.lmdbjava.Txn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The on-disk cache: one LMDB environment, two databases, one writer thread.
 *
 * <p>Layout: {@code data} maps a {@link CacheKey} to a {@link StoredValue} (header + payload);
 * {@code meta} maps the same key to a small record (version hash, charged bytes, block, path) so a
 * restart can rebuild its accounting by scanning a few MB instead of every payload. Both are
 * written in the same transaction, so they never disagree after a crash.
 *
 * <p>Concurrency: each read takes a read-only transaction from a pool of reset ones and renews it
 * ({@code MDB_NOTLS}: a transaction is not tied to its thread, which matters because callbacks may
 * arrive on any thread). All writes go through a queue to a single writer thread that applies a
 * batch in one transaction, so readers never wait for a commit and commits are amortized over many
 * puts. Until its batch commits, a put is visible to readers through the pending table.
 *
 * <p>Bound: the puts waiting in the queue hold at most {@code queueLimit} payload bytes. When the
 * disk is slower than the source, a put that would pass it is refused at once ({@link #hasRoom}
 * says so first): the caller serves the bytes without storing them, never waits, and the heap holds
 * no more than the bound for the writer.
 *
 * <p>Durability: {@code MDB_NOMETASYNC} flushes data pages at every commit but not the meta page,
 * so a power loss can lose the last commit but never corrupt the tree; a killed process loses
 * nothing that was committed. Not {@code MDB_WRITEMAP}: with it a full disk would be a SIGBUS,
 * without it a full disk is an error from write(2), which marks the store down.
 *
 * <p>Memory: a value put with {@code uncache} (a block of a large file) leaves the page cache once
 * its commit is on disk ({@code POSIX_FADV_DONTNEED} on its pages of the file). Its reader is
 * served from memory (the RAM tier's copy, the kernel's pages of the FUSE file), so the LMDB file's
 * pages of it were a second copy of the same bytes in memory, written for nothing until a later
 * read from disk; and on a VM whose host takes back the guest's free memory (virtio-balloon free
 * page reporting), every such page was memory touched for the first time, which faults on the host:
 * 2.4-2.8 system s per GiB written here, against 0.5 s when the pages written are freed as they are
 * stored and reused for the next ones (BENCHMARKS.md, twelfth stop). Pages a reader of the map has
 * mapped meanwhile stay.
 *
 * <p>Full: a commit the disk refuses for space (ENOSPC, EDQUOT, an EIO at writeback with the disk
 * full, or LMDB's map still full after evicting) pauses admission, not the store: what is stored
 * stays served, the refused batch's puts are told to the accounting as not stored ({@link
 * Accounting#notStored}) and its deletes are kept and committed once there is room. Every {@link
 * #WATCH_MILLIS} the writer (never a reader) asks the filesystem for its free space ({@link
 * Accounting#space}); admission resumes when the accounting says there is room again.
 *
 * <p>Damage at open: a {@code data.mdb} that is truncated, that LMDB does not recognise, or whose
 * index cannot be walked is moved aside ({@code data.mdb.damaged-TIME}, never deleted) and a fresh
 * cache started ({@link #openChecked}); {@link #health} says so for the rest of the mount.
 *
 * <p>Failure: any other LMDB error logs one warning and marks the store {@link #healthy()
 * unhealthy}; from then on gets miss and writes are dropped, and reads go to the source.
 */
public final class LmdbStore implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LmdbStore.class);

  /** A batch ends at this many operations or this many payload bytes, whichever comes first. */
  private static final int BATCH_OPS = 512;

  private static final long BATCH_BYTES = 64L << 20;

  /** Called by the writer when the map is full: free at least this many bytes, then it retries. */
  public interface MapFullHandler {
    void onMapFull(long bytesToFree);
  }

  /** What the writer tells the cache's accounting besides a full map; called on its thread. */
  interface Accounting {
    /** A put the writer took but the disk refused for space: it is not stored. */
    void notStored(String path, int block, CacheKey key, int length);

    /**
     * The filesystem under the cache: {@code usable} bytes free to this process of {@code total},
     * the store's file {@code fileBytes} long.
     *
     * @return true if admission may go on (or resume, if it is paused)
     */
    boolean space(long usable, long total, long fileBytes);
  }

  /** How often the writer looks at the disk's free space: often enough to resume within seconds. */
  static final long WATCH_MILLIS = 2_000;

  /** Why admission is paused (the disk refused a commit for space), and since when. */
  private record Pause(String reason, long sinceMillis) {}

  /** One scanned meta record. */
  public record Meta(byte[] key, long versionHash, long charge, int block, String path) {}

  private sealed interface Op permits Put, Delete, Barrier {}

  /** Payloads from this size up wait for the writer outside the heap ({@link Payload}). */
  static final int OFF_HEAP_MIN = 1 << 20;

  /**
   * A payload for {@link #put}. From {@link #OFF_HEAP_MIN} up (a large file's blocks) it waits
   * outside the heap, as the RAM tier's copy (a reference on it) or else as a copy of its own. Its
   * CRC32C is taken by the writer, piece by piece as it copies it into LMDB's pages (taken over the
   * whole block beforehand, on the fetching thread, it was 7-10% of the daemon's CPU over a large
   * file's first read), except for one that shares the RAM tier's copy of a unit fetched as an
   * array: that one's is taken over the array when it is made, outside the index's lock, so that a
   * RAM copy that is not those bytes (another version's, put meanwhile) is stored as damaged and
   * never served. A unit waits for the disk long enough to outlive young collections, and each one
   * that found a large one on the heap copied it (to the old generation, which grew by each: 8
   * readers of 1 GiB of shards took 1.15-1.25 s of collector pauses and left a 900-1,000 MB heap).
   * A smaller one stays on the heap and is checksummed by the writer, as before; so does a large
   * one when malloc fails.
   *
   * <p>Whoever makes one releases it unless a put took it ({@link #releaseUnlessTaken}); a put that
   * took it is released once, by whoever takes it off the queue: the writer, or {@link #down}.
   */
  static final class Payload {
    final int length;
    private final NativeBytes off;
    private final byte[] heap;

    /** The CRC32C of the bytes it stands for; null: the writer takes it as it copies them. */
    private final Integer crc;

    private final java.util.concurrent.atomic.AtomicBoolean released =
        new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean taken;

    private final java.util.concurrent.atomic.AtomicLong sharedCount;

    private Payload(byte[] b, java.util.concurrent.atomic.AtomicLong held) {
      this.length = b.length;
      this.off = held == null ? null : NativeBytes.copyOf(b, held);
      this.heap = off == null ? b : null;
      this.crc = null; // its own copy of b, or b itself
      this.sharedCount = null;
    }

    /**
     * A payload that shares {@code shared} (a reference taken on it); {@code crc} the CRC32C of the
     * bytes it must hold, or null for whatever it holds.
     */
    private Payload(NativeBytes shared, Integer crc, java.util.concurrent.atomic.AtomicLong count) {
      this.length = shared.length();
      this.off = shared;
      this.heap = null;
      this.crc = crc;
      this.sharedCount = count;
      count.addAndGet(length);
    }

    /** A heap copy of the payload (the array itself on the heap), or null if freed meanwhile. */
    byte[] bytes() {
      return heap != null ? heap : off.copy();
    }

    /** True while its bytes are outside the heap (tests). */
    boolean offHeap() {
      return off != null;
    }

    /**
     * Writes the stored value (header, payload) into {@code v}, LMDB's reserved room for it; the
     * writer takes the CRC32C of a native payload as it copies it (no caller's thread pays for it).
     */
    void writeTo(ByteBuffer v, CacheKey key, long versionHash) {
      if (heap != null) {
        StoredValue.write(v, key, versionHash, heap);
      } else {
        StoredValue.write(v, key, versionHash, off, crc);
      }
    }

    /** Frees the native copy, if any, unless a {@link #put} took it. */
    void releaseUnlessTaken() {
      if (!taken) {
        release();
      }
    }

    private void release() {
      if (off != null && released.compareAndSet(false, true)) {
        if (sharedCount != null) {
          sharedCount.addAndGet(-length);
        }
        off.release();
      }
    }
  }

  /** {@code b} as a payload for {@link #put} (see {@link Payload}: made outside any lock). */
  Payload payload(byte[] b) {
    return payload(b, null);
  }

  /**
   * {@code b} as a payload for {@link #put}; from {@link #OFF_HEAP_MIN} up, sharing {@code shared}
   * (a native copy of {@code b}, or null) if it is still held (the RAM tier's: one reference more,
   * released as the payload is), else copied outside the heap. A block both waiting for the writer
   * and in the RAM tier is then one copy in memory, not two, and is not copied again to be queued.
   */
  Payload payload(byte[] b, NativeBytes shared) {
    if (b.length < OFF_HEAP_MIN) {
      return new Payload(b, null);
    }
    if (shared != null && shared.acquire()) {
      return new Payload(shared, StoredValue.crc(b), queuedShared);
    }
    return new Payload(b, queuedNative);
  }

  /**
   * A unit in native memory (fetched straight into it, or owed) as a payload for {@link #put},
   * sharing it whatever its size: one reference more, released as the payload is; null if it was
   * freed meanwhile. The caller holds a reference while this runs.
   */
  Payload payload(NativeBytes shared) {
    return shared.acquire() ? new Payload(shared, null, queuedShared) : null;
  }

  /** {@code b} as a payload left on the heap (no copy, no checksum until the writer's). */
  static Payload onHeap(byte[] b) {
    return new Payload(b, null);
  }

  private record Put(
      CacheKey key, long versionHash, Payload payload, int block, String path, boolean uncache)
      implements Op {
    void release() {
      payload.release();
    }
  }

  private record Delete(CacheKey key) implements Op {}

  private record Barrier(CountDownLatch done) implements Op {}

  private final Env<ByteBuffer> env;

  /** LMDB's page size, and a descriptor of its data file (-1: none, nothing leaves the cache). */
  private final int pageSize;

  private final int dataFd;

  /**
   * The writer's: the file ranges (offset, length) of the uncached values of the transaction being
   * built, dropped from the page cache once it commits.
   */
  private long[] written = new long[2 * 16];

  private int writtenCount;

  /** Bytes of uncached values dropped from the page cache (tests). */
  private final java.util.concurrent.atomic.AtomicLong uncachedBytes =
      new java.util.concurrent.atomic.AtomicLong();

  private final Dbi<ByteBuffer> data;
  private final Dbi<ByteBuffer> meta;
  private final BlockingQueue<Op> queue = new LinkedBlockingQueue<>();
  private final Map<CacheKey, Op> pending = new ConcurrentHashMap<>();

  /**
   * Read transactions between uses: reset (no snapshot held, so no pages pinned; the reader slot
   * kept) and renewed by the next reader, on whatever thread ({@code MDB_NOTLS}). A cached open
   * costs a renew and a reset, not a begin and an abort, and no direct buffer for its key. Pooled
   * rather than one per thread: FUSE threads come and go ({@code JavaThreadLoop.Pool}), and a dead
   * thread's transaction would hold its reader slot until the environment closed. At most {@link
   * #POOLED_READERS} wait here; the rest are closed.
   */
  private final java.util.concurrent.ConcurrentLinkedQueue<Reader> readers =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private final java.util.concurrent.atomic.AtomicInteger pooled =
      new java.util.concurrent.atomic.AtomicInteger();

  private static final int POOLED_READERS = 256;

  /** The writer thread's key buffer and meta record buffer, reused for every put and delete. */
  private final ByteBuffer writerKey = ByteBuffer.allocateDirect(CacheKey.LENGTH);

  private ByteBuffer writerMeta = ByteBuffer.allocateDirect(4096);

  /** A read transaction and a direct buffer for the key looked up in it. */
  private static final class Reader {
    final Txn<ByteBuffer> txn;
    final ByteBuffer key = ByteBuffer.allocateDirect(CacheKey.LENGTH);

    Reader(Txn<ByteBuffer> txn) {
      this.txn = txn;
    }
  }

  private final Thread writer;
  private final MapFullHandler mapFull;
  private volatile Accounting accounting;
  private volatile String downReason;
  private volatile Pause paused;

  /** The writer's: deletes the disk refused for space, committed once admission resumes. */
  private final List<Op> deferred = new ArrayList<>();

  private long nextWatch;
  private final java.util.concurrent.atomic.LongAdder pauses =
      new java.util.concurrent.atomic.LongAdder();
  private volatile boolean closing;

  /**
   * 128 MiB: a quarter second of writes on an SSD, ~1,200 ImageNet JPEGs waiting for the disk; the
   * least {@code --write-queue auto} gives ({@code MountConfig.autoWriteQueueBytes}).
   */
  public static final long DEFAULT_QUEUE_LIMIT = 128L << 20;

  private final long queueLimit;
  private final java.util.concurrent.atomic.AtomicLong queuedBytes =
      new java.util.concurrent.atomic.AtomicLong();

  /** Native bytes the queued puts' payloads hold, allocated and not yet freed. */
  private final java.util.concurrent.atomic.AtomicLong queuedNative =
      new java.util.concurrent.atomic.AtomicLong();

  /** Bytes of queued payloads that share another's native copy (the RAM tier's). */
  private final java.util.concurrent.atomic.AtomicLong queuedShared =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * Opens (or creates) the environment in {@code dir}.
   *
   * @param mapSize the most the file may grow to; keep it well above the capacity
   * @throws IOException with a one-line reason if the directory or environment is unusable
   */
  private final Path dir;

  public LmdbStore(Path dir, long mapSize, MapFullHandler mapFull) throws IOException {
    this(dir, mapSize, mapFull, DEFAULT_QUEUE_LIMIT);
  }

  /**
   * Opens (or creates) the environment in {@code dir}, its writer's queue bounded to {@code
   * queueLimit} payload bytes.
   */
  public LmdbStore(Path dir, long mapSize, MapFullHandler mapFull, long queueLimit)
      throws IOException {
    this.queueLimit = queueLimit;
    Files.createDirectories(dir);
    this.dir = dir;
    this.mapFull = mapFull;
    Opened o;
    try {
      o = openChecked(dir, mapSize);
      if (o.damage != null) {
        Path aside = moveAside(dir);
        movedAside =
            "the cache in "
                + dir
                + " was damaged ("
                + o.damage
                + "): moved aside to "
                + aside
                + ", a fresh cache started";
        log.warn("{}", movedAside);
        o = openChecked(dir, mapSize);
        if (o.damage != null) {
          throw new IOException("a fresh LMDB cache in " + dir + " is damaged too: " + o.damage);
        }
      }
    } catch (RuntimeException e) {
      throw new IOException("cannot open the LMDB cache in " + dir + ": " + e.getMessage(), e);
    }
    env = o.env;
    data = o.data;
    meta = o.meta;
    pageSize = o.pageSize;
    Native.keepLargeAllocations();
    dataFd = openForAdvice(dir.resolve("data.mdb"));
    writer = new Thread(this::writeLoop, "lmdb-writer");
    writer.setDaemon(true);
    writer.start();
  }

  /** An environment opened and checked, or why its file is damaged (then nothing is open). */
  private record Opened(
      Env<ByteBuffer> env,
      Dbi<ByteBuffer> data,
      Dbi<ByteBuffer> meta,
      int pageSize,
      String damage) {}

  /** Set at open when a damaged cache was moved aside: one line for the log and status. */
  private String movedAside;

  /**
   * Opens the environment in {@code dir} and checks it before anything reads its tree: a file
   * shorter than its own meta page says (truncated: reading the missing pages through the map would
   * be a SIGBUS), a file LMDB does not recognise (its meta pages scribbled), and a walk of the
   * {@code meta} database (its branch and leaf pages, a few MB a million entries). Damage to a
   * stored value is not looked for here: every read checks its CRC32C.
   */
  private static Opened openChecked(Path dir, long mapSize) {
    Env<ByteBuffer> e;
    try {
      e =
          Env.create()
              .setMapSize(mapSize)
              .setMaxDbs(2)
              .setMaxReaders(1024)
              .open(
                  dir.toFile(),
                  PrivateDirectory
                      .FILE_MODE, // data.mdb holds the source's bytes: its owner's alone
                  EnvFlags.MDB_NOTLS,
                  EnvFlags.MDB_NOMETASYNC);
    } catch (Env.FileInvalidException | Env.VersionMismatchException x) {
      return new Opened(null, null, null, 0, "LMDB does not recognise it: " + lmdbReason(x));
    }
    try {
      int page = e.stat().pageSize;
      long needed = (e.info().lastPageNumber + 1) * (long) page;
      long size = Files.size(dir.resolve("data.mdb"));
      if (size < needed) {
        e.close();
        return new Opened(
            null, null, null, 0, "truncated: " + size + " bytes of the " + needed + " it holds");
      }
      Dbi<ByteBuffer> d = e.openDbi("data", DbiFlags.MDB_CREATE);
      Dbi<ByteBuffer> m = e.openDbi("meta", DbiFlags.MDB_CREATE);
      try (Txn<ByteBuffer> txn = e.txnRead();
          CursorIterable<ByteBuffer> it = m.iterate(txn, KeyRange.all())) {
        for (CursorIterable.KeyVal<ByteBuffer> kv : it) {
          if (kv.key().remaining() != CacheKey.LENGTH || kv.val().remaining() < 20) {
            e.close();
            return new Opened(null, null, null, 0, "its index holds a record of another shape");
          }
        }
        d.stat(txn);
      }
      return new Opened(e, d, m, page, null);
    } catch (org.lmdbjava.LmdbNativeException x) {
      e.close();
      if (x instanceof org.lmdbjava.LmdbNativeException.ConstantDerivedException) {
        throw x; // an errno (EIO, EACCES...): not damage, the disk or the directory
      }
      return new Opened(null, null, null, 0, lmdbReason(x));
    } catch (IOException x) {
      e.close();
      throw new java.io.UncheckedIOException(x);
    } catch (RuntimeException x) {
      e.close();
      throw x;
    }
  }

  private static String lmdbReason(RuntimeException x) {
    String m = x.getMessage() == null ? x.toString() : x.getMessage();
    return m.replace("Platform constant error code: ", "");
  }

  /**
   * Moves a damaged cache's {@code data.mdb} aside (never deleted: its owner may want it), to
   * {@code data.mdb.damaged-TIME} beside the new one, and its lock file with it.
   */
  private static Path moveAside(Path dir) {
    String t =
        java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(java.time.ZoneOffset.UTC)
            .format(java.time.Instant.now());
    Path aside = dir.resolve("data.mdb.damaged-" + t);
    for (int n = 2; Files.exists(aside); n++) {
      aside = dir.resolve("data.mdb.damaged-" + t + "-" + n);
    }
    try {
      Files.move(dir.resolve("data.mdb"), aside);
      Files.deleteIfExists(dir.resolve("lock.mdb")); // LMDB's reader table: remade at open
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return aside;
  }

  /** A read-only descriptor of {@code file} for posix_fadvise, or -1 (nothing is dropped then). */
  private static int openForAdvice(Path file) {
    try {
      return Native.LIBC.open(file.toString(), Native.O_RDONLY | Native.O_CLOEXEC);
    } catch (RuntimeException | LinkageError e) {
      return -1;
    }
  }

  /** False once the store has failed; it then holds nothing and accepts nothing. */
  public boolean healthy() {
    return downReason == null;
  }

  /** Why the store is down, or null. */
  public String downReason() {
    return downReason;
  }

  /** True while the store takes puts: up, and admission not paused for a full disk. */
  public boolean admitting() {
    return downReason == null && paused == null;
  }

  /** When admission was paused for space (epoch milliseconds), or 0 while it is not. */
  public long fullSince() {
    Pause p = paused;
    return p == null ? 0 : p.sinceMillis;
  }

  /** Times admission was paused for space since the store opened. */
  public long pauses() {
    return pauses.sum();
  }

  /**
   * "ok", "down: reason", or "full since TIME: reason" (admission paused, what is stored served).
   */
  public String health() {
    if (downReason != null) {
      return "down: " + downReason;
    }
    Pause p = paused;
    if (p == null && movedAside != null) {
      return "ok; at mount " + movedAside;
    }
    if (p != null) {
      return "full since "
          + java.time.Instant.ofEpochMilli(p.sinceMillis)
              .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
          + ": "
          + p.reason
          + "; new files are not stored until there is room, what is stored is served";
    }
    return "ok";
  }

  /** Sets who is told of puts not stored and of the disk's space (the index, once recovered). */
  void account(Accounting a) {
    this.accounting = a;
  }

  /** Result of a lookup. */
  public record Lookup(StoredValue.Check check, byte[] payload) {
    static final Lookup MISS = new Lookup(null, null);

    public boolean hit() {
      return check == StoredValue.Check.OK;
    }
  }

  /** Looks an entry up and checks it against the expected version and length. */
  Lookup get(CacheKey key, long versionHash, int expectedLength) {
    if (!healthy()) {
      return Lookup.MISS;
    }
    Op p = pending.isEmpty() ? null : pending.get(key);
    if (p instanceof Put put) {
      if (put.versionHash != versionHash || put.payload.length != expectedLength) {
        return new Lookup(StoredValue.Check.STALE, null);
      }
      byte[] b = put.payload.bytes();
      if (b != null) {
        return new Lookup(StoredValue.Check.OK, b);
      }
      // written and freed meanwhile: it is in the map now
    }
    if (p instanceof Delete) {
      return Lookup.MISS;
    }
    Reader r = null;
    try {
      r = reader();
      ByteBuffer v = data.get(r.txn, key.into(r.key));
      if (v == null) {
        return Lookup.MISS;
      }
      byte[][] out = new byte[1][];
      StoredValue.Check c = StoredValue.read(v, key, versionHash, expectedLength, out);
      return new Lookup(c, out[0]);
    } catch (RuntimeException e) {
      r = discard(r);
      down("read failed: " + e);
      return Lookup.MISS;
    } finally {
      release(r);
    }
  }

  /**
   * Starts reading an entry's pages into memory without waiting (MADV_WILLNEED on its range of the
   * map), so that the read that follows an open finds them on their way.
   */
  void willNeed(CacheKey key) {
    if (!healthy() || queued(key)) {
      return;
    }
    Reader r = null;
    try {
      r = reader();
      ByteBuffer v = data.get(r.txn, key.into(r.key));
      if (v == null) {
        return;
      }
      long addr = NativeSink.address(v) + v.position();
      long start = addr & -Native.PAGE;
      Native.LIBC.madvise(start, addr + v.remaining() - start, Native.MADV_WILLNEED);
    } catch (RuntimeException e) {
      r = discard(r); // advice only: the read that follows reports what is wrong
    } finally {
      release(r);
    }
  }

  /**
   * Serves {@code n} bytes of an entry from {@code offset} straight out of the map (see {@link
   * StoredValue#checkAndCopy}): null if the entry is absent, waits in the write queue (its bytes
   * are on the heap: {@link #get} serves them), the store is down, or anything failed: the caller
   * then reads the usual way, through {@link #get}, which reports a failing store.
   */
  StoredValue.Check copyOut(
      CacheKey key, long versionHash, int expectedLength, long offset, int n, NativeSink sink) {
    return copyOut(key, versionHash, expectedLength, offset, n, sink, null);
  }

  /**
   * {@link #copyOut(CacheKey, long, int, long, int, NativeSink)}, the payload's CRC32C computed
   * only if {@code seen} (may be null) has not checked this stored value whole before.
   */
  StoredValue.Check copyOut(
      CacheKey key,
      long versionHash,
      int expectedLength,
      long offset,
      int n,
      NativeSink sink,
      MappedBlock seen) {
    if (!healthy() || queued(key)) {
      return null;
    }
    Reader r = null;
    try {
      r = reader();
      ByteBuffer v = data.get(r.txn, key.into(r.key));
      return v == null
          ? null
          : StoredValue.checkAndCopy(v, key, versionHash, expectedLength, offset, n, sink, seen);
    } catch (RuntimeException e) {
      r = discard(r);
      log.debug("copy out of the map failed, reading through the heap: {}", e.toString());
      return null;
    } finally {
      release(r);
    }
  }

  /** True if a put or delete of the key waits for the writer. */
  private boolean queued(CacheKey key) {
    return !pending.isEmpty() && pending.containsKey(key);
  }

  /** A pooled read transaction, renewed (a fresh snapshot), or a new one. */
  private Reader reader() {
    Reader r = readers.poll();
    if (r == null) {
      return new Reader(env.txnRead());
    }
    pooled.decrementAndGet();
    try {
      r.txn.renew();
    } catch (RuntimeException e) {
      discard(r);
      throw e;
    }
    return r;
  }

  /** Resets a reader and pools it (closes it when the pool is full or the store is closing). */
  private void release(Reader r) {
    if (r == null) {
      return;
    }
    if (closing || pooled.incrementAndGet() > POOLED_READERS) {
      pooled.decrementAndGet();
      discard(r);
      return;
    }
    try {
      r.txn.reset();
    } catch (RuntimeException e) {
      pooled.decrementAndGet();
      discard(r);
      return;
    }
    readers.offer(r);
  }

  /** Closes a reader whose transaction failed or is not pooled; null, for the caller to keep. */
  private static Reader discard(Reader r) {
    if (r != null) {
      try {
        r.txn.close();
      } catch (RuntimeException ignored) {
        // closing a failed transaction: nothing more to do
      }
    }
    return null;
  }

  /**
   * True if a put of {@code bytes} fits in the writer's queue now (an empty queue takes any one).
   * The queue only shrinks between this and a {@link #put} by the same single caller.
   */
  boolean hasRoom(int bytes) {
    long q = queuedBytes.get();
    return q == 0 || q + bytes <= queueLimit;
  }

  /**
   * Runs {@code r} on the writer's thread after each commit that leaves its queue at or under half
   * its bound (the writer has room again). {@code r} must not wait: the writer waits for it.
   */
  void onRoom(Runnable r) {
    this.onRoom = r;
  }

  private volatile Runnable onRoom;

  /**
   * Signalled by the writer when its queue is at or under half its bound, and when it goes down.
   */
  private final Object room = new Object();

  /**
   * Waits until the writer's queue is at or under half its bound (the writer keeps up), the store
   * is down, or {@code millis} pass.
   *
   * @return false if the time passed first
   */
  boolean awaitRoom(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    synchronized (room) {
      while (queuedBytes.get() > queueLimit / 2 && healthy()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        room.wait(left / 1_000_000L + 1);
      }
    }
    return true;
  }

  /** Wakes {@link #awaitRoom}'s waiters if the queue is at or under half its bound. */
  private void signalRoom() {
    if (queuedBytes.get() <= queueLimit / 2 || !healthy()) {
      synchronized (room) {
        room.notifyAll();
      }
    }
  }

  /** Payload bytes waiting for the writer now. */
  long queuedBytes() {
    return queuedBytes.get();
  }

  /** The most payload bytes the writer's queue holds. */
  long queueLimit() {
    return queueLimit;
  }

  /**
   * Stores a payload (asynchronously; visible to {@link #get} at once).
   *
   * @return false if it was not queued: the store is down, or the writer's queue is full
   */
  boolean put(CacheKey key, long versionHash, byte[] payload, int block, String path) {
    Payload p = payload(payload);
    boolean queued = put(key, versionHash, p, block, path);
    p.releaseUnlessTaken();
    return queued;
  }

  /** {@link #put(CacheKey, long, byte[], int, String)} of a payload made by {@link #payload}. */
  boolean put(CacheKey key, long versionHash, Payload payload, int block, String path) {
    return put(key, versionHash, payload, block, path, false);
  }

  /**
   * {@link #put(CacheKey, long, Payload, int, String)}; {@code uncache}: its pages of the file
   * leave the page cache once committed (a block of a large file: the class comment, "Memory").
   */
  boolean put(
      CacheKey key, long versionHash, Payload payload, int block, String path, boolean uncache) {
    if (!admitting() || !hasRoom(payload.length)) {
      return false;
    }
    payload.taken = true;
    Put op = new Put(key, versionHash, payload, block, path, uncache);
    queuedBytes.addAndGet(payload.length);
    pending.put(key, op);
    queue.add(op);
    return true;
  }

  /** Deletes an entry (asynchronously; invisible to {@link #get} at once). */
  void delete(CacheKey key) {
    if (!healthy()) {
      return;
    }
    Delete op = new Delete(key);
    pending.put(key, op);
    queue.add(op);
  }

  /** Waits until everything queued before this call is committed (or the store is down). */
  public void flush() throws InterruptedException {
    CountDownLatch l = new CountDownLatch(1);
    queue.add(new Barrier(l));
    while (!l.await(100, TimeUnit.MILLISECONDS)) {
      if (!healthy() || !writer.isAlive()) {
        return;
      }
    }
  }

  /** Visits every meta record (at startup, before serving). */
  void scanMeta(Consumer<Meta> sink) {
    if (!healthy()) {
      return;
    }
    try (Txn<ByteBuffer> txn = env.txnRead();
        CursorIterable<ByteBuffer> it = meta.iterate(txn, KeyRange.all())) {
      for (CursorIterable.KeyVal<ByteBuffer> kv : it) {
        byte[] k = new byte[kv.key().remaining()];
        kv.key().get(k);
        ByteBuffer v = kv.val();
        long vh = v.getLong();
        long charge = v.getLong();
        int block = v.getInt();
        byte[] path = new byte[v.remaining()];
        v.get(path);
        sink.accept(new Meta(k, vh, charge, block, new String(path, StandardCharsets.UTF_8)));
      }
    } catch (RuntimeException e) {
      down("scanning the cache index failed: " + e);
    }
  }

  /**
   * Tests: holds LMDB's write lock, as a stalled disk holds the writer in its commit, until the
   * returned transaction is aborted (closed).
   */
  Txn<ByteBuffer> holdWriteLock() {
    return env.txnWrite();
  }

  /** Marks the store down with one warning; later failures are not logged again. */
  void down(String reason) {
    if (downReason == null) {
      synchronized (this) {
        if (downReason == null) {
          downReason = reason;
          log.warn("disk cache disabled, serving from the source: {}", reason);
          pending.clear();
          List<Op> dropped = new ArrayList<>();
          queue.drainTo(dropped);
          dropped.forEach(LmdbStore::released);
          queuedBytes.set(0);
          signalRoom();
        }
      }
    }
  }

  /** Frees a put's payload that no writer will take (the store went down). */
  private static void released(Op o) {
    if (o instanceof Put p) {
      p.release();
    }
  }

  /** Native bytes the writer's queue holds now (stats, tests). */
  long queuedNativeBytes() {
    return queuedNative.get();
  }

  /** Bytes of queued payloads that wait as the RAM tier's copy, not one of their own (tests). */
  long queuedSharedBytes() {
    return queuedShared.get();
  }

  private static long bytes(List<Op> batch) {
    long n = 0;
    for (Op o : batch) {
      n += o instanceof Put p ? p.payload.length : 0;
    }
    return n;
  }

  /** A failed write in words, and whether it was for space (admission pauses) or not (down). */
  private record Failure(String reason, boolean space) {}

  private static final int ENOSPC = 28;
  private static final int EDQUOT = 122;

  /**
   * A failed write in words: LMDB's errno without its exception's class, and whether the disk is
   * full (ext4 reports a full disk as ENOSPC, or as EIO when delayed allocation finds no room at
   * writeback: an EIO with less free than the batch is taken as full).
   */
  private Failure writeFailure(RuntimeException e, long batchBytes) {
    String m = e.getMessage() == null ? e.toString() : e.getMessage();
    m = m.replace("Platform constant error code: ", "");
    int rc = e instanceof org.lmdbjava.LmdbNativeException n ? n.getResultCode() : 0;
    try {
      long free = Files.getFileStore(dir).getUsableSpace();
      if (rc == ENOSPC || rc == EDQUOT || free <= Math.max(batchBytes, 1L << 20)) {
        return new Failure(
            "the disk under " + dir + " is full (" + free + " bytes free; write failed: " + m + ")",
            true);
      }
    } catch (IOException | RuntimeException ignored) {
      // the reason as LMDB gave it
    }
    if (rc == ENOSPC || rc == EDQUOT) {
      return new Failure("the disk under " + dir + " is full (write failed: " + m + ")", true);
    }
    return new Failure("write failed: " + m, false);
  }

  /**
   * The disk refused {@code batch} for space: admission pauses; the batch's puts (and those queued
   * behind it, which would fail the same way) are told to the accounting as not stored, and its
   * deletes are kept for when there is room. The writer's thread.
   */
  private void refusedForSpace(String reason, List<Op> batch) {
    if (paused == null) {
      paused = new Pause(reason, System.currentTimeMillis());
      pauses.increment();
      log.warn(
          "disk cache full, not storing new files until there is room (what is stored is"
              + " served): {}",
          reason);
    }
    nextWatch = System.currentTimeMillis() + WATCH_MILLIS;
    List<Op> behind = new ArrayList<>();
    queue.drainTo(behind);
    List<Op> again = new ArrayList<>();
    for (List<Op> ops : List.of(batch, behind)) {
      for (Op o : ops) {
        if (o instanceof Put p && pending.get(p.key) == p) {
          Accounting a = accounting;
          if (a != null) {
            a.notStored(p.path, p.block, p.key, p.payload.length);
          }
        } else if (o instanceof Delete d && pending.get(d.key) == d) {
          Delete kept = new Delete(d.key);
          if (pending.replace(d.key, d, kept)) {
            deferred.add(kept);
          }
        } else if (ops == behind && !(o instanceof Put)) {
          again.add(o); // a barrier: its waiter is let go by the next batch
        }
      }
    }
    for (Op o : behind) {
      if (o instanceof Put p) {
        pending.remove(p.key, p);
        queuedBytes.addAndGet(-p.payload.length);
        p.release();
      }
    }
    queue.addAll(again);
  }

  /**
   * Every {@link #WATCH_MILLIS}: tells the accounting the disk's free space, and resumes admission
   * (with the kept deletes first) once it says there is room. The writer's thread.
   */
  private void watchSpace() {
    long now = System.currentTimeMillis();
    if (now < nextWatch) {
      return;
    }
    nextWatch = now + WATCH_MILLIS;
    Accounting a = accounting;
    if (a == null || !healthy()) {
      return;
    }
    boolean room;
    try {
      java.nio.file.FileStore fs = Files.getFileStore(dir);
      room = a.space(fs.getUsableSpace(), fs.getTotalSpace(), fileBytes());
    } catch (IOException | RuntimeException e) {
      return; // the next commit tells what is wrong
    }
    Pause p = paused;
    if (room && p != null) {
      paused = null;
      log.info(
          "disk cache storing again: the disk under {} has room (full since {})",
          dir,
          java.time.Instant.ofEpochMilli(p.sinceMillis));
      queue.addAll(deferred);
      deferred.clear();
    }
  }

  private void writeLoop() {
    List<Op> batch = new ArrayList<>();
    while (!closing || !queue.isEmpty()) {
      try {
        Op first = queue.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          watchSpace();
          continue;
        }
        batch.add(first);
        long bytes = first instanceof Put p ? p.payload.length : 0;
        while (batch.size() < BATCH_OPS && bytes < BATCH_BYTES) {
          Op o = queue.poll();
          if (o == null) {
            break;
          }
          batch.add(o);
          bytes += o instanceof Put p ? p.payload.length : 0;
        }
        commit(batch, bytes);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        Failure f = writeFailure(e, bytes(batch));
        if (f.space()) {
          refusedForSpace(f.reason(), batch);
        } else {
          down(f.reason());
        }
      } catch (SpaceException e) {
        refusedForSpace(e.getMessage(), batch);
      } finally {
        for (Op o : batch) {
          if (o instanceof Barrier b) {
            b.done.countDown();
          } else if (o instanceof Put p) {
            pending.remove(p.key, o);
            queuedBytes.addAndGet(-p.payload.length);
            p.release();
          } else if (o instanceof Delete d) {
            pending.remove(d.key, o);
          }
        }
        batch.clear();
      }
      signalRoom();
      watchSpace();
      roomAgain();
    }
  }

  /** The map stayed full after evicting: admission pauses as for a full disk. */
  private static final class SpaceException extends Exception {
    SpaceException(String reason) {
      super(reason, null, false, false);
    }
  }

  /** Tells {@link #onRoom}'s listener the writer has room, if it has; never fails the writer. */
  private void roomAgain() {
    Runnable r = onRoom;
    if (r == null || closing || !healthy() || queuedBytes.get() > queueLimit / 2) {
      return;
    }
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("offering units again to the disk cache failed: {}", e.toString());
    }
  }

  private void commit(List<Op> batch, long bytes) throws SpaceException {
    if (!healthy()) {
      return;
    }
    for (int attempt = 0; ; attempt++) {
      writtenCount = 0;
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        for (Op o : batch) {
          if (o instanceof Put p) {
            if (pending.get(p.key) != p) {
              continue; // superseded by a later put or delete of the same key
            }
            ByteBuffer k = p.key.into(writerKey);
            ByteBuffer v = data.reserve(txn, k, StoredValue.HEADER + p.payload.length);
            p.payload.writeTo(v, p.key, p.versionHash);
            if (p.uncache && dataFd >= 0) {
              noteWritten(v);
            }
            byte[] path = p.path.getBytes(StandardCharsets.UTF_8);
            if (writerMeta.capacity() < 20 + path.length) {
              writerMeta = ByteBuffer.allocateDirect(20 + path.length);
            }
            ByteBuffer m = writerMeta.clear();
            m.putLong(p.versionHash)
                .putLong(StoredValue.charge(p.payload.length))
                .putInt(p.block)
                .put(path)
                .flip();
            meta.put(txn, p.key.into(writerKey), m);
          } else if (o instanceof Delete d) {
            if (pending.get(d.key) != d) {
              continue; // superseded by a later put (or kept for later, after a full disk)
            }
            data.delete(txn, d.key.into(writerKey));
            meta.delete(txn, d.key.into(writerKey));
          }
        }
        txn.commit();
        dropWritten();
        return;
      } catch (Env.MapFullException e) {
        if (attempt >= 3) {
          throw new SpaceException("the cache map is full even after evicting: " + e.getMessage());
        }
        mapFull.onMapFull(Math.max(bytes, 64L << 20));
        commitQueuedDeletes();
      }
    }
  }

  /** An overflow page's flag in LMDB's page header ({@code P_OVERFLOW}, mdb.c). */
  private static final int P_OVERFLOW = 0x04;

  /** LMDB's page header before a large value's bytes: pgno (8), pad (2), flags (2), pages (4). */
  private static final int PAGE_HEADER = 16;

  /**
   * Notes where value {@code v}, just reserved in the writer's transaction, will lie in the file. A
   * value too large for a leaf page gets a run of overflow pages of its own, and its reserved bytes
   * follow that run's header, which holds the run's first page number and its length in pages (LMDB
   * 0.9's {@code MDB_page}). Not a documented interface, so it is checked: the flags must say
   * overflow and the length must be the value's; else nothing is noted (the pages stay cached, as
   * before). A wrong range could only drop clean pages of other values, never lose a byte: the
   * kernel keeps dirty and mapped pages.
   */
  private void noteWritten(ByteBuffer v) {
    long a = NativeSink.address(v);
    com.kenai.jffi.MemoryIO io = com.kenai.jffi.MemoryIO.getInstance();
    long pgno = io.getLong(a - PAGE_HEADER);
    int flags = io.getShort(a - 6) & 0xffff;
    long pages = io.getInt(a - 4) & 0xffffffffL;
    if ((flags & P_OVERFLOW) == 0
        || pages != ((long) PAGE_HEADER + v.capacity() + pageSize - 1) / pageSize
        || pgno <= 0) {
      return;
    }
    if (2 * writtenCount + 2 > written.length) {
      written = java.util.Arrays.copyOf(written, 2 * written.length);
    }
    written[2 * writtenCount] = pgno * pageSize;
    written[2 * writtenCount + 1] = pages * pageSize;
    writtenCount++;
  }

  /**
   * Drops the committed transaction's uncached values from the page cache: written and synced
   * ({@code MDB_NOMETASYNC} syncs data pages at every commit), their pages are clean, and the
   * kernel frees them now, for the next writes to reuse.
   */
  private void dropWritten() {
    for (int i = 0; i < writtenCount; i++) {
      long len = written[2 * i + 1];
      if (Native.LIBC.posix_fadvise(dataFd, written[2 * i], len, Native.POSIX_FADV_DONTNEED) == 0) {
        uncachedBytes.addAndGet(len);
      }
    }
    writtenCount = 0;
  }

  /** Bytes of uncached values dropped from the page cache once committed (tests). */
  long uncachedBytes() {
    return uncachedBytes.get();
  }

  /**
   * Commits the deletes waiting in the queue (the evictions a full map just caused) in a
   * transaction of their own: pages freed inside a transaction are reusable only after it commits.
   */
  private void commitQueuedDeletes() {
    List<Op> deletes = new ArrayList<>();
    queue.removeIf(o -> o instanceof Delete && deletes.add(o));
    try (Txn<ByteBuffer> txn = env.txnWrite()) {
      for (Op o : deletes) {
        Delete d = (Delete) o;
        if (pending.get(d.key) != d) {
          continue; // superseded by a later put
        }
        data.delete(txn, d.key.into(writerKey));
        meta.delete(txn, d.key.into(writerKey));
      }
      txn.commit();
    } finally {
      for (Op o : deletes) {
        pending.remove(((Delete) o).key, o);
      }
    }
  }

  /** Bytes the environment's file occupies on disk. */
  public long fileBytes() {
    try {
      return env.stat().pageSize * (env.info().lastPageNumber + 1);
    } catch (RuntimeException e) {
      return 0;
    }
  }

  @Override
  /**
   * Lets the writer commit what is queued (up to {@link #CLOSE_WAIT_MILLIS}), then closes the
   * environment. A writer still in a commit then (a stalled disk) is left to it: closing the
   * environment under a running transaction would crash the process, and an exit without the close
   * loses nothing committed (LMDB is crash-safe); the queued puts are only lost cache.
   */
  public void close() throws InterruptedException {
    closing = true;
    writer.join(CLOSE_WAIT_MILLIS);
    if (writer.isAlive()) {
      log.warn(
          "the cache writer is still committing after {} s (a stalled disk?): leaving the LMDB"
              + " environment in {} open; nothing committed is lost",
          CLOSE_WAIT_MILLIS / 1000,
          dir);
      return;
    }
    for (Reader r = readers.poll(); r != null; r = readers.poll()) {
      discard(r);
    }
    env.close();
    if (dataFd >= 0) {
      Native.LIBC.close(dataFd);
    }
  }

  /** How long {@link #close} waits for the writer: 10 s of a disk that keeps up. */
  static final long CLOSE_WAIT_MILLIS = 10_000;
}
