package org.hintfs.fs.stream;

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
 * permutation, {@link TorchSamplers#distributedPositions}) and kept for the last few epochs.
 *
 * <p>Without a cluster no one asks: a node's cache serves its own ranks only.
 */
final class JobOrders {
  /** One epoch of one job over one ImageFolder. */
  private record Key(long seed, int world, int epoch, boolean dropLast, ImageFolderView view) {}

  /** Read on every next-use question (lock-free); a few epochs of a few jobs at most. */
  private final Map<Key, int[]> positions = new ConcurrentHashMap<>();

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
    if (id < 0) { // warming: both epochs' positions, off the cache's lock
      positions(sd, s.epoch(), v);
      positions(sd, s.epoch() + step, v);
      return NextUse.NEVER;
    }
    int p = of(sd, s.epoch(), v, id);
    if (p >= 0 && p >= mine) {
      return s.order().timeAt(start + p);
    }
    int q = of(sd, s.epoch() + step, v, id);
    return q >= 0 ? s.order().timeAt(start + len + q) : NextUse.NEVER;
  }

  /** Epochs whose positions are computed now. */
  int ready() {
    return positions.size();
  }

  private int of(SamplerSpec sd, int epoch, ImageFolderView v, int id) {
    int[] pos = positions(sd, epoch, v);
    return id >= 0 && id < pos.length ? pos[id] : -1;
  }

  /** Catalog id -> position in its rank's order, for one epoch of the job. */
  private int[] positions(SamplerSpec sd, int epoch, ImageFolderView v) {
    Key k = new Key(sd.seed(), sd.world(), epoch, sd.dropLast(), v);
    int[] p = positions.get(k);
    if (p != null) {
      return p;
    }
    if (positions.size() >= 8) {
      positions.clear(); // old epochs: recomputed in a few ms should one be asked again
    }
    return positions.computeIfAbsent(k, JobOrders::compute);
  }

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
