package org.hintfs.fs.stream;

import java.util.Arrays;
import org.hintfs.policy.sampler.OrderDetector;

/**
 * One stream's recognition, the state: recognising a stream's order from its reads (for a stream
 * that sent no seed or order hint; see {@code RecognitionSearches}): the opens collected for the
 * next search, the searches run, the match in force and how the prediction moves on to the next
 * epoch. The searches run in {@code control.RecognitionSearches}; what matches is {@code
 * policy.sampler.OrderDetector}'s to say.
 */
public final class StreamRecognition {
  private volatile boolean hinted;
  private int[] observed = new int[0];
  private int observedCount;
  private volatile int detectAttempts;
  private volatile OrderDetector.Match detected;
  private volatile long detectMicros;
  private volatile int detectedEpochStep = 1;

  /** True once the stream's writer sent a seed or order hint: that wins over any recognition. */
  public boolean hinted() {
    return hinted;
  }

  /** Marks that a seed or order hint arrived from the stream's writer. */
  public void markHinted() {
    hinted = true;
  }

  /**
   * Notes a sample this stream opened while it has no prediction.
   *
   * @return the first {@code k} distinct samples once there are that many (then starts afresh),
   *     else null
   */
  public synchronized int[] observe(int sample, int k) {
    if (searching) {
      return null; // a search of earlier opens is running
    }
    if (observed.length != k) {
      observed = new int[k];
      observedCount = 0;
    }
    for (int i = 0; i < observedCount; i++) {
      if (observed[i] == sample) {
        return null;
      }
    }
    observed[observedCount++] = sample;
    if (observedCount < k) {
      return null;
    }
    observedCount = 0;
    detectAttempts++;
    failedSearches++;
    searching = true;
    return observed.clone();
  }

  private boolean searching;

  /** How many of the opens before a recognition {@link #noteOpen} keeps: the latest ones. */
  public static final int OPENS_KEPT = 4096;

  private int[] opened;
  private long openedCount;

  /**
   * Notes a file (catalog id) the stream opened while it had no order, to be marked read once one
   * is recognised ({@link Stream#markOpenedBeforeOrderRead}).
   */
  public synchronized void noteOpen(int id) {
    if (opened == null) {
      opened = new int[OPENS_KEPT];
    }
    opened[(int) (openedCount++ % OPENS_KEPT)] = id;
  }

  /** The files {@link #noteOpen} kept (the latest {@link #OPENS_KEPT}), and forgets them. */
  public synchronized int[] takeOpened() {
    if (opened == null) {
      return new int[0];
    }
    int[] out = Arrays.copyOf(opened, (int) Math.min(openedCount, OPENS_KEPT));
    opened = null;
    openedCount = 0;
    return out;
  }

  /** The search of the opens {@link #observe} handed out has finished. */
  public synchronized void searchDone() {
    searching = false;
  }

  private volatile int failedSearches;

  /** Searches in a row that found nothing (a success starts the count again). */
  public int failedSearches() {
    return failedSearches;
  }

  /** How many searches ran for this stream. */
  public int detectAttempts() {
    return detectAttempts;
  }

  /** The recognised order in force, or null. */
  public OrderDetector.Match detected() {
    return detected;
  }

  /** Records a recognition: the match and how long the search took. */
  public void setDetected(OrderDetector.Match m, long micros) {
    OrderDetector.Match before = detected;
    if (before != null
        && m != null
        && advanced
        && before.generatorSeed() == m.generatorSeed()
        && before.sampler().equals(m.sampler())) {
      // The same generator seed again after moving on to the next epoch: the script does not
      // call set_epoch.
      detectedEpochStep = 0;
    }
    advanced = false;
    failedSearches = 0;
    detected = m;
    detectMicros = micros;
    catchUp = true;
  }

  private volatile boolean advanced;
  private volatile boolean catchUp;

  /** Notes that the prediction moved on to the next epoch by itself. */
  public void markAdvanced() {
    advanced = true;
  }

  /**
   * True once after a fresh recognition: the search ran while the reader read on, so its first open
   * after the prediction arrives may be anywhere ahead in the order, and places the reader.
   */
  public boolean takeCatchUp() {
    if (!catchUp) {
      return false;
    }
    catchUp = false;
    return true;
  }

  /** Records how long a search that found nothing took. */
  public void setDetectMicros(long micros) {
    detectMicros = micros;
  }

  /** How long the last search took, in microseconds. */
  public long detectMicros() {
    return detectMicros;
  }

  /** 1 if the next epoch's seed is this one's + 1 (set_epoch), 0 if the script never calls it. */
  public int detectedEpochStep() {
    return detectedEpochStep;
  }
}
