package org.hintfs.fs.control;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.Policies;

/**
 * Parses one control line into a {@link Hint}, checking everything that can be checked now (syntax,
 * numbers, that every sample exists), so that a line is either applied whole or rejected whole with
 * a reason.
 *
 * <pre>
 * dataset &lt;dir&gt;                         ImageFolder root that #indices refer to
 * loss &lt;sample&gt;=&lt;loss&gt; ...              one minibatch of per-sample losses
 * importance &lt;sample&gt;=&lt;score&gt; ...       direct scores
 * epoch &lt;e&gt;                             a new epoch begins
 * similar &lt;sample&gt; &lt;neighbour&gt; ...      neighbours a missed sample may be substituted with
 * substitution off | on [max &lt;fraction&gt;] [reuse] [from-start]
 * policy &lt;name&gt;
 * trace on|off
 * seed &lt;s&gt; [epoch &lt;e&gt;] [world &lt;w&gt; rank &lt;r&gt;] [sampler distributed|random] [drop_last]
 * order &lt;sample&gt; ... / order+ &lt;sample&gt; ...   the writer's upcoming order / more of it
 * prefetch &lt;path&gt;                      fetch every file under path (admin; also: prefetch cancel)
 * evict &lt;path&gt;                         drop every file under path from the cache
 * pin &lt;path&gt; / unpin &lt;path&gt;            never evict (and fetch) / evict again as usual
 * packed &lt;path&gt; &lt;base&gt; &lt;stride&gt; &lt;count&gt; seed &lt;s&gt; [epoch &lt;e&gt;] [persistent_workers]
 *                                      a packed file's fixed-size samples and their shuffle
 * </pre>
 *
 * {@code <sample>} is {@code #<index>} (ImageFolder index under the declared dataset) or a path
 * relative to the mount root.
 */
public final class ControlParser {
  /** A longer line is refused: 1 MiB holds a 256-sample batch many times over. */
  public static final int MAX_LINE = 1 << 20;

  private final Catalog catalog;
  private final HintState state;

  public ControlParser(Catalog catalog, HintState state) {
    this.catalog = catalog;
    this.state = state;
  }

  /**
   * Parses a line (without its newline).
   *
   * @return the hint, or null for a blank or comment line
   * @throws InvalidHintException saying what is wrong
   */
  public Hint parse(String line, ImageFolderView view) {
    if (line.length() > MAX_LINE) {
      throw new InvalidHintException("line longer than " + MAX_LINE + " bytes");
    }
    String l = line.strip();
    if (l.isEmpty() || l.startsWith("#")) {
      return null;
    }
    String[] f = l.split("\\s+");
    String verb = f[0].toLowerCase(Locale.ROOT);
    switch (verb) {
      case "dataset":
        return dataset(f, l);
      case "loss":
      case "importance":
        return scores(verb, f, view);
      case "epoch":
        need(f, 2, 2, "epoch <e>");
        return new Hint.Epoch(nonNegativeInt(f[1], "epoch"));
      case "similar":
        return similar(f, view);
      case "substitution":
        return SubstitutionAndCoverage.parse(f, view);
      case "policy":
        need(f, 2, 2, "policy <name>");
        if (!Policies.names().contains(f[1])) {
          throw new InvalidHintException(
              "unknown policy '"
                  + f[1]
                  + "': choose one of "
                  + String.join(", ", Policies.names()));
        }
        return new Hint.Policy(f[1]);
      case "trace":
        need(f, 2, 2, "trace on|off");
        return new Hint.Trace(onOff(f[1]));
      case "seed":
        return seed(f, view);
      case "order":
      case "order+":
        if (f.length < 2) {
          throw new InvalidHintException("usage: " + verb + " <sample> ...");
        }
        int[] ids = new int[f.length - 1];
        for (int k = 1; k < f.length; k++) {
          ids[k - 1] = sample(f[k], view);
        }
        return new Hint.Order(ids, verb.equals("order+"));
      case "packed":
        return packed(f);
      case "prefetch":
      case "evict":
      case "pin":
      case "unpin":
        return admin(verb, l);
      default:
        throw new InvalidHintException(
            "unknown hint '"
                + f[0]
                + "': expected dataset, loss, importance, epoch, seed, order, order+, similar,"
                + " substitution, policy, trace, prefetch, evict, pin, unpin or packed");
    }
  }

  /** An admin line: the verb, then one path (the rest of the line, spaces and all). */
  private Hint admin(String verb, String line) {
    String path = line.substring(verb.length()).strip();
    if (path.isEmpty()) {
      throw new InvalidHintException("usage: " + verb + " <path in the mount>");
    }
    if (verb.equals("prefetch") && path.equals("cancel")) {
      return new Hint.Admin(Hint.AdminVerb.CANCEL, path, new int[0]);
    }
    String rel = normalize(path);
    int id = catalog.lookup(rel);
    if (id < 0) {
      throw new InvalidHintException(
          verb + " " + path + ": no such file or directory in the mount");
    }
    return new Hint.Admin(
        Hint.AdminVerb.valueOf(verb.toUpperCase(Locale.ROOT)), rel, filesUnder(catalog, id));
  }

  /** Every file at or under {@code id}, in catalog order. */
  public static int[] filesUnder(Catalog catalog, int id) {
    if (!catalog.isDirectory(id)) {
      return new int[] {id};
    }
    int[] out = new int[16];
    int n = 0;
    java.util.ArrayDeque<Integer> dirs = new java.util.ArrayDeque<>();
    dirs.add(id);
    while (!dirs.isEmpty()) {
      int d = dirs.poll();
      for (int i = 0, k = catalog.childCount(d); i < k; i++) {
        int c = catalog.child(d, i);
        if (catalog.isDirectory(c)) {
          dirs.add(c);
        } else {
          if (n == out.length) {
            out = java.util.Arrays.copyOf(out, 2 * n);
          }
          out[n++] = c;
        }
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  private Hint dataset(String[] f, String line) {
    if (f.length < 2) {
      throw new InvalidHintException("usage: dataset <dir>");
    }
    String dir = line.substring("dataset".length()).strip();
    int root = catalog.lookup(normalize(dir));
    if (root < 0 || !catalog.isDirectory(root)) {
      throw new InvalidHintException("dataset " + dir + ": no such directory in the mount");
    }
    try {
      // The catalog does not change while mounted: every rank declaring the same root shares one
      // view, built once.
      ImageFolderView v = state.view(catalog, root);
      return new Hint.Dataset(dir, v, root);
    } catch (IllegalArgumentException e) {
      throw new InvalidHintException("dataset " + dir + ": " + e.getMessage());
    }
  }

  private Hint scores(String verb, String[] f, ImageFolderView view) {
    if (f.length < 2) {
      throw new InvalidHintException("usage: " + verb + " <sample>=<value> ...");
    }
    int n = f.length - 1;
    int[] ids = new int[n];
    float[] vs = new float[n];
    for (int k = 0; k < n; k++) {
      String t = f[k + 1];
      int eq = t.lastIndexOf('=');
      if (eq <= 0 || eq == t.length() - 1) {
        throw new InvalidHintException("expected <sample>=<value>, got '" + t + "'");
      }
      ids[k] = sample(t.substring(0, eq), view);
      try {
        vs[k] = Float.parseFloat(t.substring(eq + 1));
      } catch (NumberFormatException e) {
        throw new InvalidHintException(
            "not a number: '" + t.substring(eq + 1) + "' in '" + t + "'");
      }
      if (Float.isNaN(vs[k]) || Float.isInfinite(vs[k])) {
        throw new InvalidHintException("value must be finite: '" + t + "'");
      }
    }
    return verb.equals("loss") ? new Hint.Losses(ids, vs) : new Hint.Scores(ids, vs);
  }

  /** {@code seed <s> [epoch <e>] [world <w> rank <r>] [sampler distributed|random] [drop_last]}. */
  private Hint seed(String[] f, ImageFolderView view) {
    String usage =
        "usage: seed <s> [epoch <e>] [world <w> rank <r>] [sampler distributed|random]"
            + " [drop_last] [persistent_workers]";
    if (f.length < 2) {
      throw new InvalidHintException(usage);
    }
    long seed;
    try {
      seed = Long.parseLong(f[1]);
    } catch (NumberFormatException e) {
      throw new InvalidHintException("the seed must be a 64-bit integer, not '" + f[1] + "'");
    }
    int epoch = 0;
    int world = 1;
    int rank = 0;
    String sampler = "distributed";
    boolean dropLast = false;
    boolean persistent = false;
    for (int i = 2; i < f.length; i++) {
      switch (f[i]) {
        case "epoch" -> epoch = nonNegativeInt(value(f, ++i, usage), "epoch");
        case "world" -> world = nonNegativeInt(value(f, ++i, usage), "world");
        case "rank" -> rank = nonNegativeInt(value(f, ++i, usage), "rank");
        case "sampler" -> {
          sampler = value(f, ++i, usage);
          if (!sampler.equals("distributed") && !sampler.equals("random")) {
            throw new InvalidHintException(
                "sampler is distributed or random, not '" + sampler + "'");
          }
        }
        case "drop_last" -> dropLast = true;
        case "persistent_workers" -> persistent = true;
        default -> throw new InvalidHintException("unexpected '" + f[i] + "': " + usage);
      }
    }
    if (world < 1) {
      throw new InvalidHintException("world must be at least 1, not " + world);
    }
    if (rank >= world) {
      throw new InvalidHintException("rank " + rank + " is not in [0, world " + world + ")");
    }
    if (sampler.equals("random") && world != 1) {
      throw new InvalidHintException("sampler random has one rank; use sampler distributed");
    }
    if (view == null) {
      throw new InvalidHintException("seed needs the dataset first (a 'dataset <dir>' line)");
    }
    return new Hint.Seed(
        new org.hintfs.fs.stream.SamplerSpec(seed, world, rank, sampler, dropLast, persistent),
        epoch);
  }

  /**
   * {@code packed <path> <base> <stride> <count> seed <s> [epoch <e>] [persistent_workers]}: the
   * file's samples are {@code count} records of {@code stride} bytes from byte {@code base} (an
   * HDF5 dataset's contiguous data, an array of records), read in the order of a {@code
   * DataLoader(shuffle=True)} whose generator was seeded with {@code s}.
   */
  private Hint packed(String[] f) {
    String usage =
        "usage: packed <path> <base> <stride> <count> seed <s> [epoch <e>] [persistent_workers]";
    if (f.length < 7) {
      throw new InvalidHintException(usage);
    }
    String rel = normalize(f[1]);
    int id = catalog.lookup(rel);
    if (id < 0 || catalog.isDirectory(id)) {
      throw new InvalidHintException("packed " + f[1] + ": no such file in the mount");
    }
    long base = nonNegativeLong(f[2], "base");
    long stride = nonNegativeLong(f[3], "stride");
    int count = nonNegativeInt(f[4], "count");
    if (stride == 0 || count == 0) {
      throw new InvalidHintException("packed: stride and count must be positive");
    }
    if (base + stride * count > catalog.size(id)) {
      throw new InvalidHintException(
          "packed "
              + f[1]
              + ": "
              + count
              + " samples of "
              + stride
              + " bytes from "
              + base
              + " end past the file's "
              + catalog.size(id)
              + " bytes");
    }
    if (!f[5].equals("seed")) {
      throw new InvalidHintException(usage);
    }
    long seed;
    try {
      seed = Long.parseLong(f[6]);
    } catch (NumberFormatException e) {
      throw new InvalidHintException("the seed must be a 64-bit integer, not '" + f[6] + "'");
    }
    int epoch = 0;
    boolean persistent = false;
    for (int i = 7; i < f.length; i++) {
      switch (f[i]) {
        case "epoch" -> epoch = nonNegativeInt(value(f, ++i, usage), "epoch");
        case "persistent_workers" -> persistent = true;
        default -> throw new InvalidHintException("unexpected '" + f[i] + "': " + usage);
      }
    }
    return new Hint.Packed(id, rel, base, stride, count, seed, epoch, persistent);
  }

  private static long nonNegativeLong(String s, String what) {
    try {
      long v = Long.parseLong(s);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new InvalidHintException(what + " must be a non-negative integer, not '" + s + "'");
  }

  private static String value(String[] f, int i, String usage) {
    if (i >= f.length) {
      throw new InvalidHintException(usage);
    }
    return f[i];
  }

  private Hint similar(String[] f, ImageFolderView view) {
    if (f.length < 3) {
      throw new InvalidHintException("usage: similar <sample> <neighbour> ...");
    }
    int s = sample(f[1], view);
    int[] ns = new int[f.length - 2];
    for (int k = 2; k < f.length; k++) {
      ns[k - 2] = sample(f[k], view);
    }
    return new Hint.Similar(s, ns);
  }

  /** A sample: {@code #index} under the dataset, or a path to a file in the mount. */
  int sample(String token, ImageFolderView v) {
    if (token.startsWith("#")) {
      if (v == null) {
        throw new InvalidHintException(
            "'" + token + "': #index needs the dataset first (a 'dataset <dir>' line)");
      }
      int i;
      try {
        i = Integer.parseInt(token.substring(1));
      } catch (NumberFormatException e) {
        throw new InvalidHintException("not an index: '" + token + "'");
      }
      if (i < 0 || i >= v.samples()) {
        throw new InvalidHintException(
            "no sample " + token + ": the dataset has #0 to #" + (v.samples() - 1));
      }
      return v.node(i);
    }
    int id = catalog.lookup(normalize(token));
    if (id < 0 || catalog.isDirectory(id)) {
      throw new InvalidHintException("no such file in the mount: '" + token + "'");
    }
    return id;
  }

  /** Drops "." segments: "." is the mount root, "./train" is "train". */
  static String normalize(String path) {
    StringBuilder sb = new StringBuilder();
    for (String seg : path.split("/")) {
      if (!seg.isEmpty() && !seg.equals(".")) {
        sb.append('/').append(seg);
      }
    }
    return sb.length() == 0 ? "/" : sb.toString();
  }

  static boolean onOff(String s) {
    if (s.equals("on")) {
      return true;
    }
    if (s.equals("off")) {
      return false;
    }
    throw new InvalidHintException("expected on or off, not '" + s + "'");
  }

  private static int nonNegativeInt(String s, String what) {
    try {
      int v = Integer.parseInt(s);
      if (v < 0) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new InvalidHintException(what + " must be a whole number >= 0, not '" + s + "'");
    }
  }

  private static void need(String[] f, int min, int max, String usage) {
    if (f.length < min || f.length > max) {
      throw new InvalidHintException("usage: " + usage);
    }
  }

  /** Splits text into lines; a trailing piece without a newline is returned in {@code rest}. */
  static List<String> lines(String text, StringBuilder rest) {
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) == '\n') {
        out.add(text.substring(start, i));
        start = i + 1;
      }
    }
    rest.setLength(0);
    rest.append(text, start, text.length());
    return out;
  }
}
