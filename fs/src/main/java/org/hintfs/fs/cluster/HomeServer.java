package org.hintfs.fs.cluster;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.store.TieredCache;

/**
 * Answers the other members' requests for the samples this node is home to: from its own tiers,
 * else from the source (once: concurrent requests, local or remote, join one fetch), admitting what
 * it fetched so the job fetches it once. Runs on Infinispan's blocking threads.
 */
public final class HomeServer {
  private final Catalog catalog;
  private volatile TieredCache cache; // null until the mount's cache is built
  private volatile Runnable onServe = () -> {};
  final LongAdder served = new LongAdder();
  final LongAdder bytesServed = new LongAdder();

  public HomeServer(Catalog catalog) {
    this.catalog = catalog;
  }

  /** Runs on each ask served as a home (the member notes that reads go through its homes). */
  void onServe(Runnable r) {
    this.onServe = r;
  }

  /** The cache to serve from; until it is set, requests fail and the asker reads the source. */
  public void serveFrom(TieredCache cache) {
    this.cache = cache;
  }

  /**
   * One unit of sample {@code id}, as a {@link PeerReply}; if this node does not hold it, the
   * member named {@code formerHome} (where the asker last knew its home; null: none) is asked
   * before the source.
   */
  byte[] serve(int id, int block, String path, String formerHome) throws IOException {
    TieredCache c = serving(id, path);
    onServe.run();
    byte[] b = c.readForPeer(id, block, formerHome);
    served.increment();
    bytesServed.add(b.length);
    return PeerReply.encode(b, catalog.versionTag(id));
  }

  /**
   * One unit of sample {@code id} as a {@link PeerReply} if this node's own tiers hold it, else an
   * empty array: asked by the unit's new home, it never fetches.
   */
  byte[] peek(int id, int block, String path) throws IOException {
    TieredCache c = serving(id, path);
    byte[] b = c.peekForPeer(id, block);
    if (b == null) {
      return new byte[0];
    }
    served.increment();
    bytesServed.add(b.length);
    return PeerReply.encode(b, catalog.versionTag(id));
  }

  private TieredCache serving(int id, String path) throws IOException {
    TieredCache c = cache;
    if (c == null) {
      throw new IOException("not serving yet");
    }
    if (id < 0 || id >= catalog.entryCount() || !path.equals(catalog.path(id))) {
      throw new IOException("no file " + path + " at id " + id + " in this member's listing");
    }
    return c;
  }

  /** Units served to other members. */
  public long served() {
    return served.sum();
  }

  /** Bytes served to other members. */
  public long bytesServed() {
    return bytesServed.sum();
  }
}
