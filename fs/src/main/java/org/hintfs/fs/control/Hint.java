package org.hintfs.fs.control;

/** One parsed, checked control line. Samples are catalog ids. */
public sealed interface Hint {
  /** The ImageFolder root that {@code #index} refers to. */
  record Dataset(String dir, org.hintfs.policy.ImageFolderView view, int root) implements Hint {}

  /** One minibatch of losses. */
  record Losses(int[] samples, float[] losses) implements Hint {}

  /** Direct importance scores. */
  record Scores(int[] samples, float[] scores) implements Hint {}

  /** A new epoch begins. */
  record Epoch(int epoch) implements Hint {}

  /** Neighbours a missed sample may be substituted with. */
  record Similar(int sample, int[] neighbours) implements Hint {}

  /** Substitution on (with its rules) or off. */
  record Substitution(boolean on, org.hintfs.policy.SubstitutionChooser.Rules rules)
      implements Hint {}

  /** Select a cache policy. */
  record Policy(String name) implements Hint {}

  /**
   * The sampler's seed: the writer's stream's order follows from it.
   *
   * @param spec the sampler (seed, world, rank, kind, drop_last, persistent workers)
   * @param epoch the epoch whose order to predict
   */
  record Seed(org.hintfs.fs.stream.SamplerSpec spec, int epoch) implements Hint {}

  /**
   * An order the mount recognised from a hintless stream's reads: applied like a seed hint unless
   * the stream has sent one of its own.
   */
  record Detected(
      org.hintfs.fs.stream.SamplerSpec spec,
      int epoch,
      org.hintfs.policy.sampler.OrderDetector.Match match,
      long micros)
      implements Hint {}

  /** An explicit upcoming order of catalog ids; {@code append} continues the last one. */
  record Order(int[] ids, boolean append) implements Hint {}

  /** What an admin asks of the cache. */
  enum AdminVerb {
    PREFETCH,
    EVICT,
    PIN,
    UNPIN,
    CANCEL
  }

  /**
   * {@code prefetch|evict|pin|unpin <path>}: every file under the path; {@code prefetch cancel}.
   */
  record Admin(AdminVerb verb, String path, int[] files) implements Hint {}

  /**
   * A packed file's samples ({@code count} records of {@code stride} bytes from {@code base}) and
   * the seeded shuffle they are read in.
   */
  record Packed(
      int id,
      String path,
      long base,
      long stride,
      int count,
      long seed,
      int epoch,
      boolean persistentWorkers)
      implements Hint {}

  /** Start or stop recording the trace. */
  record Trace(boolean on) implements Hint {}
}
