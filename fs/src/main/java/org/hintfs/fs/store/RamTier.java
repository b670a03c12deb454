package org.hintfs.fs.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
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
  private final Cache<Long, byte[]> ram;

  /** Entries read ahead from disk for a predicted open, dropped once that open reads them. */
  private final Set<Long> promoted = ConcurrentHashMap.newKeySet();

  RamTier(long bytes) {
    this.bytes = bytes;
    this.ram =
        Caffeine.newBuilder().maximumWeight(bytes).weigher((Long k, byte[] v) -> v.length).build();
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

  /** True if block {@code block} of file {@code id} is held. */
  boolean contains(int id, int block) {
    return ram.getIfPresent(Unit.ramKey(id, block)) != null;
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
      ram.put(u.ramKey(), b);
      promoted.add(u.ramKey());
    }
  }

  @Override
  public void evict(Unit u) {
    evict(u.id(), u.block());
  }

  /** Drops block {@code block} of file {@code id}; true if it was held. */
  boolean evict(int id, int block) {
    return ram.asMap().remove(Unit.ramKey(id, block)) != null;
  }

  /** True if this tier holds anything at all ({@code --ram-cache} above 0). */
  boolean enabled() {
    return bytes > 0;
  }
}
