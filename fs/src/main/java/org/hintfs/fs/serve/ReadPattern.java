package org.hintfs.fs.serve;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tells a large file's random readers from its sequential ones, per handle, and sizes a random
 * reader's fetches: packed datasets (token bins read through {@code numpy.memmap}, HDF5, LMDB,
 * Arrow) are large files read at random offsets, where fetching a whole block per miss brought in
 * 11-687x the bytes read (issue 61).
 *
 * <p>Streams: the kernel's READs of one handle come from several threads of the reader (a
 * DataLoader's workers share a memory-mapped file's handle), each reading on from where it was, and
 * a little out of order. A handle keeps the last {@link #STREAMS} places its READs ended; a READ
 * within {@link #NEAR} of one continues that stream, any other starts a new one: a seek.
 *
 * <p>Random or sequential: a handle is sequential until its second seek (gcsfuse switches after two
 * as well), random from then on, and sequential again once one of its streams has read {@link
 * #SEQUENTIAL_RUN} bytes on end. A file whose last handle was random starts its next handles random
 * (a DataLoader's workers each open it; a reader's first READ at offset 0, its header, would
 * otherwise fetch a block and read ahead another). A READ of a random handle, and any seek, is
 * served by pages ({@code TieredCache#readPages}); the others as blocks, read ahead as before.
 *
 * <p>How much a random miss fetches ({@link Verdict#want}): at least the READ, and at least the
 * reader's usual run, the average (EWMA) of the bytes its streams read between seeks, so a reader
 * of 1 MiB records makes one GET per record, as gcsfuse sizes its random reads to the bytes read
 * per seek; a READ that continues a stream asks as far ahead as the stream has read, up to a block.
 * Memory: a few longs per handle, and the ids of up to {@link #RECENT} random files.
 */
final class ReadPattern {
  /** A READ this close to where a stream ended continues it (the kernel's READs overlap a bit). */
  static final long NEAR = 1 << 20;

  /** Streams a handle keeps: a DataLoader's workers on one memory-mapped file, with room. */
  static final int STREAMS = 8;

  /** A stream that reads this far on end makes its handle sequential (half a default block). */
  static final long SEQUENTIAL_RUN = 4L << 20;

  /** Random files remembered for their next handles. */
  static final int RECENT = 1024;

  private final int blockSize;

  /** Files whose last handle was random, most recent last. Guarded by itself. */
  private final Map<Integer, Boolean> randomFiles =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> e) {
          return size() > RECENT;
        }
      };

  ReadPattern(int blockSize) {
    this.blockSize = blockSize;
  }

  /** How one READ is served: by pages ({@code paged}), fetching at least {@code want} bytes. */
  record Verdict(boolean paged, int want) {}

  /** One handle's streams. Guarded by the handle ({@code synchronized (SampleHandle)}). */
  static final class Streams {
    final long[] ends = new long[STREAMS];
    final long[] runs = new long[STREAMS];
    int used;
    int next;
    int seeks;
    boolean random;
    boolean started;
    long usualRun;
  }

  /** Classifies a READ of {@code length} bytes at {@code offset} of {@code h}'s large file. */
  Verdict classify(SampleHandle h, long offset, int length) {
    boolean becameSequential = false;
    boolean becameRandom = false;
    Verdict v;
    synchronized (h) {
      Streams s = h.streams;
      if (!s.started) {
        s.started = true;
        synchronized (randomFiles) {
          s.random = randomFiles.containsKey(h.id);
        }
      }
      int at = -1;
      long best = NEAR + 1;
      for (int i = 0; i < s.used; i++) {
        long d = Math.abs(offset - s.ends[i]);
        if (d < best) {
          best = d;
          at = i;
        }
      }
      boolean continues = at >= 0 || (s.used == 0 && offset < NEAR); // a reader from the start
      long run;
      if (at >= 0) {
        s.runs[at] += length;
        s.ends[at] = Math.max(s.ends[at], offset + length);
        run = s.runs[at];
      } else {
        int slot = s.used < STREAMS ? s.used++ : s.next;
        s.next = (slot + 1) % STREAMS;
        if (s.runs[slot] > 0) {
          s.usualRun = s.usualRun == 0 ? s.runs[slot] : (3 * s.usualRun + s.runs[slot]) / 4;
        }
        s.ends[slot] = offset + length;
        s.runs[slot] = length;
        run = 0;
        if (!continues && ++s.seeks >= 2 && !s.random) {
          s.random = true;
          becameRandom = true;
        }
      }
      if (s.random && run >= SEQUENTIAL_RUN) {
        s.random = false;
        s.seeks = 0;
        becameSequential = true;
      }
      long want = Math.max(length, Math.max(s.usualRun, run));
      v = new Verdict(s.random || !continues, (int) Math.min(blockSize, want));
    }
    if (becameRandom || becameSequential) {
      synchronized (randomFiles) {
        if (becameRandom) {
          randomFiles.put(h.id, Boolean.TRUE);
        } else {
          randomFiles.remove(h.id);
        }
      }
    }
    return v;
  }
}
