package org.hintfs.fs.cluster;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.store.PeerTier;
import org.hintfs.fs.store.Unit;
import org.infinispan.remoting.transport.Address;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A miss on this node goes to the sample's home; only the home reads the source. The home's reply
 * is verified ({@link PeerReply}) before it is served. When the home is this node, or the home
 * fails, sends bytes that do not check, or has not answered within a bound taken from its own
 * recent answers ({@link PeerHealth}), the source is read here: a peer makes reads cheaper, never
 * fail, and a slow one costs a reader that bound, not the ask's timeout. A home that keeps failing
 * or lagging is not asked for a while.
 */
public final class ClusterPeerTier implements PeerTier {
  private static final Logger log = LoggerFactory.getLogger(ClusterPeerTier.class);

  /**
   * 30 s: the home goes on with an ask this long (longer than its own source retries, 20 s by
   * default), so what it fetched is cached there even when the asker stopped waiting at its hedge
   * bound ({@link PeerHealth}).
   */
  static final long TIMEOUT_MILLIS = 30_000;

  private final java.util.concurrent.ConcurrentHashMap<Address, PeerHealth> health =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final java.util.concurrent.ConcurrentHashMap<Address, PeerHealth> peekHealth =
      new java.util.concurrent.ConcurrentHashMap<>();
  final LongAdder peerHedged = new LongAdder();
  final LongAdder peerSkipped = new LongAdder();

  private final ClusterMember member;
  final LongAdder fromPeers = new LongAdder();
  final LongAdder bytesFromPeers = new LongAdder();
  final LongAdder peerMicros = new LongAdder();
  final LongAdder homedHere = new LongAdder();
  final LongAdder peerFailures = new LongAdder();
  final LongAdder fromFormerHomes = new LongAdder();
  final LongAdder formerHomeMisses = new LongAdder();

  /** Time of one unit from its home, asked to verified (for /metrics). */
  public final io.prometheus.metrics.core.metrics.Histogram peerSeconds =
      io.prometheus.metrics.core.metrics.Histogram.builder()
          .name("hintfs_peer_fetch_duration_seconds")
          .help("time to get one file or block from its home member, checks included")
          .classicOnly()
          .classicUpperBounds(org.hintfs.fs.store.CacheStats.LATENCY_BUCKETS)
          .build();

  public ClusterPeerTier(ClusterMember member) {
    this.member = member;
  }

  /**
   * The unit from its home, verified; null when this node is the home or the home failed, timed out
   * or sent bytes that do not check (the source is read here then).
   */
  @Override
  public byte[] get(Unit u) throws IOException {
    member.noteRead();
    Address home = member.homeOf(u.id());
    if (home == null || member.isSelf(home)) {
      byte[] b = home == null ? null : fromFormerHome(u);
      if (b == null) {
        homedHere.increment();
      }
      return b;
    }
    PeerHealth h = health.computeIfAbsent(home, a -> new PeerHealth());
    long t0 = System.nanoTime();
    if (h.skipped(t0)) {
      peerSkipped.increment();
      return null;
    }
    long bound = h.hedgeMillis();
    try {
      byte[] reply =
          member
              .ask(home, u.id(), u.block(), u.path(), formerName(u.id()), TIMEOUT_MILLIS)
              .get(bound, TimeUnit.MILLISECONDS);
      byte[] b = PeerReply.verify(reply, u.version(), u.length());
      long ns = System.nanoTime() - t0;
      h.answered(ns);
      peerMicros.add(ns / 1000);
      peerSeconds.observe(ns / 1e9);
      fromPeers.increment();
      bytesFromPeers.add(u.length());
      return b;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted waiting for " + home);
    } catch (TimeoutException e) {
      peerHedged.increment();
      if (h.failed(System.nanoTime())) {
        log.warn(
            "home {} answered none of the last {} asks within {} ms: reading the source without"
                + " asking it for a while",
            home,
            PeerHealth.BAD_IN_A_ROW,
            bound);
      }
      return null;
    } catch (ExecutionException | IOException | RuntimeException e) {
      long n = peerFailures.sum() + 1;
      peerFailures.increment();
      h.failed(System.nanoTime());
      if (n <= 20 || n % 1000 == 0) {
        Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        log.warn(
            "{} from home {} failed (#{}), reading the source: {}",
            u.path(),
            home,
            n,
            c.toString());
      }
      return null;
    }
  }

  private String formerName(int id) {
    Address former = member.formerHomeOf(id);
    return former == null ? null : former.toString();
  }

  /**
   * The unit from the member that was its home before the homes last moved: the one the asker named
   * ({@link Unit#formerHome}), else the one this node knows. It answers from what it holds or with
   * nothing, within its hedge bound; a wrong or late answer means the source, as for any ask.
   */
  @Override
  public byte[] fromFormerHome(Unit u) throws IOException {
    member.noteRead();
    Address former = member.member(u.formerHome());
    if (former == null || member.isSelf(former)) {
      former = member.formerHomeOf(u.id());
    }
    if (former == null || member.isSelf(former)) {
      return null;
    }
    // A health of its own: a former home that holds nothing or is slow to say so is not a reason
    // to stop asking it as a home.
    PeerHealth h = peekHealth.computeIfAbsent(former, a -> new PeerHealth());
    long t0 = System.nanoTime();
    if (h.skipped(t0)) {
      formerHomeMisses.increment();
      return null;
    }
    try {
      byte[] reply =
          member
              .peek(former, u.id(), u.block(), u.path(), TIMEOUT_MILLIS)
              .get(h.hedgeMillis(), TimeUnit.MILLISECONDS);
      h.answered(System.nanoTime() - t0);
      if (reply.length == 0) {
        formerHomeMisses.increment();
        return null;
      }
      byte[] b = PeerReply.verify(reply, u.version(), u.length());
      fromFormerHomes.increment();
      bytesFromPeers.add(u.length());
      return b;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted waiting for " + former);
    } catch (TimeoutException | ExecutionException | IOException | RuntimeException e) {
      h.failed(System.nanoTime());
      formerHomeMisses.increment();
      log.debug("{} from former home {}: {}", u.path(), former, e.toString());
      return null;
    }
  }

  private final java.util.concurrent.atomic.AtomicInteger refileRequests =
      new java.util.concurrent.atomic.AtomicInteger();
  final LongAdder refiled = new LongAdder();

  /**
   * Now and whenever the homes move, files cached as this node's own whose home is another member
   * become guests in {@code index}, and guests whose home is this node its own ({@link
   * org.hintfs.fs.store.CacheIndex#refileMoved}), on a thread of its own: one pass at a time,
   * another after it if the homes moved again meanwhile.
   */
  public void refileWhenHomesMove(org.hintfs.fs.store.CacheIndex index) {
    Runnable request =
        () -> {
          if (refileRequests.getAndIncrement() > 0) {
            return; // the running pass goes round again
          }
          Thread t =
              new Thread(
                  () -> {
                    int seen;
                    do {
                      seen = refileRequests.get();
                      try {
                        refiled.add(index.refileMoved(this::isHome));
                      } catch (RuntimeException e) {
                        log.debug("re-filing moved homes failed (the cluster is closing?)", e);
                      }
                    } while (!refileRequests.compareAndSet(seen, 0)); // asked again meanwhile
                  },
                  "homes-moved");
          t.setDaemon(true);
          t.start();
        };
    member.onHomesMoved(request);
    request.run(); // a cache kept from an earlier mount holds others' homes as its own
  }

  /** Cached files that became guests because their home moved to another member. */
  public long refiledAsGuests() {
    return refiled.sum();
  }

  /** Units this node, their home, got from the member that was their home before it. */
  public long fromFormerHomes() {
    return fromFormerHomes.sum();
  }

  /** Asks of a former home that held nothing, failed or was late (the source served them). */
  public long formerHomeMisses() {
    return formerHomeMisses.sum();
  }

  @Override
  public boolean isHome(int id) {
    Address home = member.homeOf(id);
    return home == null || member.isSelf(home);
  }

  /** Units this node received from their homes. */
  public long fromPeers() {
    return fromPeers.sum();
  }

  /** Bytes received from homes. */
  public long bytesFromPeers() {
    return bytesFromPeers.sum();
  }

  /** Mean time of a unit from a peer, in microseconds (0 before the first). */
  public long meanPeerMicros() {
    long n = fromPeers.sum();
    return n == 0 ? 0 : peerMicros.sum() / n;
  }

  /** Misses this node read from the source because it is their home. */
  public long homedHere() {
    return homedHere.sum();
  }

  /** Asks of a home that failed (the source served them instead). */
  public long peerFailures() {
    return peerFailures.sum();
  }

  /** Asks given up at their home's hedge bound (the source served them instead). */
  public long peerHedged() {
    return peerHedged.sum();
  }

  /** Misses read from the source without asking their home, skipped for lagging or failing. */
  public long peerSkipped() {
    return peerSkipped.sum();
  }

  private volatile int homedTopology = -1;
  private volatile long[] homed = {0, 0};
  private final java.util.concurrent.atomic.AtomicBoolean recounting =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Files and bytes of {@code catalog} whose home is this member: {files, bytes}. Recounted when
   * the homes' topology changes (one hash per file: a fraction of a second at a million files), on
   * a thread of its own: the caller (a prefetcher sizing its windows on a FUSE thread, a stats
   * read) gets the last count at once, never the wait.
   */
  public long[] homed(org.hintfs.fs.catalog.Catalog catalog) {
    int topology = member.topologyId();
    if (topology != homedTopology && recounting.compareAndSet(false, true)) {
      Thread t =
          new Thread(
              () -> {
                try {
                  count(catalog, topology);
                } catch (RuntimeException e) {
                  log.debug("counting the homed files failed (the cluster is closing?)", e);
                } finally {
                  recounting.set(false);
                }
              },
              "homed-count");
      t.setDaemon(true);
      t.start();
    }
    return homed;
  }

  /** {@link #homed}, counted now if the topology changed since (for stats, off the read path). */
  public long[] homedNow(org.hintfs.fs.catalog.Catalog catalog) {
    int topology = member.topologyId();
    if (topology != homedTopology) {
      count(catalog, topology);
    }
    return homed;
  }

  private void count(org.hintfs.fs.catalog.Catalog catalog, int topology) {
    long files = 0;
    long bytes = 0;
    for (int id = 0; id < catalog.entryCount(); id++) {
      if (!catalog.isDirectory(id) && member.isSelf(member.homeOf(id))) {
        files++;
        bytes += catalog.size(id);
      }
    }
    publish(topology, new long[] {files, bytes});
  }

  /**
   * Keeps a count only if the homes did not move while it ran: a background recount finishing late
   * never replaces a count of the newer topology, and a moving topology is counted again next time.
   */
  private synchronized void publish(int topology, long[] count) {
    if (member.topologyId() == topology) {
      homed = count;
      homedTopology = topology;
    }
  }

  /** The member this tier asks through. */
  public ClusterMember member() {
    return member;
  }
}
