package org.hintfs.fs.store;

import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disk tier: LMDB, with what it holds decided by the {@link CacheIndex} (the policy, pins,
 * holds, capacity). Every entry read is checked (length, CRC32C, the source version); one that
 * fails is counted, dropped and reads as absent, so the unit is fetched again.
 */
final class DiskTier implements Tier {
  private static final Logger log = LoggerFactory.getLogger(DiskTier.class);

  private final LmdbStore store;
  private final CacheIndex index;
  private final CacheStats stats;
  private final IntPredicate guest;

  /**
   * @param guest true for a file another member of the cluster is home to: a copy of it is stored
   *     as a guest and never takes a homed sample's room
   */
  DiskTier(LmdbStore store, CacheIndex index, CacheStats stats, IntPredicate guest) {
    this.store = store;
    this.index = index;
    this.stats = stats;
    this.guest = guest;
  }

  @Override
  public byte[] get(Unit u) {
    LmdbStore.Lookup l = store.get(u.key(), u.versionHash(), u.length());
    if (l.hit()) {
      return l.payload();
    }
    if (l.check() != null) {
      (l.check() == StoredValue.Check.CORRUPT ? stats.corrupt : stats.stale).increment();
      log.warn("dropping {} cache entry of {} block {}", l.check(), u.path(), u.block());
      index.drop(u.id(), u.block(), u.key(), u.length());
    } else if (store.healthy() && index.isStored(u)) {
      // The index says stored, the store has nothing (a puts' commit lost with its index record
      // kept, an index that does not match its data): forgotten, so the unit is stored again.
      stats.corrupt.increment();
      log.warn(
          "dropping the index record of {} block {}: its entry is missing", u.path(), u.block());
      index.drop(u.id(), u.block(), u.key(), u.length());
    }
    return null;
  }

  /**
   * Serves part of a held unit from the map (see {@link LmdbStore#copyOut}); false if this way
   * cannot: absent, still queued, or failing its check ({@link #get} then drops it).
   */
  boolean copyOut(Unit u, long offset, int n, NativeSink sink) {
    return store.copyOut(u.key(), u.versionHash(), u.length(), offset, n, sink)
        == StoredValue.Check.OK;
  }

  /**
   * Serves part of a block from the map, its CRC32C computed once per stored copy for {@code m}
   * (see {@link MappedBlock}); false as {@link #copyOut(Unit, long, int, NativeSink)}.
   */
  boolean copyOut(MappedBlock m, long offset, int n, NativeSink sink) {
    Unit u = m.unit;
    return store.copyOut(u.key(), u.versionHash(), u.length(), offset, n, sink, m)
        == StoredValue.Check.OK;
  }

  /** Starts paging a held unit in (see {@link LmdbStore#willNeed}). */
  void willNeed(Unit u) {
    store.willNeed(u.key());
  }

  @Override
  public boolean contains(Unit u) {
    return index.isResident(u.id());
  }

  /** Admission: the policy decides, its victims are evicted first. */
  @Override
  public void put(Unit u, byte[] bytes) {
    offer(u, bytes);
  }

  /**
   * {@link #put}, saying whether the unit was refused only because the writer's queue was full.
   *
   * @return true if it was not stored because the disk is behind (the policy was not asked)
   */
  boolean offer(Unit u, byte[] bytes) {
    return offer(u, bytes, null);
  }

  /**
   * {@link #offer(Unit, byte[])} of bytes of which {@code shared} is a native copy the caller holds
   * (or null): a large unit waits for the writer as that copy ({@link CacheIndex#admit}). {@code
   * bytes} null: the unit is in {@code shared} only (fetched straight into it, or owed).
   */
  boolean offer(Unit u, byte[] bytes, NativeBytes shared) {
    return index.admit(
        u.id(),
        u.block(),
        u.path(),
        u.versionHash(),
        u.key(),
        bytes,
        shared,
        !u.forPeer() && guest.test(u.id()));
  }

  @Override
  public void evict(Unit u) {
    index.drop(u.id(), u.block(), u.key(), u.length());
  }
}
