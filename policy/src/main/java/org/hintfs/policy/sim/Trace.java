package org.hintfs.policy.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A sequence of sample reads, with the importance hints that arrived between them.
 *
 * <p>Text format, one record per line, '#' starts a comment (the mount writes the same with {@code
 * --trace}):
 *
 * <pre>
 * # hintfs trace v1
 * &lt;epoch&gt; &lt;sample&gt; &lt;size&gt; [&lt;class&gt;] [stream=&lt;id&gt;]   one read (class -1 or absent: unknown;
 *                                               stream: the reader, ignored)
 * loss &lt;sample&gt;=&lt;loss&gt; ...                 one minibatch of losses (SHADE rank scores)
 * importance &lt;sample&gt;=&lt;score&gt; ...           direct scores
 * </pre>
 *
 * Samples are dense ints, optionally written {@code #12}.
 */
public final class Trace {
  /** Hints that arrive before the read at {@code position}. */
  public record ScoreEvent(int position, boolean losses, int[] samples, float[] values) {}

  private int[] epoch = new int[1024];
  private int[] sample = new int[1024];
  private int n;
  private int[] sizes = new int[0];
  private int[] classes = new int[0];
  private final List<ScoreEvent> events = new ArrayList<>();
  private int maxSample = -1;

  /** Appends a read. */
  public Trace read(int ep, int s, int size, int cls) {
    if (n == epoch.length) {
      epoch = Arrays.copyOf(epoch, n * 2);
      sample = Arrays.copyOf(sample, n * 2);
    }
    epoch[n] = ep;
    sample[n] = s;
    n++;
    ensure(s);
    sizes[s] = size;
    if (cls >= 0) {
      classes[s] = cls;
    }
    return this;
  }

  /** Appends a batch of losses or scores, effective before the next read. */
  public Trace scores(boolean losses, int[] samples, float[] values) {
    events.add(new ScoreEvent(n, losses, samples.clone(), values.clone()));
    for (int s : samples) {
      ensure(s);
    }
    return this;
  }

  private void ensure(int s) {
    if (s < 0) {
      throw new IllegalArgumentException("sample ids are >= 0, not " + s);
    }
    if (s > maxSample) {
      maxSample = s;
    }
    if (s >= sizes.length) {
      int cap = Math.max(s + 1, sizes.length * 2);
      int old = classes.length;
      sizes = Arrays.copyOf(sizes, cap);
      classes = Arrays.copyOf(classes, cap);
      Arrays.fill(classes, old, cap, -1);
    }
  }

  public int length() {
    return n;
  }

  /** Number of distinct sample ids the trace may name (max id + 1). */
  public int samples() {
    return maxSample + 1;
  }

  public int epoch(int i) {
    return epoch[i];
  }

  public int sample(int i) {
    return sample[i];
  }

  public int size(int s) {
    return sizes[s];
  }

  /** Each sample's class, -1 where unknown; null if no class is known at all. */
  public int[] classes() {
    int[] c = Arrays.copyOf(classes, samples());
    return Arrays.stream(c).allMatch(x -> x < 0) ? null : c;
  }

  public List<ScoreEvent> events() {
    return events;
  }

  /** Sum of the sizes of the distinct samples read. */
  public long datasetBytes() {
    long sum = 0;
    boolean[] seen = new boolean[samples()];
    for (int i = 0; i < n; i++) {
      if (!seen[sample[i]]) {
        seen[sample[i]] = true;
        sum += sizes[sample[i]];
      }
    }
    return sum;
  }

  /** For each read, the position of the next read of the same sample (or -1). */
  public int[] nextPositions() {
    int[] next = new int[n];
    int[] last = new int[samples()];
    Arrays.fill(last, -1);
    for (int i = n - 1; i >= 0; i--) {
      next[i] = last[sample[i]];
      last[sample[i]] = i;
    }
    return next;
  }

  /** Writes the text format. */
  public void write(Writer w) throws IOException {
    w.write("# hintfs trace v1\n");
    int e = 0;
    for (int i = 0; i <= n; i++) {
      while (e < events.size() && events.get(e).position() == i) {
        ScoreEvent ev = events.get(e++);
        StringBuilder sb = new StringBuilder(ev.losses() ? "loss" : "importance");
        for (int k = 0; k < ev.samples().length; k++) {
          sb.append(' ').append(ev.samples()[k]).append('=').append(ev.values()[k]);
        }
        w.write(sb.append('\n').toString());
      }
      if (i < n) {
        int s = sample[i];
        w.write(epoch[i] + " " + s + " " + sizes[s] + " " + classes[s] + "\n");
      }
    }
  }

  /**
   * Reads the text format.
   *
   * @throws IllegalArgumentException naming the line that is wrong and why
   */
  public static Trace read(BufferedReader r) throws IOException {
    Trace t = new Trace();
    String line;
    int no = 0;
    while ((line = r.readLine()) != null) {
      no++;
      String l = line.strip();
      if (l.isEmpty() || l.startsWith("#")) {
        continue;
      }
      String[] f = l.split("\\s+");
      try {
        if (f[0].equals("loss") || f[0].equals("importance")) {
          int[] ss = new int[f.length - 1];
          float[] vs = new float[f.length - 1];
          for (int k = 1; k < f.length; k++) {
            int eq = f[k].indexOf('=');
            if (eq < 0) {
              throw new IllegalArgumentException("expected <sample>=<value>, got '" + f[k] + "'");
            }
            ss[k - 1] = sampleId(f[k].substring(0, eq));
            vs[k - 1] = Float.parseFloat(f[k].substring(eq + 1));
          }
          t.scores(f[0].equals("loss"), ss, vs);
        } else {
          // A mount's trace adds stream=<id> (which reader opened it): one cache, so ignored.
          int n = f.length > 3 && f[f.length - 1].startsWith("stream=") ? f.length - 1 : f.length;
          if (n < 3 || n > 4) {
            throw new IllegalArgumentException(
                "expected <epoch> <sample> <size> [<class>] [stream=<id>]");
          }
          t.read(
              Integer.parseInt(f[0]),
              sampleId(f[1]),
              Integer.parseInt(f[2]),
              n == 4 ? Integer.parseInt(f[3]) : -1);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("trace line " + no + ": not a number in '" + l + "'");
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("trace line " + no + ": " + e.getMessage());
      }
    }
    return t;
  }

  private static int sampleId(String s) {
    return Integer.parseInt(s.startsWith("#") ? s.substring(1) : s);
  }
}
