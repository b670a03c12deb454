package org.hintfs.fs.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The RAM tier: a Caffeine cache of units weighed by their bytes. It holds what was fetched (not
 * ordinary disk hits: a pass that reads each file once would only make the collector copy them) and
 * what was promoted from disk for a predicted open, which that open's read takes out again. With no
 * RAM ({@code bytes} 0) nothing goes in: Caffeine evicts asynchronously, so even a cache of weight
 * 0 would serve a just-fetched unit for a moment, as a hit nobody admitted.
 *
 * <p>The bytes live outside the heap ({@link NativeBytes}); the heap holds a small entry per unit.
 * On a heap of {@code byte[]}s the collector copied each new entry once or twice (young
 * collections) and slid the whole tier in a full one: 512 MiB of samples on a Serial heap. A read
 * copies the unit out into a new array, which its open holds and drops: garbage that dies young. An
 * entry's memory is freed when Caffeine lets it go (evicted, replaced, removed), or by the last
 * reader still copying out of it.
 */
final class RamTier implements Tier {
  private final long bytes;

  /**
   * Memory an entry takes beyond its bytes, counted in its weight: on the heap the boxed key (16),
   * Caffeine's node (40), its map's (32) and the {@link NativeBytes} (32); malloc's chunk header
   * and rounding (16). At ImageNet-shaped 256 B files a tier that weighed payload alone held 1.4x
   * its size; at 110 KB JPEGs this is 0.1%.
   */
  static final int ENTRY_OVERHEAD = 136;

  private final Cache<Long, NativeBytes> ram;

  /** Native bytes allocated for entries and not freed yet. */
  private final AtomicLong held = new AtomicLong();

  /**
   * Entries read ahead from disk for a predicted open, dropped once that open reads them, and when
   * the tier evicts or drops them: it never holds a key the tier does not (at 1.28 M files, a
   * promoted entry Caffeine evicted stayed here for the mount's life).
   */
  private final Set<Long> promoted = ConcurrentHashMap.newKeySet();

  RamTier(long bytes) {
    this.bytes = bytes;
    this.ram =
        Caffeine.newBuilder()
            .maximumWeight(bytes)
            .weigher((Long k, NativeBytes v) -> v.length() + ENTRY_OVERHEAD)
            // Called inside the eviction of the key, so a promote racing with it is ordered.
            .evictionListener((Long k, NativeBytes v, RemovalCause c) -> promoted.remove(k))
            // Every way out (evicted, replaced, removed) gives up the tier's reference, on the
            // thread that caused it (no executor between an eviction and the memory's release).
            .removalListener((Long k, NativeBytes v, RemovalCause c) -> v.release())
            .executor(Runnable::run)
            .build();
  }

  /** The unit's bytes; a promoted unit leaves the tier as its read takes it (its work is done). */
  @Override
  public byte[] get(Unit u) {
    return take(u.id(), u.block());
  }

  /** {@link #get} by id and block. */
  byte[] take(int id, int block) {
    long rk = Unit.ramKey(id, block);
    byte[] b = copy(ram.getIfPresent(rk));
    if (b != null && promoted.remove(rk)) {
      ram.invalidate(rk);
    }
    return b;
  }

  /**
   * Block {@code block} of file {@code id} where it lies, with one reference for the caller to
   * {@link NativeBytes#release}, or null if not held: an access, as {@link #take} is (a promoted
   * entry leaves the tier; the caller's reference keeps its memory).
   */
  NativeBytes hold(int id, int block) {
    long rk = Unit.ramKey(id, block);
    NativeBytes e = ram.getIfPresent(rk);
    if (e == null || !e.acquire()) {
      return null;
    }
    if (promoted.remove(rk)) {
      ram.invalidate(rk);
    }
    return e;
  }

  /**
   * Block {@code block} of file {@code id} with one reference for the caller, or null if not held
   * or not {@code length} bytes long (another version's): not an access (a block read ahead is
   * accessed when its reader reads it).
   */
  NativeBytes holdQuietly(int id, int block, int length) {
    NativeBytes e = ram.policy().getIfPresentQuietly(Unit.ramKey(id, block));
    if (e == null || e.length() != length || !e.acquire()) {
      return null;
    }
    return e;
  }

  /** The unit's bytes if held, leaving a promoted one in place. */
  byte[] peek(int id, int block) {
    return copy(ram.getIfPresent(Unit.ramKey(id, block)));
  }

  /** A heap copy of an entry's bytes; null for none, or one freed while this reader got to it. */
  private static byte[] copy(NativeBytes e) {
    return e == null ? null : e.copy();
  }

  @Override
  public boolean contains(Unit u) {
    return contains(u.id(), u.block());
  }

  /**
   * True if block {@code block} of file {@code id} is held. Not an access: asking whether an open
   * hits, or whether a file is near, must not make it look used to the tier's eviction (a
   * getIfPresent would count it in Caffeine's frequency sketch and move it up its LRU order).
   */
  boolean contains(int id, int block) {
    return ram.asMap().containsKey(Unit.ramKey(id, block));
  }

  @Override
  public void put(Unit u, byte[] b) {
    NativeBytes e = bytes > 0 ? NativeBytes.copyOf(b, held) : null;
    if (e != null) {
      ram.put(u.ramKey(), e);
    }
  }

  /**
   * Native memory for a unit about to be fetched straight into it ({@link NativeBytes#allocate}),
   * counted with the tier's own ({@link #nativeBytes}); null if none could be had.
   */
  NativeBytes allocate(int length) {
    return NativeBytes.allocate(length, held);
  }

  /**
   * Keeps {@code e}, a unit's bytes the caller made and still holds a reference on, with one
   * reference more for the tier: no copy.
   */
  void adopt(Unit u, NativeBytes e) {
    if (bytes > 0 && e.acquire()) {
      ram.put(u.ramKey(), e);
    }
  }

  /** Holds a unit read from disk ahead of a predicted open, until that open's read takes it. */
  void promote(Unit u, byte[] b) {
    NativeBytes e = bytes > 0 ? NativeBytes.copyOf(b, held) : null;
    if (e != null) {
      // Marked first: an eviction after the put unmarks it; one before leaves an unmarked entry,
      // held until evicted like a fetched one, never a mark without an entry.
      promoted.add(u.ramKey());
      ram.put(u.ramKey(), e);
    }
  }

  @Override
  public void evict(Unit u) {
    evict(u.id(), u.block());
  }

  /** Drops block {@code block} of file {@code id}; true if it was held. */
  boolean evict(int id, int block) {
    long rk = Unit.ramKey(id, block);
    boolean had = ram.asMap().remove(rk) != null;
    promoted.remove(rk);
    return had;
  }

  /**
   * Native bytes held for entries now, including any a reader still copies out of, and blocks being
   * fetched straight into memory from {@link #allocate}.
   */
  long nativeBytes() {
    return held.get();
  }

  /**
   * Drops every entry (the cache closes); memory a reader still copies from goes when it is done.
   */
  void clear() {
    ram.invalidateAll();
    ram.cleanUp();
    promoted.clear();
  }

  /** Entries marked promoted now (tests). */
  int promotedCount() {
    return promoted.size();
  }

  /** Runs the tier's pending maintenance, evictions included, now (tests). */
  void cleanUp() {
    ram.cleanUp();
  }

  /** The tier's entries from the next to be evicted on (tests), at most {@code n}. */
  java.util.Set<Long> coldest(int n) {
    return ram.policy().eviction().orElseThrow().coldest(n).keySet();
  }

  /** True if this tier holds anything at all ({@code --ram-cache} above 0). */
  boolean enabled() {
    return bytes > 0;
  }
}
