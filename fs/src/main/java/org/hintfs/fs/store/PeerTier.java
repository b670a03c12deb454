package org.hintfs.fs.store;

import java.io.IOException;

/**
 * The tier between this node's cache and the source when the mount is one member of a cluster: a
 * unit that is not cached here is asked of its home, the one member that fetches it from the
 * source. Implementations verify what a peer sends (length, CRC32C, the source version) before it
 * is returned, and fall back to {@code source} whenever the home is this node or cannot answer: a
 * peer is an optimisation, never a reason to fail a read.
 */
public interface PeerTier {
  /**
   * The bytes of one unit ({@code length} of them): from its home, or from {@code source} when this
   * node is the home or the home failed.
   */
  byte[] fetch(int id, int block, String path, String version, int length, SourceRead source)
      throws IOException;

  /** True if this node is the sample's home now (it then reads the source itself). */
  boolean isHome(int id);

  /** Reads the unit from the source (and counts it as a source fetch). */
  @FunctionalInterface
  interface SourceRead {
    byte[] read() throws IOException;
  }
}
