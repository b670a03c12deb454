package org.hintfs.fs.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The RAM tier: a Caffeine cache of units weighed by their bytes. It holds what was fetched (not
 * ordinary disk hits: a pass that reads each file once would only make the collector copy them) and
 * what was promoted from disk for a predicted open, which that open's read takes out again. With no
 * RAM ({@code bytes} 0) nothing goes in: Caffeine evicts asynchronously, so even a cache of weight
 * 0 would serve a just-fetched unit for a moment, as a hit nobody admitted.
 */
final class RamTier implements Tier {
  private final long bytes;

  /**
   * Heap an entry takes beyond its bytes, counted in its weight: the array's header (16), the boxed
   * key (16), Caffeine's node (40) and its map's (32). At ImageNet-shaped 256 B files the tier
   * weighed payload alone and held 1.4x its size in heap; at 110 KB JPEGs this is 0.1%.
   */
  static final int ENTRY_OVERHEAD = 104;

  private final Cache<Long, byte[]> ram;

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
            .weigher((Long k, byte[] v) -> v.length + ENTRY_OVERHEAD)
            // Called inside the eviction of the key, so a promote racing with it is ordered.
            .evictionListener((Long k, byte[] v, RemovalCause c) -> promoted.remove(k))
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
    byte[] b = ram.getIfPresent(rk);
    if (b != null && promoted.remove(rk)) {
      ram.invalidate(rk);
    }
    return b;
  }

  /** The unit's bytes if held, leaving a promoted one in place. */
  byte[] peek(int id, int block) {
    return ram.getIfPresent(Unit.ramKey(id, block));
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
    if (bytes > 0) {
      ram.put(u.ramKey(), b);
    }
  }

  /** Holds a unit read from disk ahead of a predicted open, until that open's read takes it. */
  void promote(Unit u, byte[] b) {
    if (bytes > 0) {
      // Marked first: an eviction after the put unmarks it; one before leaves an unmarked entry,
      // held until evicted like a fetched one, never a mark without an entry.
      promoted.add(u.ramKey());
      ram.put(u.ramKey(), b);
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
