package org.hintfs.policy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Deque;
import java.util.List;

/**
 * What the trainer actually received, per epoch: the distinct samples served (a substitute counts
 * as the sample whose bytes were served, the missed one as not served), and the longest run of
 * whole epochs in which any sample of the dataset was never served. Substitution is judged by it.
 *
 * <p>Epochs end when the caller says so ({@link #newEpoch}); with no epoch ever announced, after as
 * many reads as the dataset has samples (a sampler without replacement reads each once an epoch).
 * Thread-safe: every method holds this object's monitor for O(1), except {@link #newEpoch}, which
 * walks the dataset once.
 */
public final class Coverage {
  /** Epochs kept for {@link #epochs()}. */
  public static final int KEPT = 16;

  /** One epoch's figures. */
  public record Epoch(
      int epoch, long reads, int distinct, int datasetSize, long substitutions, boolean complete) {
    /** The share of the dataset served at least once in the epoch. */
    public double coverage() {
      return datasetSize == 0 ? 0 : (double) distinct / datasetSize;
    }
  }

  private final int[] classOf;
  private final int datasetSize;
  private final BitSet served;
  private final byte[] unservedRun;
  private final Deque<Epoch> history = new ArrayDeque<>();
  private int epoch;
  private long reads;
  private int distinct;
  private long substitutions;
  private int longestUnserved;
  private boolean implicitEnded;

  /** Coverage of the samples with a class ({@code classOf[id] >= 0}), starting at {@code epoch}. */
  public Coverage(int[] classOf, int epoch) {
    this.classOf = classOf;
    int n = 0;
    for (int c : classOf) {
      if (c >= 0) {
        n++;
      }
    }
    this.datasetSize = n;
    this.served = new BitSet(classOf.length);
    this.unservedRun = new byte[classOf.length];
    this.epoch = epoch;
  }

  /**
   * The trainer received sample {@code id}'s bytes ({@code substitute}: in place of another's).
   *
   * @return true once per epoch, when an epoch never announced has had as many reads as the dataset
   *     has samples: the caller ends it
   */
  public synchronized boolean served(int id, boolean substitute) {
    reads++;
    if (substitute) {
      substitutions++;
    }
    if (id >= 0 && id < classOf.length && classOf[id] >= 0 && !served.get(id)) {
      served.set(id);
      distinct++;
    }
    if (!implicitEnded && reads >= datasetSize && datasetSize > 0) {
      implicitEnded = true;
      return true;
    }
    return false;
  }

  /** Ends the current epoch and starts {@code next}. */
  public synchronized void newEpoch(int next) {
    history.addLast(current(true));
    while (history.size() > KEPT) {
      history.removeFirst();
    }
    for (int id = 0; id < classOf.length; id++) {
      if (classOf[id] < 0) {
        continue;
      }
      if (served.get(id)) {
        unservedRun[id] = 0;
      } else if (unservedRun[id] < Byte.MAX_VALUE) {
        unservedRun[id]++;
        longestUnserved = Math.max(longestUnserved, unservedRun[id]);
      }
    }
    served.clear();
    reads = 0;
    distinct = 0;
    substitutions = 0;
    implicitEnded = false;
    epoch = next;
  }

  /** Numbers the current epoch {@code e} if nothing was read in it yet; else false. */
  public synchronized boolean renumber(int e) {
    if (reads > 0) {
      return false;
    }
    epoch = e;
    return true;
  }

  private Epoch current(boolean complete) {
    return new Epoch(epoch, reads, distinct, datasetSize, substitutions, complete);
  }

  /** The last {@link #KEPT} epochs, oldest first, the current (incomplete) one last. */
  public synchronized List<Epoch> epochs() {
    List<Epoch> out = new ArrayList<>(history);
    out.add(current(false));
    return out;
  }

  /** The longest run of whole epochs in which some sample was never served (0: none missed). */
  public synchronized int longestUnserved() {
    return longestUnserved;
  }

  /** The epoch being read. */
  public synchronized int epoch() {
    return epoch;
  }

  public int datasetSize() {
    return datasetSize;
  }
}
