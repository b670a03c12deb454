package org.hintfs.fs.control;

import java.util.function.Consumer;
import org.hintfs.fs.stream.SamplerSpec;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.policy.ImageFolderView;

/**
 * Turns a sampler (a seed hint, or a recognised order) into a stream's predicted order: PyTorch's
 * sampler replayed bit for bit ({@link org.hintfs.policy.sampler.TorchSamplers}) for the epoch,
 * plus the head of the next epoch, so the prefetcher carries on into it. The order itself, and the
 * reader's place in it, is the stream's {@link org.hintfs.fs.stream.PredictedOrder}.
 */
final class SamplerReplay {
  private final int entries;
  private final Consumer<Stream> orderChanged;

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
   * before} (a recognised stream moving on by itself, when its reader reached the end), the last
   * window of the old order stays in front, read: the slower workers' last files of the old epoch
   * still arrive after the furthest one, and must not be taken for reads of the new epoch.
   */
  void predict(Stream st, ImageFolderView v, SamplerSpec sd, int epoch, int[] before) {
    int[] ids = replay(v, sd, epoch, Integer.MAX_VALUE);
    int carried = 0;
    if (before != null) {
      carried = Math.min(before.length, Math.max(Streams.MIN_BEHIND, nextHeadLength));
      int[] joined = new int[carried + ids.length];
      System.arraycopy(before, before.length - carried, joined, 0, carried);
      System.arraycopy(ids, 0, joined, carried, ids.length);
      ids = joined;
    }
    st.predict(sd, ids, entries);
    for (int p = 0; p < carried; p++) {
      st.order().markRead(p);
    }
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

  /** The catalog ids the sampler yields in {@code epoch}, the first {@code limit} of them. */
  private static int[] replay(ImageFolderView v, SamplerSpec sd, int epoch, int limit) {
    int n = v.samples();
    int[] samples =
        sd.sampler().equals("random")
            ? org.hintfs.policy.sampler.TorchSamplers.dataLoaderShuffle(
                n, sd.seed(), epoch + 1, sd.persistentWorkers())[epoch]
            : org.hintfs.policy.sampler.TorchSamplers.distributed(
                n, sd.world(), sd.rank(), true, sd.seed(), epoch, sd.dropLast());
    int[] ids = new int[Math.min(limit, samples.length)];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = v.node(samples[i]);
    }
    return ids;
  }
}
