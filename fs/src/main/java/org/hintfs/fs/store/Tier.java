package org.hintfs.fs.store;

import java.io.IOException;

/**
 * One level of the read path. {@link TieredCache} asks them in order, nearest first: the RAM tier
 * ({@link RamTier}), the disk ({@link DiskTier}, LMDB), in a cluster the unit's home ({@link
 * PeerTier}), and the source ({@link SourceTier}); the first that answers serves the read, and what
 * a farther tier answered is offered to the nearer ones. Each tier checks the bytes where they
 * enter it (the disk: length, CRC32C and version of every entry; a peer: length, CRC32C and the
 * source version of every reply), so whatever a tier returns is the unit as the source has it now.
 */
public interface Tier {
  /**
   * The unit's bytes, or null if this tier does not hold them (or, for a peer, if the source must
   * be asked instead).
   *
   * @throws IOException only where no farther tier could do better (the source itself)
   */
  byte[] get(Unit u) throws IOException;

  /** True if {@link #get} would answer from this tier now, without any fetch. */
  default boolean contains(Unit u) {
    return false;
  }

  /** Offers a unit a farther tier answered; the tier may decline it (room, policy). */
  default void put(Unit u, byte[] bytes) {}

  /** Drops the unit from this tier, if it is there. */
  default void evict(Unit u) {}
}
