package org.hintfs.fs.stream;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.NextUse;
import org.hintfs.policy.sampler.TorchSamplers;

/**
 * The next use of a sample by any rank of the jobs read here, not only by the ranks on this node:
 * the clock a home's policy needs in a cluster, where the samples it keeps are read by every node.
 *
 * <p>A rank of a DistributedSampler job that this node knows (by a seed hint or by recognising its
 * order) gives the whole job: the seed, the world and the epoch fix every rank's order, and DDP
 * keeps the ranks in lockstep, so the rank at position {@code k} of its order is where every other
 * rank is. A sample at position {@code p} of any rank's order is read at this stream's time of
 * position {@code p} (same epoch start); one read already this epoch is next read in the next
 * epoch. The job's positions are one int per catalog entry per epoch, computed once (one
 * permutation, {@link TorchSamplers#distributedPositions}) and kept for the last {@link #KEPT}
 * epochs computed (of any job), the oldest dropped first.
 *
 * <p>Computed only when a stream's order is set, on the hint applier ({@link #warm}), never when
 * the cache asks under its index lock: an epoch not computed (yet, or any more) counts only this
 * node's own ranks, which their own orders answer.
 *
 * <p>Without a cluster no one asks: a node's cache serves its own ranks only.
 */
final class JobOrders {
  /** One epoch of one job over one ImageFolder. */
  private record Key(long seed, int world, int epoch, boolean dropLast, ImageFolderView view) {}

  /** Epochs kept: the current and next epoch of 4 jobs (5 MB each at 1.28 M files). */
  static final int KEPT = 8;

  /** Read on every next-use question (lock-free). */
  private final Map<Key, int[]> positions = new ConcurrentHashMap<>();

  /** The keys of {@link #positions}, oldest computed first (guarded by itself). */
  private final ArrayDeque<Key> computed = new ArrayDeque<>();

  /** The soonest read of catalog id {@code id} by any rank of {@code s}'s job, or NEVER. */
  long after(Stream s, int id) {
    SamplerSpec sd = s.sampler();
    ImageFolderView v = s.view();
    int[] order = s.order().order();
    if (sd == null
        || v == null
        || order == null
        || sd.world() <= 1
        || !"distributed".equals(sd.sampler())) {
      return NextUse.NEVER;
    }
    int n = v.samples();
    int len = TorchSamplers.distributedLength(n, sd.world(), sd.dropLast());
    // The order is [the old epoch's tail, carried for slow workers][this epoch][nothing more].
    int start = order.length - len;
    if (start < 0) {
      return NextUse.NEVER;
    }
    int mine = s.order().position() - start;
    int step =
        !s.recognition().hinted() && s.recognition().detected() != null
            ? s.recognition().detectedEpochStep()
            : 1;
    int p = of(sd, s.epoch(), v, id);
    if (p >= 0 && p >= mine) {
      return s.order().timeAt(start + p);
    }
    int q = of(sd, s.epoch() + step, v, id);
    return q >= 0 ? s.order().timeAt(start + len + q) : NextUse.NEVER;
  }

  /**
   * Computes the positions of {@code s}'s job for its epoch and the next (on the hint applier, off
   * the cache's lock), dropping the oldest beyond {@link #KEPT}.
   */
  void warm(Stream s) {
    SamplerSpec sd = s.sampler();
    ImageFolderView v = s.view();
    if (sd == null || v == null || sd.world() <= 1 || !"distributed".equals(sd.sampler())) {
      return;
    }
    int step =
        !s.recognition().hinted() && s.recognition().detected() != null
            ? s.recognition().detectedEpochStep()
            : 1;
    warm(new Key(sd.seed(), sd.world(), s.epoch(), sd.dropLast(), v));
    warm(new Key(sd.seed(), sd.world(), s.epoch() + step, sd.dropLast(), v));
  }

  private void warm(Key k) {
    synchronized (computed) {
      if (positions.containsKey(k)) {
        return;
      }
    }
    int[] p = compute(k); // not under any lock: the applier is the only thread here
    synchronized (computed) {
      if (positions.putIfAbsent(k, p) == null) {
        computed.addLast(k);
      }
      while (computed.size() > KEPT) {
        positions.remove(computed.removeFirst());
      }
    }
  }

  /** Epochs whose positions are computed now. */
  int ready() {
    return positions.size();
  }

  /**
   * The position of {@code id} in its rank's order in {@code epoch}; -1 if none or not computed.
   */
  private int of(SamplerSpec sd, int epoch, ImageFolderView v, int id) {
    int[] pos = positions.get(new Key(sd.seed(), sd.world(), epoch, sd.dropLast(), v));
    return pos != null && id >= 0 && id < pos.length ? pos[id] : -1;
  }

  /** Catalog id -> position in its rank's order, for one epoch of the job. */
  private static int[] compute(Key k) {
    ImageFolderView v = k.view();
    int n = v.samples();
    int[] bySample =
        TorchSamplers.distributedPositions(n, k.world(), true, k.seed(), k.epoch(), k.dropLast());
    int maxNode = 0;
    for (int s = 0; s < n; s++) {
      maxNode = Math.max(maxNode, v.node(s));
    }
    int[] byId = new int[maxNode + 1];
    Arrays.fill(byId, -1);
    for (int s = 0; s < n; s++) {
      byId[v.node(s)] = bySample[s];
    }
    return byId;
  }
}
