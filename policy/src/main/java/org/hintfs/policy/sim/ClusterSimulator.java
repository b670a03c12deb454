package org.hintfs.policy.sim;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.Importance;
import org.hintfs.policy.NextUse;
import org.hintfs.policy.Policies;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.Residency;
import org.hintfs.policy.sampler.TorchSamplers;

/**
 * Replays a data-parallel job over N nodes through N caches, each the mount's own {@link Residency}
 * driving a real policy: alone, or as one cluster of homes and guests.
 *
 * <p>The job: {@link #RANKS_PER_NODE} ranks per node (node {@code n} runs ranks {@code 2n} and
 * {@code 2n+1}, as torchrun numbers them), each reading its shard of PyTorch's DistributedSampler
 * (shuffled, padded, the seed's epoch order replayed bit for bit). The ranks run in lockstep (DDP):
 * step {@code t} is every rank's {@code t}-th read, ranks in order inside a step, so the job's
 * reads form one sequence and the interleaved order {@link TorchSamplers#distributedJob} returns is
 * that sequence for one epoch. A read's position in it is the job clock, and a sample's next use by
 * any rank is the next position that names it: computed once per job, read by every run.
 *
 * <p>A read, cluster modes: the reader's own cache, then the sample's home (a transfer of its bytes
 * between nodes), then the source (one GET, made by the home only, which then keeps the sample if
 * its policy admits it). The reader keeps the copy as a guest: in room no homed sample needs, given
 * up first ({@link Residency#admit(int, long, boolean)}, the mount's rule). Homes are a uniform
 * seeded draw of a node per sample (one owner of a consistent hash); they never move.
 *
 * <ul>
 *   <li>{@code independent}: each node alone, every miss a GET, Belady over its own two ranks'
 *       orders (what a node can know without peers);
 *   <li>{@code cluster-belady}: homes evict the homed sample whose next use by any rank of the job
 *       is furthest. Every daemon can compute every rank's order from (seed, world, epoch), so a
 *       home re-keys a homed sample at each read of it anywhere, even one a guest copy served;
 *   <li>{@code cluster-lru}: homes evict the least recently requested: they see their own ranks'
 *       reads and the requests of peers, not the reads guest copies serve.
 * </ul>
 *
 * <p>Not modelled: time (a step waits for its slowest read), prefetch and staging, membership
 * changes, partial units. Capacity is in bytes; with equal sizes {@link #sourceBound} is a true
 * lower bound on GETs.
 *
 * <p>Cost: one pass over the job's reads per run. Each node's cache numbers its samples densely
 * (its homed samples first, then the others its ranks read), so N caches together cost about what
 * the samples they can ever see cost, not N times the dataset.
 */
public final class ClusterSimulator {
  /** Ranks (GPUs) per node. */
  public static final int RANKS_PER_NODE = 2;

  /** ImageNet's mean JPEG, about 110 KB: the size of every sample of {@link Job#torch}. */
  public static final int SAMPLE_BYTES = 110_000;

  /** Mixed into the seed for the home draw, so homes do not follow the sampler's stream. */
  private static final long HOME_SALT = 0x40E5L;

  private ClusterSimulator() {}

  /** How the nodes' caches work together. */
  public enum Mode {
    INDEPENDENT("independent", "clairvoyant"),
    CLUSTER_LRU("cluster-lru", "lru"),
    CLUSTER_BELADY("cluster-belady", "clairvoyant");

    private final String label;
    private final String policy;

    Mode(String label, String policy) {
      this.label = label;
      this.policy = policy;
    }

    /** The name the CLI prints. */
    public String label() {
      return label;
    }
  }

  /**
   * The GETs per key no policy can beat with {@code nodes} caches of {@code fraction} of the
   * dataset each (aggregate A = nodes x fraction) over {@code epochs} epochs: the first reads every
   * sample once; each later one refetches what the caches together cannot hold, 1 - A of it.
   */
  public static double sourceBound(int nodes, double fraction, int epochs) {
    return 1 + (epochs - 1) * Math.max(0, 1 - nodes * fraction);
  }

  /** The job's reads, homes and next uses: built once, shared by every run over it. */
  public static final class Job {
    final int nodes;
    final int world;
    final int epochs;
    final int perEpoch;
    final int[] sizes;
    final long datasetBytes;
    final int[] home;
    final int[] homeIndex;
    final int[] homed;
    final int[] sample;
    final int[] next;
    final int[] nextOnNode;
    final int[] local;
    final int[] universe;

    /**
     * {@code nodes} nodes of {@link #RANKS_PER_NODE} ranks reading {@code samples} samples of
     * {@link #SAMPLE_BYTES} for {@code epochs} epochs in DistributedSampler's order (shuffle on,
     * drop_last off, the sampler seeded with {@code seed}); homes drawn from {@code seed}.
     */
    public static Job torch(int nodes, int samples, int epochs, long seed) {
      if (nodes < 1 || samples < 1 || epochs < 1) {
        throw new IllegalArgumentException(
            "nodes, samples and epochs must be at least 1, not "
                + nodes
                + ", "
                + samples
                + ", "
                + epochs);
      }
      int world = nodes * RANKS_PER_NODE;
      int[][] orders = new int[epochs][];
      for (int e = 0; e < epochs; e++) {
        orders[e] = TorchSamplers.distributedJob(samples, world, true, seed, e, false);
      }
      int[] sizes = new int[samples];
      Arrays.fill(sizes, SAMPLE_BYTES);
      return new Job(nodes, sizes, uniformHomes(samples, nodes, seed), orders);
    }

    /**
     * A job with given sizes, homes ({@code home[s]}, the node that is home to sample {@code s})
     * and orders: {@code orders[e][t * world + r]} is rank {@code r}'s {@code t}-th read of epoch
     * {@code e}, world = nodes x {@link #RANKS_PER_NODE}.
     */
    public static Job of(int nodes, int[] sizes, int[] home, int[][] orders) {
      return new Job(nodes, sizes.clone(), home.clone(), orders);
    }

    private Job(int nodes, int[] sizes, int[] home, int[][] orders) {
      int d = sizes.length;
      this.nodes = nodes;
      this.world = nodes * RANKS_PER_NODE;
      this.epochs = orders.length;
      this.perEpoch = orders.length == 0 ? 0 : orders[0].length;
      this.sizes = sizes;
      this.home = home;
      if (nodes < 1 || epochs < 1 || home.length != d || perEpoch == 0 || perEpoch % world != 0) {
        throw new IllegalArgumentException(
            "a job needs nodes >= 1, one home per sample and epochs of whole steps of "
                + world
                + " reads");
      }
      long bytes = 0;
      for (int s = 0; s < d; s++) {
        bytes += sizes[s];
        if (home[s] < 0 || home[s] >= nodes) {
          throw new IllegalArgumentException("sample " + s + " has home " + home[s]);
        }
      }
      this.datasetBytes = bytes;
      this.sample = new int[epochs * perEpoch];
      for (int e = 0; e < epochs; e++) {
        if (orders[e].length != perEpoch) {
          throw new IllegalArgumentException("epoch " + e + " has another length than epoch 0");
        }
        System.arraycopy(orders[e], 0, sample, e * perEpoch, perEpoch);
      }
      for (int s : sample) {
        if (s < 0 || s >= d) {
          throw new IllegalArgumentException("the order reads sample " + s + " of " + d);
        }
      }
      this.homed = new int[nodes];
      this.homeIndex = new int[d];
      for (int s = 0; s < d; s++) {
        homeIndex[s] = homed[home[s]]++;
      }
      this.next = nextUses(sample, d);
      this.nextOnNode = new int[sample.length];
      this.local = new int[sample.length];
      this.universe = new int[nodes];
      numberPerNode(d);
    }

    /** For each read, the position of the next read of its sample by any rank (-1: none). */
    private static int[] nextUses(int[] sample, int d) {
      int[] next = new int[sample.length];
      int[] last = new int[d];
      Arrays.fill(last, -1);
      for (int p = sample.length - 1; p >= 0; p--) {
        next[p] = last[sample[p]];
        last[sample[p]] = p;
      }
      return next;
    }

    /**
     * Per node: each read's next use by a rank of the same node, and the sample's id in the node's
     * dense numbering (its homed samples by {@link #homeIndex}, then the others in first-read
     * order). One scratch array over the dataset, cleared by walking the node's reads again.
     */
    private void numberPerNode(int d) {
      int[] scratch = new int[d];
      Arrays.fill(scratch, -1);
      for (int n = 0; n < nodes; n++) {
        int ids = homed[n];
        for (int p = lastOf(n); p >= 0; p = previousOf(p)) {
          int s = sample[p];
          nextOnNode[p] = scratch[s];
          scratch[s] = p;
        }
        for (int p = firstOf(n); p >= 0; p = nextOf(p)) {
          scratch[sample[p]] = -1;
        }
        for (int p = firstOf(n); p >= 0; p = nextOf(p)) {
          int s = sample[p];
          if (home[s] == n) {
            local[p] = homeIndex[s];
          } else {
            if (scratch[s] < 0) {
              scratch[s] = ids++;
            }
            local[p] = scratch[s];
          }
        }
        for (int p = firstOf(n); p >= 0; p = nextOf(p)) {
          scratch[sample[p]] = -1;
        }
        universe[n] = ids;
      }
    }

    /** The node whose rank makes read {@code p}. */
    int nodeOf(int p) {
      return (p % perEpoch) % world / RANKS_PER_NODE;
    }

    // A node's reads in job order: in each step, its ranks 2n and 2n+1, at positions
    // e * perEpoch + t * world + 2n + {0, 1}; -1 past either end.
    private int firstOf(int n) {
      return sample.length == 0 ? -1 : n * RANKS_PER_NODE;
    }

    private int lastOf(int n) {
      return sample.length == 0 ? -1 : sample.length - world + n * RANKS_PER_NODE + 1;
    }

    private int nextOf(int p) {
      if (p % RANKS_PER_NODE != RANKS_PER_NODE - 1) {
        return p + 1;
      }
      int q = p - (RANKS_PER_NODE - 1) + world;
      return q < sample.length ? q : -1;
    }

    private int previousOf(int p) {
      if (p % RANKS_PER_NODE != 0) {
        return p - 1;
      }
      int q = p + (RANKS_PER_NODE - 1) - world;
      return q >= 0 ? q : -1;
    }

    /** Nodes of the job, {@link #RANKS_PER_NODE} ranks each. */
    public int nodes() {
      return nodes;
    }

    /** Samples in the dataset. */
    public int samples() {
      return sizes.length;
    }

    /** Epochs the job reads. */
    public int epochs() {
      return epochs;
    }

    /** Reads per epoch, the padding of the last step included. */
    public int readsPerEpoch() {
      return perEpoch;
    }

    /** Bytes of all samples: a cache of fraction f holds f times this. */
    public long datasetBytes() {
      return datasetBytes;
    }

    /** The node that is home to {@code sample}. */
    public int home(int sample) {
      return home[sample];
    }

    /** Rank {@code rank}'s reads of epoch {@code epoch}, in order. */
    public int[] rankOrder(int epoch, int rank) {
      int[] out = new int[perEpoch / world];
      for (int t = 0; t < out.length; t++) {
        out[t] = sample[epoch * perEpoch + t * world + rank];
      }
      return out;
    }
  }

  /** A seeded uniform draw of one home node per sample. */
  static int[] uniformHomes(int samples, int nodes, long seed) {
    SplittableRandom r = new SplittableRandom(seed ^ HOME_SALT);
    int[] home = new int[samples];
    for (int s = 0; s < samples; s++) {
      home[s] = r.nextInt(nodes);
    }
    return home;
  }

  /** What one run counted. */
  public record Result(
      Mode mode,
      int nodes,
      double cacheFraction,
      int samples,
      long[] epochReads,
      long[] epochLocalHits,
      long peerReads,
      long gets,
      long bytesBetweenNodes) {

    /** Reads of the whole run, by every rank. */
    public long reads() {
      return Arrays.stream(epochReads).sum();
    }

    /** Reads served from the reader's own node's cache. */
    public long localHits() {
      return Arrays.stream(epochLocalHits).sum();
    }

    /** Share of all reads served from the reader's own node's cache. */
    public double localHitRatio() {
      return ratio(localHits(), reads());
    }

    /** Share of epoch {@code epoch}'s reads served from the reader's own node's cache. */
    public double localHitRatio(int epoch) {
      return ratio(epochLocalHits[epoch], epochReads[epoch]);
    }

    /** The job's caches together, in datasets. */
    public double aggregate() {
      return nodes * cacheFraction;
    }

    /** Source GETs per sample of the dataset, over the whole run. */
    public double getsPerKey() {
      return ratio(gets, samples);
    }

    /** {@link #sourceBound} for this run. */
    public double boundPerKey() {
      return sourceBound(nodes, cacheFraction, epochReads.length);
    }

    /** Reads sent to the sample's home on another node, per read. */
    public double peerReadsPerRead() {
      return ratio(peerReads, reads());
    }

    /** Bytes a home sent to a reader, per read. */
    public double bytesBetweenNodesPerRead() {
      return ratio(bytesBetweenNodes, reads());
    }

    private static double ratio(long a, long b) {
      return b == 0 ? 0 : (double) a / b;
    }
  }

  /** Runs {@code job} with caches of {@code cacheFraction} of the dataset on every node. */
  public static Result run(Job job, Mode mode, double cacheFraction) {
    long capacity = (long) (job.datasetBytes * cacheFraction);
    Node[] nodes = new Node[job.nodes];
    for (int n = 0; n < job.nodes; n++) {
      nodes[n] = new Node(job.universe[n], mode.policy, capacity);
    }
    long[] reads = new long[job.epochs];
    long[] hits = new long[job.epochs];
    long peerReads = 0;
    long gets = 0;
    long between = 0;
    boolean cluster = mode != Mode.INDEPENDENT;
    for (int p = 0; p < job.sample.length; p++) {
      int e = p / job.perEpoch;
      int s = job.sample[p];
      int at = job.nodeOf(p);
      int size = job.sizes[s];
      Node reader = nodes[at];
      int id = job.local[p];
      reads[e]++;
      reader.clock.at(p, cluster ? job.next[p] : job.nextOnNode[p]);
      boolean hit = reader.cache.isResident(id);
      reader.cache.accessed(id, hit);
      int h = job.home[s];
      if (hit) {
        hits[e]++;
        if (mode == Mode.CLUSTER_BELADY && h != at) {
          nodes[h].rekey(job.homeIndex[s], p, job.next[p]);
        }
      } else if (!cluster || h == at) {
        gets++;
        reader.cache.admit(id, size);
      } else {
        peerReads++;
        between += size;
        Node home = nodes[h];
        int hid = job.homeIndex[s];
        home.clock.at(p, job.next[p]);
        boolean atHome = home.cache.isResident(hid);
        home.cache.accessed(hid, atHome);
        if (!atHome) {
          gets++;
          home.cache.admit(hid, size);
        }
        reader.cache.admit(id, size, true);
      }
    }
    for (Node n : nodes) {
      n.cache.checkInvariants();
    }
    return new Result(
        mode, job.nodes, cacheFraction, job.samples(), reads, hits, peerReads, gets, between);
  }

  /** One node's cache and the clock its policy reads. */
  private static final class Node {
    final Clock clock = new Clock();
    final Residency cache;

    Node(int universe, String policy, long capacity) {
      CachePolicy p =
          Policies.create(
              policy, new PolicyContext(universe, new Importance(universe), clock, null));
      cache = new Residency(universe, p, capacity, NO_EVENTS);
    }

    /** A homed sample read elsewhere: the home knows its next use from the job's order. */
    void rekey(int id, int position, int nextUse) {
      clock.at(position, nextUse);
      cache.policy().recordAccess(id, cache.isResident(id));
    }
  }

  /** The job clock as a clairvoyant policy sees it: the read now and its sample's next use. */
  private static final class Clock implements NextUse {
    long now = -1;
    long next = NEVER;

    void at(int position, int nextUse) {
      now = position;
      next = nextUse < 0 ? NEVER : nextUse;
    }

    @Override
    public long after(int sample) {
      return next;
    }

    @Override
    public long now() {
      return now;
    }
  }

  private static final Residency.Events NO_EVENTS =
      new Residency.Events() {
        @Override
        public void added(int sample) {}

        @Override
        public void evicting(int sample) {}
      };
}
