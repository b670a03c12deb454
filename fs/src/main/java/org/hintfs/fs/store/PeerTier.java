package org.hintfs.fs.store;

/**
 * The tier between this node's disk and the source when the mount is one member of a cluster: a
 * unit that is not cached here is asked of its home, the one member that fetches it from the
 * source. {@link #get} answers null, and the source is read here, when the home is this node or the
 * home cannot answer (a peer is an optimisation, never a reason to fail a read); what a peer sends
 * is verified (length, CRC32C, the source version) before it is returned.
 */
public interface PeerTier extends Tier {
  /** True if this node is the sample's home now (it then reads the source itself). */
  boolean isHome(int id);

  /**
   * For a unit this node is home to but does not hold: the unit from the member that was its home
   * before its home last moved (a join, a healed partition), asked to answer only from what it
   * holds, verified; null when there is no such member or it holds none (the source is read then).
   */
  byte[] fromFormerHome(Unit u) throws java.io.IOException;
}
