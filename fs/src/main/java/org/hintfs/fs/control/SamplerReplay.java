package org.hintfs.fs.control;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.hintfs.fs.stream.SamplerSpec;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.sampler.ShuffleReplay;
import org.hintfs.policy.sampler.TorchSamplers;

/**
 * Turns a sampler (a seed hint, or a recognised order) into a stream's predicted order: PyTorch's
 * sampler replayed bit for bit ({@link TorchSamplers}, {@link ShuffleReplay}) for the epoch, plus
 * the head of the next epoch, so the prefetcher carries on into it. Per epoch, at any epoch: one
 * permutation of n, the head from its first draws alone. The order itself, and the reader's place
 * in it, is the stream's {@link org.hintfs.fs.stream.PredictedOrder}.
 */
final class SamplerReplay {
  private final int entries;
  private final Consumer<Stream> orderChanged;
  private final Shuffles shuffles = new Shuffles();

  /** How much of the next epoch is predicted ahead: the prefetch window (set by the mount). */
  private volatile int nextHeadLength = 256;

  /** {@code orderChanged} is told of each stream whose order was replaced. */
  SamplerReplay(int entries, Consumer<Stream> orderChanged) {
    this.entries = entries;
    this.orderChanged = orderChanged;
  }

  void setNextHeadLength(int n) {
    nextHeadLength = Math.max(0, n);
  }

  /**
   * Replays the sampler for {@code epoch} and makes it the stream's predicted order. With {@code
   * before} (a recognised stream moving on by itself, when its furthest reader reached the end),
   * the old order's tail from its oldest unread position (at least a window) stays in front, read
   * where it was read: the slower workers' last files of the old epoch still arrive after the
   * furthest one (with batch 256 and 4 workers, up to 2,048 positions behind it), and must be taken
   * for what they are, not for reads of the new epoch (which moved the new order's position on by
   * chance matches and had it dropped as stale).
   */
  void predict(Stream st, ImageFolderView v, SamplerSpec sd, int epoch, int[] before) {
    int[] ids = wholeEpoch(v, sd, epoch);
    int carried = 0;
    boolean[] wasRead = null;
    if (before != null) {
      int unread = before == st.order().order() ? before.length - st.order().lowMark() : 0;
      carried =
          Math.min(before.length, Math.max(unread, Math.max(Streams.MIN_BEHIND, nextHeadLength)));
      wasRead = new boolean[carried];
      for (int p = 0; p < carried; p++) {
        wasRead[p] = before != st.order().order() || st.order().isRead(before.length - carried + p);
      }
      int[] joined = new int[carried + ids.length];
      System.arraycopy(before, before.length - carried, joined, 0, carried);
      System.arraycopy(ids, 0, joined, carried, ids.length);
      ids = joined;
    }
    st.predict(sd, ids, entries);
    for (int p = 0; p < carried; p++) {
      if (wasRead[p]) {
        st.order().markRead(p);
      }
    }
    st.setCarried(carried);
    st.order().startAt(carried);
    // What set_epoch(epoch + 1) will read first: the prefetcher carries on into it. A recognised
    // script seen not to call set_epoch reads the same order again.
    int step =
        !st.recognition().hinted() && st.recognition().detected() != null
            ? st.recognition().detectedEpochStep()
            : 1;
    st.order().setNextHead(replay(v, sd, epoch + step, nextHeadLength));
    orderChanged.accept(st);
  }

  /**
   * Whole epochs replayed, by sampler, epoch and dataset, while a stream still holds them: streams
   * reading the same order (jobs of one seed) get the same array, and with it share its lookup
   * tables ({@link org.hintfs.fs.stream.PredictedOrder}), instead of one copy of each per stream.
   */
  private record Epoch(
      String sampler,
      long seed,
      int world,
      int rank,
      boolean flag,
      int epoch,
      ImageFolderView view) {}

  private final Map<Epoch, java.lang.ref.WeakReference<int[]>> epochs = new java.util.HashMap<>();

  /** {@link #replay} of a whole epoch, shared with any stream that holds the same one. */
  private int[] wholeEpoch(ImageFolderView v, SamplerSpec sd, int epoch) {
    boolean random = sd.sampler().equals("random");
    Epoch k =
        new Epoch(
            sd.sampler(),
            sd.seed(),
            random ? 1 : sd.world(),
            random ? 0 : sd.rank(),
            random ? sd.persistentWorkers() : sd.dropLast(),
            epoch,
            v);
    synchronized (epochs) {
      java.lang.ref.WeakReference<int[]> held = epochs.get(k);
      int[] ids = held == null ? null : held.get();
      if (ids != null) {
        return ids;
      }
      epochs.values().removeIf(r -> r.get() == null);
    }
    int[] ids = replay(v, sd, epoch, Integer.MAX_VALUE);
    synchronized (epochs) {
      epochs.put(k, new java.lang.ref.WeakReference<>(ids));
    }
    return ids;
  }

  /**
   * The catalog ids the sampler yields in {@code epoch}, the first {@code limit} of them: a shuffle
   * from its job's kept generator ({@link ShuffleReplay}: one permutation of n per epoch at any
   * epoch), a head from the first draws alone.
   */
  private int[] replay(ImageFolderView v, SamplerSpec sd, int epoch, int limit) {
    int n = v.samples();
    int[] samples;
    if (sd.sampler().equals("random")) {
      ShuffleReplay r = shuffles.of(n, sd.seed(), sd.persistentWorkers());
      samples = limit >= n ? r.epoch(epoch) : r.head(epoch, limit);
    } else if (limit >= TorchSamplers.distributedLength(n, sd.world(), sd.dropLast())) {
      samples =
          TorchSamplers.distributed(
              n, sd.world(), sd.rank(), true, sd.seed(), epoch, sd.dropLast());
    } else {
      samples =
          TorchSamplers.distributedHead(
              n, sd.world(), sd.rank(), sd.seed(), epoch, sd.dropLast(), limit);
    }
    for (int i = 0; i < samples.length; i++) {
      samples[i] = v.node(samples[i]); // in place: the replayed array is this call's own
    }
    return samples;
  }

  /**
   * The shuffles replayed, by dataset size, seed and persistent_workers: the last few jobs' kept
   * generators (a few KB each), so each job's next epoch starts where its last one ended.
   */
  private static final class Shuffles {
    private static final int KEPT = 16;

    private record Key(int n, long seed, boolean persistentWorkers) {}

    private final Map<Key, ShuffleReplay> byKey =
        new LinkedHashMap<>(KEPT, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Key, ShuffleReplay> eldest) {
            return size() > KEPT;
          }
        };

    synchronized ShuffleReplay of(int n, long seed, boolean persistentWorkers) {
      return byKey.computeIfAbsent(
          new Key(n, seed, persistentWorkers), k -> new ShuffleReplay(n, seed, persistentWorkers));
    }
  }
}
