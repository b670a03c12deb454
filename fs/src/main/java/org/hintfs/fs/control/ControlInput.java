package org.hintfs.fs.control;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import org.hintfs.fs.concurrent.Blocking;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;

/**
 * Bytes written to {@code /.hintfs/control}, turned into lines, each attributed to its stream,
 * parsed and accepted or rejected whole.
 *
 * <p>Which stream: a line may start with {@code job <name> [rank <r>]}; it then belongs to that
 * named stream (for writers that are not an ancestor of the readers, such as a sidecar). Otherwise
 * it belongs to the stream the writing process (or its nearest owning ancestor) owns; a line that
 * describes a reader ({@code dataset}, {@code seed}, {@code order}, {@code epoch}) from a writer
 * with none starts one.
 */
public final class ControlInput {
  /** Verbs that describe one reader: from a writer with no stream, they start one. */
  private static final Set<String> READER_VERBS =
      Set.of("dataset", "seed", "order", "order+", "epoch");

  /**
   * How long a write with a reader line ({@link #READER_VERBS}) waits for the applier to have
   * applied it before the write returns, at most.
   */
  static final long READER_LINE_WAIT_MS = 2_000;

  private final ControlParser parser;
  private final HintState state;
  private final long readerLineWaitMs;

  public ControlInput(ControlParser parser, HintState state) {
    this(parser, state, READER_LINE_WAIT_MS);
  }

  /** With a bound of its own on how long a reader line's write waits (tests). */
  ControlInput(ControlParser parser, HintState state, long readerLineWaitMs) {
    this.parser = parser;
    this.state = state;
    this.readerLineWaitMs = readerLineWaitMs;
  }

  /**
   * What a write did: the reason its first rejected line was rejected (null if none was), and
   * whether a reader line it queued was still unapplied when its bound passed.
   */
  public record Written(String error, boolean stillApplying) {}

  /**
   * Applies every complete line of {@code data}; a trailing piece waits in {@code partial} (the
   * handle's) for the rest or for {@link #finish}. A write with a line that describes a reader
   * ({@code epoch}, {@code seed}, {@code dataset}, {@code order}) returns once the applier has
   * applied it (at most {@link #READER_LINE_WAIT_MS}): the reader's next opens then belong to what
   * it announced. An {@code epoch} applied late let the new epoch's first opens count in the old
   * one, and a stand-in then served twice in the reader's epoch. If the bound passes first, the
   * write says so ({@link Written#stillApplying}: the writer sees EINPROGRESS) rather than return
   * as if applied. Score lines do not wait: they are queued, in order, when the write returns.
   */
  public Written write(ByteArrayOutputStream partial, byte[] data, long pid) {
    String firstError = null;
    boolean readerLine = false;
    synchronized (partial) {
      int start = 0;
      for (int i = 0; i < data.length; i++) {
        if (data[i] == '\n') {
          partial.write(data, start, i - start);
          Applied a = apply(partial.toString(StandardCharsets.UTF_8), pid);
          firstError = firstError == null ? a.error() : firstError;
          readerLine |= a.readerLine();
          partial.reset();
          start = i + 1;
        }
      }
      partial.write(data, start, data.length - start);
      if (partial.size() > ControlParser.MAX_LINE) {
        String head = partial.toString(StandardCharsets.UTF_8);
        partial.reset();
        state.reject(head, "line longer than " + ControlParser.MAX_LINE);
        firstError = firstError == null ? "line too long" : firstError;
      }
    }
    boolean stillApplying = readerLine && !awaitApplied(); // outside the handle's lock
    if (stillApplying) {
      state.stillApplying.increment();
    }
    return new Written(firstError, stillApplying);
  }

  /**
   * Waits for the applier (its own thread) to apply what this write handed it, within the bound.
   */
  private boolean awaitApplied() {
    Blocking.begin();
    try {
      return state.awaitApplied(readerLineWaitMs);
    } finally {
      Blocking.end();
    }
  }

  /** How long a write of a reader line waits for it to be applied, at most. */
  public long readerLineWaitMs() {
    return readerLineWaitMs;
  }

  /** The handle is closing: its unfinished last line is applied now. */
  public void finish(ByteArrayOutputStream partial, long pid) {
    synchronized (partial) {
      if (partial.size() > 0) {
        applyLine(partial.toString(StandardCharsets.UTF_8), pid);
        partial.reset();
      }
    }
  }

  /** Parses and queues one line from {@code pid}; returns the reason it was rejected, or null. */
  public String applyLine(String line, long pid) {
    return apply(line, pid).error();
  }

  /**
   * What applying one line did: the reason it was rejected (null if it was not), and whether it
   * queued a line that describes a reader (see {@link #write}).
   */
  private record Applied(String error, boolean readerLine) {
    static final Applied NOTHING = new Applied(null, false);
  }

  /** {@link #applyLine(String, long)}, telling whether it queued a reader line. */
  private Applied apply(String line, long pid) {
    try {
      String rest = line.strip();
      String job = null;
      int rank = 0;
      boolean namedRank = false;
      String[] f = rest.split("\\s+", 5);
      if (f[0].equals("job")) {
        if (f.length < 3) {
          throw new InvalidHintException("usage: job <name> [rank <r>] <hint line>");
        }
        job = f[1];
        int skip = 2;
        if (f[2].equals("rank")) {
          if (f.length < 5) {
            throw new InvalidHintException("usage: job <name> rank <r> <hint line>");
          }
          rank = rankOf(f[3]);
          namedRank = true;
          skip = 4;
        }
        rest = rest.split("\\s+", skip + 1)[skip];
      }
      String verb = rest.isEmpty() ? "" : rest.split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
      if (verb.isEmpty() || verb.startsWith("#")) {
        return Applied.NOTHING;
      }
      if (job != null && !namedRank && verb.equals("seed")) {
        rank = seedRank(rest); // "job sweep seed 1 world 4 rank 2": the seed names the rank
      }
      Stream writer = state.streams().forWriter(pid, job, rank, false);
      Hint h = parser.parse(rest, state.viewFor(writer));
      if (h != null) {
        if (h instanceof Hint.Seed sd && job != null && sd.spec().rank() != rank) {
          throw new InvalidHintException(
              "the line names rank " + rank + " but its seed hint rank " + sd.spec().rank());
        }
        if (writer == null && READER_VERBS.contains(verb)) {
          // Only a line that was accepted starts a stream: a rejected one leaves nothing behind.
          writer = state.streams().forWriter(pid, job, rank, true);
        }
        state.accept(h, verb, writer);
        return new Applied(null, READER_VERBS.contains(verb));
      }
      return Applied.NOTHING;
    } catch (InvalidHintException | Streams.TooManyStreamsException e) {
      state.reject(line, e.getMessage());
      return new Applied(e.getMessage(), false);
    }
  }

  /** The rank a seed line names (0 if none or not a number: the parser reports that). */
  private static int seedRank(String seedLine) {
    String[] t = seedLine.split("\\s+");
    for (int i = 0; i + 1 < t.length; i++) {
      if (t[i].equals("rank")) {
        try {
          return Math.max(0, Integer.parseInt(t[i + 1]));
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  private static int rankOf(String s) {
    try {
      int r = Integer.parseInt(s);
      if (r >= 0) {
        return r;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new InvalidHintException("rank must be a whole number >= 0, not '" + s + "'");
  }
}
