package org.hintfs.fs.control;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.stream.SamplerSpec;
import org.hintfs.fs.stream.Stream;
import org.hintfs.policy.sampler.OrderDetector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recognises the PyTorch sampler order of a stream that sent no hint, from its first reads ({@link
 * OrderDetector}), off the FUSE threads; a recognised order reaches the stream as a {@link
 * Hint.Detected}, applied in order with the other hints (an explicit hint always wins).
 */
public final class RecognitionSearches {
  private static final Logger log = LoggerFactory.getLogger(RecognitionSearches.class);

  private final BiConsumer<Stream, Hint> enqueue;

  private final java.util.concurrent.ExecutorService detector =
      DaemonThreads.pool("order-detector", 1, Thread.MIN_PRIORITY);
  public final LongAdder detections = new LongAdder();
  public final LongAdder detectionSearches = new LongAdder();
  public final LongAdder detectionMicros = new LongAdder();

  /**
   * Opens a hintless stream collects before the search: 128 distinct samples (8 batches of 16),
   * enough that a candidate explaining 90% of them by chance is below 1e-9 on any dataset over a
   * few thousand samples, few enough that the search starts within the first batches.
   */
  public static final int DETECT_AFTER = 128;

  /** Failed searches in a row before a stream stops trying (an unseeded or unknown sampler). */
  public static final int DETECT_ATTEMPTS = 3;

  private final OrderDetector.Options detectOptions = OrderDetector.Options.defaults();

  /** {@code enqueue} queues a hint for a stream, for the hint applier. */
  RecognitionSearches(BiConsumer<Stream, Hint> enqueue) {
    this.enqueue = enqueue;
  }

  /**
   * Notes an open by a stream that sent no hint and has no prediction; after {@link #DETECT_AFTER}
   * distinct samples, searches for the sampler order that explains them, off the FUSE threads.
   */
  public void observe(Stream st, int id) {
    if (st.recognition().hinted()
        || st.order().known()
        || st.recognition().failedSearches() >= DETECT_ATTEMPTS) {
      return;
    }
    st.recognition().noteOpen(id);
    int s = st.sampleOf(id);
    if (s < 0) {
      return;
    }
    int[] seen = st.recognition().observe(s, DETECT_AFTER);
    if (seen == null) {
      return;
    }
    int n = st.view().samples();
    detector.execute(
        () -> {
          long t0 = System.nanoTime();
          var m = OrderDetector.detect(n, seen, detectOptions);
          long micros = (System.nanoTime() - t0) / 1000;
          detectionSearches.increment();
          detectionMicros.add(micros);
          st.recognition().searchDone();
          if (m != null) {
            detections.increment();
            SamplerSpec spec =
                new SamplerSpec(m.generatorSeed(), m.world(), m.rank(), m.sampler(), false, false);
            enqueue.accept(st, new Hint.Detected(spec, 0, m, micros));
          } else {
            st.recognition().setDetectMicros(micros);
            log.info("stream {}: no sampler order explains its first reads", st.id());
          }
        });
  }

  /**
   * A recognised stream read its whole epoch: predict the next (the generator seed + 1 for
   * set_epoch; the same seed if the script was seen not to call it).
   */
  public void advanceDetected(Stream st) {
    var m = st.recognition().detected();
    SamplerSpec spec = st.sampler();
    if (m == null || spec == null || st.recognition().hinted()) {
      return;
    }
    if (st.claimAdvance()) {
      st.recognition().markAdvanced();
      enqueue.accept(
          st, new Hint.Detected(spec, st.epoch() + st.recognition().detectedEpochStep(), m, -1));
    }
  }
}
