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
 * a little out of order. A handle keeps the last {@link #STREAMS} ranges its READs covered; a READ
 * within {@link #NEAR} of one's end continues that stream, any other starts a new one: a seek.
 *
 * <p>Random or sequential: a READ that starts a stream past the file's first {@link #NEAR} bytes,
 * and the READs that continue it until it has read {@link #SEQUENTIAL_RUN}, are served by pages
 * (the kernel's own read-ahead continues a random READ; mountpoint-s3 too starts a reader with a
 * small request). A handle is sequential until its second seek (gcsfuse switches after two as
 * well), random from then on, and sequential again once one of its streams has read {@link
 * #SEQUENTIAL_RUN} bytes on end (its range, first byte to last). A file whose last handle was
 * random starts its next handles random (a DataLoader's workers each open it; a reader's first READ
 * at offset 0, its header, would otherwise fetch a block and read ahead another). A READ of a
 * random handle, and any seek, is served by pages ({@code TieredCache#readPages}); the others as
 * blocks, read ahead as before.
 *
 * <p>How much a random miss fetches ({@link Verdict#want}): at least the READ, and at least the
 * reader's usual run, the average (EWMA) of the bytes its streams read between seeks, so a reader
 * of 1 MiB records makes one GET per record, as gcsfuse sizes its random reads to the bytes read
 * per seek; a READ that continues a stream asks as far ahead as the stream has read, up to a block.
 * Memory: a few longs per handle, and the ids of up to {@link #RECENT} random files.
 */
final class ReadPattern {
  /**
   * A READ this close to where a stream ended, before or after, continues it: the kernel's READs of
   * one stream come a little out of order (its read-ahead has a few of 128 KiB in flight).
   */
  static final long NEAR = 512 << 10;

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

  /**
   * How one READ is served: by pages ({@code paged}), fetching at least {@code want} bytes; {@code
   * turnedRandom} on the READ that made its handle random.
   */
  record Verdict(boolean paged, int want, boolean turnedRandom) {}

  /** One handle's streams. Guarded by the handle ({@code synchronized (SampleHandle)}). */
  static final class Streams {
    final long[] starts = new long[STREAMS];
    final long[] ends = new long[STREAMS];
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
        s.starts[at] = Math.min(s.starts[at], offset);
        s.ends[at] = Math.max(s.ends[at], offset + length);
        run = s.ends[at] - s.starts[at];
      } else {
        int slot = s.used < STREAMS ? s.used++ : s.next;
        s.next = (slot + 1) % STREAMS;
        long ended = s.ends[slot] - s.starts[slot];
        if (ended > 0) {
          s.usualRun = s.usualRun == 0 ? ended : (3 * s.usualRun + ended) / 4;
        }
        s.starts[slot] = offset;
        s.ends[slot] = offset + length;
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
      // A stream that began past the file's start is paged until it has read on far enough to
      // be a sequential reader's: the kernel's read-ahead after a random READ continues it.
      boolean young = at >= 0 && s.starts[at] >= NEAR && run < SEQUENTIAL_RUN;
      v =
          new Verdict(
              s.random || !continues || young, (int) Math.min(blockSize, want), becameRandom);
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
