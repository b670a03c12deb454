package org.hintfs.fs.control;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.concurrent.DaemonThreads;
import org.hintfs.fs.stream.SamplerSpec;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.policy.Coverage;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.Importance;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.SubstitutionChooser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the trainers' hints have told the mount, and the thread that applies them.
 *
 * <p>Threads: lines are parsed and checked on the FUSE thread that received the write (so a bad
 * line can answer EINVAL), then queued with the stream they belong to; one applier thread applies
 * them in order. Anything that touches the policies' structures (scores, the substitution chooser)
 * runs under the cache's lock, passed in as {@code policyLock}, because the cache's read path uses
 * them under that lock too.
 *
 * <p>Per stream (a rank of a job, {@link Stream}): the dataset root, seed or order, epoch and
 * prediction. Per job: importance; the policies see, for every sample, the highest score any job
 * gave it (a sample one job finds hard is worth keeping for the node). Per mount: substitution, the
 * policy, the trace, and the default dataset (the last one declared, used by writers that declared
 * none and for per-class counts).
 *
 * <p>Samples are catalog ids; {@code #index} maps to them through the writer's dataset's {@link
 * ImageFolderView}. {@link #classOf} holds each catalog id's class under the datasets declared (-1
 * outside them), filled in place so the policies' context keeps pointing at the same array.
 */
public final class HintState {
  private static final Logger log = LoggerFactory.getLogger(HintState.class);

  /** Rejected lines kept for {@code /.hintfs/errors}. */
  private static final int ERRORS_KEPT = 100;

  /** What applying a hint needs from the mount. */
  public interface Effects {
    /** Runs {@code r} under the lock that guards the policy and the chooser. */
    void underPolicyLock(Runnable r);

    /** Switches the cache policy. */
    void switchPolicy(String name);

    /** Starts or stops trace recording. */
    void trace(boolean on);

    /** Ids cached now (to seed a new chooser). Called under the policy lock. */
    int[] cachedIds();

    /** Scores just applied, for the trace. */
    void recordScores(boolean losses, int[] ids, float[] values);

    /** A stream's predicted order changed: re-key the policy, restart its prefetching. */
    void orderChanged(Stream s);

    /** An admin's prefetch, evict, pin or unpin. */
    void admin(Hint.Admin a);

    /** An epoch hint for an epoch the mount is not in yet: per-epoch counters start again. */
    default void epochStarted(int epoch) {}

    /**
     * A new epoch began with samples substituted away in the last one and never served: they must
     * reach the trainer in this one, fetch them ahead.
     */
    default void owed(int[] ids) {}
  }

  /** A checked line and the stream it came from (null: a writer with no stream). */
  private record Queued(Stream stream, Hint hint) {}

  private final int entries;
  private final Streams streams;
  private final Importance importance;
  private final Map<String, Importance> jobImportance = new HashMap<>();
  private final int[] classOf;
  private final PolicyContext context;
  private final BlockingQueue<Queued> queue = new LinkedBlockingQueue<>();
  private final Deque<String> errors = new ArrayDeque<>();
  private final Map<Integer, int[]> neighbours = new HashMap<>();
  private final Thread applier;
  private Effects effects;
  private volatile ImageFolderView view;
  private volatile String datasetDir;
  private volatile int[] sampleOfNode;
  private volatile SubstitutionChooser chooser;
  private volatile boolean substitution;
  private volatile SubstitutionChooser.Rules substitutionRules =
      SubstitutionChooser.Rules.defaults();
  private volatile Coverage coverage;
  private ImageFolderView chooserView; // under the policy lock
  private final Object epochLock = new Object();
  private volatile int epoch;
  private volatile boolean epochSeen;
  private volatile AtomicLongArray perClass = new AtomicLongArray(0);
  public final LongAdder accepted = new LongAdder();
  public final LongAdder rejected = new LongAdder();
  public final LongAdder substitutions = new LongAdder();
  private final Map<String, LongAdder> byVerb = new ConcurrentHashMap<>();
  private final Map<Integer, ImageFolderView> views = new ConcurrentHashMap<>();
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

  private final org.hintfs.policy.sampler.OrderDetector.Options detectOptions =
      org.hintfs.policy.sampler.OrderDetector.Options.defaults();

  /** State for a catalog of {@code entries} ids, read by {@code streams}. */
  public HintState(int entries, Streams streams) {
    this.entries = entries;
    this.streams = streams;
    this.importance = new Importance(entries);
    this.classOf = new int[entries];
    Arrays.fill(classOf, -1);
    this.context = new PolicyContext(entries, importance, streams, classOf);
    this.applier = new Thread(this::applyLoop, "hint-applier");
    this.applier.setDaemon(true);
    this.applier.start();
  }

  /** Connects the state to the mount it steers (once, before any hint arrives). */
  public void connect(Effects e) {
    this.effects = e;
  }

  /** The streams reading this mount. */
  public Streams streams() {
    return streams;
  }

  /** The context every policy of this mount is built with. */
  public PolicyContext context() {
    return context;
  }

  /** The mount's default dataset view (the last declared), or null. */
  public ImageFolderView view() {
    return view;
  }

  /** The dataset view {@code #index} samples of a line from {@code writer} refer to, or null. */
  public ImageFolderView viewFor(Stream writer) {
    ImageFolderView v = writer == null ? null : writer.view();
    return v != null ? v : view;
  }

  public String datasetDir() {
    return datasetDir;
  }

  /** The substitution rules in force (or that {@code substitution on} last set). */
  public SubstitutionChooser.Rules substitutionRules() {
    return substitutionRules;
  }

  /** What the trainers received per epoch under the default dataset, or null before one. */
  public Coverage coverage() {
    return coverage;
  }

  /** The chooser's state, for stats: read under the policy lock. */
  public record ChooserState(
      boolean warm,
      long substitutionsThisEpoch,
      int owedLeft,
      SubstitutionChooser.Refusals refusals) {}

  /** A snapshot of the chooser, or null when substitution never ran. */
  public ChooserState chooserState() {
    ChooserState[] out = {null};
    effects.underPolicyLock(
        () -> {
          SubstitutionChooser c = chooser;
          if (c != null) {
            SubstitutionChooser.Refusals r = new SubstitutionChooser.Refusals();
            SubstitutionChooser.Refusals from = c.refusals();
            r.warmUp = from.warmUp;
            r.important = from.important;
            r.owed = from.owed;
            r.inFlight = from.inFlight;
            r.capped = from.capped;
            r.noCandidate = from.noCandidate;
            out[0] = new ChooserState(c.warm(), c.substitutionsThisEpoch(), c.owedLeft(), r);
          }
        });
    return out[0];
  }

  public boolean substitution() {
    return substitution;
  }

  /** The mount's epoch: the last one a stream announced (each stream keeps its own too). */
  public int epoch() {
    return epoch;
  }

  /** The chooser, when substitution is on (use under the policy lock). */
  public SubstitutionChooser chooser() {
    return substitution ? chooser : null;
  }

  /** The dataset index of a catalog id under the default dataset, or -1. */
  public int sampleOf(int id) {
    int[] m = sampleOfNode;
    return m == null || id < 0 || id >= m.length ? -1 : m[id];
  }

  /** The class of a catalog id under the datasets declared, or -1. */
  public int classOf(int id) {
    return id >= 0 && id < entries ? classOf[id] : -1;
  }

  /**
   * The ImageFolder view of catalog directory {@code root}, built once: the catalog does not change
   * while mounted, and every rank declares the same root.
   */
  public ImageFolderView view(org.hintfs.fs.catalog.Catalog catalog, int root) {
    return views.computeIfAbsent(root, r -> ImageFolderView.build(catalog, r));
  }

  /**
   * Notes an open by a stream that sent no hint and has no prediction; after {@link #DETECT_AFTER}
   * distinct samples, searches for the sampler order that explains them, off the FUSE threads.
   */
  public void observe(Stream st, int id) {
    if (st.hinted() || st.order().known() || st.failedSearches() >= DETECT_ATTEMPTS) {
      return;
    }
    int s = st.sampleOf(id);
    if (s < 0) {
      return;
    }
    int[] seen = st.observe(s, DETECT_AFTER);
    if (seen == null) {
      return;
    }
    int n = st.view().samples();
    detector.execute(
        () -> {
          long t0 = System.nanoTime();
          var m = org.hintfs.policy.sampler.OrderDetector.detect(n, seen, detectOptions);
          long micros = (System.nanoTime() - t0) / 1000;
          detectionSearches.increment();
          detectionMicros.add(micros);
          st.searchDone();
          if (m != null) {
            detections.increment();
            SamplerSpec spec =
                new SamplerSpec(m.generatorSeed(), m.world(), m.rank(), m.sampler(), false, false);
            enqueue(new Queued(st, new Hint.Detected(spec, 0, m, micros)));
          } else {
            st.setDetectMicros(micros);
            log.info("stream {}: no sampler order explains its first reads", st.id());
          }
        });
  }

  /**
   * A recognised stream read its whole epoch: predict the next (the generator seed + 1 for
   * set_epoch; the same seed if the script was seen not to call it).
   */
  public void advanceDetected(Stream st) {
    var m = st.detected();
    SamplerSpec spec = st.sampler();
    if (m == null || spec == null || st.hinted()) {
      return;
    }
    if (st.claimAdvance()) {
      st.markAdvanced();
      enqueue(new Queued(st, new Hint.Detected(spec, st.epoch() + st.detectedEpochStep(), m, -1)));
    }
  }

  /** Jobs that sent scores, by name (for stats). */
  public synchronized List<String> jobs() {
    return jobImportance.keySet().stream().sorted().toList();
  }

  /**
   * Takes the effect of a parsed line that must be visible to the lines after it at once (the
   * dataset, which #index and substitution lines are checked against), then queues it.
   */
  public void accept(Hint h, String verb, Stream writer) {
    if (h instanceof Hint.Dataset d) {
      setDataset(d);
      if (writer != null) {
        writer.setDataset(d.dir(), d.view());
      }
    }
    if (h instanceof Hint.Substitution s && s.on()) {
      substitutionRules = s.rules();
    }
    accepted.increment();
    byVerb.computeIfAbsent(verb, k -> new LongAdder()).increment();
    enqueue(new Queued(writer, h));
  }

  /** Records a rejected line for {@code /.hintfs/errors}. */
  public void reject(String line, String reason) {
    rejected.increment();
    String shown = line.length() > 200 ? line.substring(0, 200) + "..." : line;
    synchronized (errors) {
      errors.addLast(java.time.Instant.now() + " " + reason + ": " + shown);
      while (errors.size() > ERRORS_KEPT) {
        errors.removeFirst();
      }
    }
  }

  /** The last rejected lines, oldest first, one per line. */
  public String errorsText() {
    synchronized (errors) {
      return errors.isEmpty() ? "" : String.join("\n", errors) + "\n";
    }
  }

  /** Accepted hints by verb. */
  public Map<String, Long> acceptedByVerb() {
    Map<String, Long> m = new java.util.TreeMap<>();
    byVerb.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  /**
   * Waits until every hint queued so far is applied, at most {@code timeoutMs}.
   *
   * @return true if they were
   */
  public boolean awaitApplied(long timeoutMs) {
    long end = System.nanoTime() + timeoutMs * 1_000_000;
    while (pending.get() > 0) {
      if (System.nanoTime() > end) {
        return false;
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  /** Waits until every hint queued so far is applied. */
  public void drain() throws InterruptedException {
    while (pending.get() > 0) {
      Thread.sleep(2);
    }
  }

  /** Hints queued and not yet applied (or being applied). */
  private final java.util.concurrent.atomic.AtomicLong pending =
      new java.util.concurrent.atomic.AtomicLong();

  private void enqueue(Queued q) {
    pending.incrementAndGet();
    queue.add(q);
  }

  private void setDataset(Hint.Dataset d) {
    ImageFolderView v = d.view();
    datasetDir = d.dir();
    if (v == view) {
      return; // the same root again (every rank declares it)
    }
    synchronized (classOf) {
      for (int i = 0; i < v.samples(); i++) {
        classOf[v.node(i)] = v.classOf(i);
      }
    }
    sampleOfNode = v.sampleOfNode(entries);
    perClass = new AtomicLongArray(v.classes() * 3);
    coverage = new Coverage(classOf, epoch);
    view = v;
  }

  /**
   * An open of dataset sample {@code id}: asks the chooser for a substitute when substitution is
   * on, and counts what the reader receives.
   *
   * @param hit the sample is cached
   * @param fetching a fetch of it is already in flight
   * @return the substitute to serve, or -1 to serve the sample itself
   */
  public int opened(int id, boolean hit, boolean fetching) {
    int sub = -1;
    if (substitution) {
      int[] pick = {-1};
      effects.underPolicyLock(
          () -> {
            SubstitutionChooser c = chooser;
            if (substitution && c != null) {
              pick[0] = c.opened(id, hit, fetching);
            }
          });
      sub = pick[0];
    }
    countOpen(id, hit, sub >= 0);
    Coverage cov = coverage;
    if (cov != null && cov.served(sub >= 0 ? sub : id, sub >= 0) && !epochSeen) {
      // No epoch was ever announced: a dataset's worth of reads makes one.
      startEpoch(cov.epoch() + 1, false);
    }
    return sub;
  }

  /**
   * Ends the mount's epoch and starts {@code next}: the chooser's per-epoch rules and the coverage
   * start again, and what was substituted away and never served is fetched ahead. An announced
   * epoch the mount is in already (another rank's line) changes nothing; the first announcement
   * before any read only numbers the epoch.
   */
  private void startEpoch(int next, boolean announced) {
    synchronized (epochLock) {
      if (announced) {
        boolean first = !epochSeen;
        if (!first && next == epoch) {
          return;
        }
        epochSeen = true;
        effects.epochStarted(next);
        Coverage cov = coverage;
        if (first && (cov == null || cov.renumber(next))) {
          epoch = next;
          return;
        }
      } else if (epochSeen) {
        return;
      }
      int[][] owed = {new int[0]};
      effects.underPolicyLock(
          () -> {
            epoch = next;
            if (chooser != null) {
              owed[0] = chooser.newEpoch();
            }
          });
      Coverage cov = coverage;
      if (cov != null) {
        cov.newEpoch(next);
      }
      if (owed[0].length > 0 && substitution) {
        effects.owed(owed[0]);
      }
    }
  }

  /** Counts an open of a dataset sample: hit, miss or substituted. */
  private void countOpen(int id, boolean hit, boolean substituted) {
    int c = classOf(id);
    AtomicLongArray pc = perClass;
    if (c >= 0 && 3 * c + 2 < pc.length()) {
      pc.incrementAndGet(3 * c + (substituted ? 2 : hit ? 0 : 1));
    }
    if (substituted) {
      substitutions.increment();
    }
  }

  /** Per class: name, hits, misses, substitutions. */
  public List<Map<String, Object>> perClass() {
    ImageFolderView v = view;
    AtomicLongArray pc = perClass;
    List<Map<String, Object>> out = new java.util.ArrayList<>();
    if (v == null) {
      return out;
    }
    for (int c = 0; c < v.classes() && 3 * c + 2 < pc.length(); c++) {
      Map<String, Object> m = new java.util.LinkedHashMap<>();
      m.put("class", v.className(c));
      m.put("hits", pc.get(3 * c));
      m.put("misses", pc.get(3 * c + 1));
      m.put("substitutions", pc.get(3 * c + 2));
      out.add(m);
    }
    return out;
  }

  private void applyLoop() {
    while (true) {
      Queued q;
      try {
        q = queue.poll(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (q == null) {
        continue;
      }
      try {
        apply(q.stream(), q.hint());
      } catch (RuntimeException e) {
        log.warn("applying {} failed: {}", q.hint().getClass().getSimpleName(), e.toString());
      } finally {
        pending.decrementAndGet();
      }
    }
  }

  private void apply(Stream st, Hint h) {
    if (st != null && st.ended()) {
      return; // its writer is gone: nothing of it should steer the cache any more
    }
    if (h instanceof Hint.Dataset) {
      effects.underPolicyLock(this::rebuildChooser);
    } else if (h instanceof Hint.Losses l) {
      Importance job = jobImportance(st);
      effects.underPolicyLock(
          () -> {
            job.recordBatch(l.samples(), l.losses());
            combine(job, l.samples());
          });
      effects.recordScores(true, l.samples(), l.losses());
    } else if (h instanceof Hint.Scores s) {
      Importance job = jobImportance(st);
      effects.underPolicyLock(
          () -> {
            for (int k = 0; k < s.samples().length; k++) {
              job.set(s.samples()[k], s.scores()[k]);
            }
            combine(job, s.samples());
          });
      effects.recordScores(false, s.samples(), s.scores());
    } else if (h instanceof Hint.Epoch e) {
      if (st != null) {
        st.setEpoch(e.epoch());
        SamplerSpec sd = st.sampler();
        if (sd != null) {
          predict(st, sd, e.epoch());
        }
      }
      // The first rank to announce an epoch starts it for the mount; the others' lines for the
      // same epoch change only their own stream.
      startEpoch(e.epoch(), true);
    } else if (h instanceof Hint.Detected d) {
      if (st.hinted()) {
        return; // an explicit hint always wins
      }
      if (d.micros() >= 0) {
        st.setDetected(d.match(), d.micros());
      }
      st.setEpoch(d.epoch());
      predict(st, d.spec(), d.epoch(), d.micros() < 0 ? st.order().order() : null);
      log.info(
          "stream {}: {} order, generator seed {} + epoch {}, world {} rank {}",
          st.id(),
          d.micros() >= 0 ? "recognised" : "next recognised",
          d.spec().seed(),
          d.epoch(),
          d.spec().world(),
          d.spec().rank());
    } else if (h instanceof Hint.Seed sd) {
      st.markHinted();
      st.setEpoch(sd.epoch());
      startEpoch(sd.epoch(), true);
      predict(st, sd.spec(), sd.epoch());
    } else if (h instanceof Hint.Order o) {
      st.markHinted();
      int[] ids = o.ids();
      int[] before = st.order().order();
      if (o.append() && before != null && st.explicitOrder()) {
        ids = Arrays.copyOf(before, before.length + o.ids().length);
        System.arraycopy(o.ids(), 0, ids, before.length, o.ids().length);
        int pos = st.order().position();
        st.predict(null, ids, entries);
        st.order().moveTo(pos);
      } else {
        st.predict(null, ids, entries);
      }
      effects.orderChanged(st);
    } else if (h instanceof Hint.Similar s) {
      effects.underPolicyLock(
          () -> {
            neighbours.put(s.sample(), s.neighbours());
            if (chooser != null) {
              chooser.setNeighbours(s.sample(), s.neighbours());
            }
          });
    } else if (h instanceof Hint.Substitution s) {
      effects.underPolicyLock(
          () -> {
            substitution = s.on();
            if (s.on() && chooser == null) {
              rebuildChooser();
            }
            if (chooser != null && s.on()) {
              chooser.setRules(s.rules());
            }
          });
    } else if (h instanceof Hint.Policy p) {
      effects.switchPolicy(p.name());
    } else if (h instanceof Hint.Trace t) {
      effects.trace(t.on());
    } else if (h instanceof Hint.Admin a) {
      effects.admin(a);
    }
  }

  /** The importance of the writer's job ("" for a writer with no stream). */
  private synchronized Importance jobImportance(Stream st) {
    String job = st == null ? "" : st.job(streams.tree());
    if (jobImportance.isEmpty()) {
      // One job writes straight into the policies' scores: a lone job costs nothing extra.
      jobImportance.put(job, importance);
      return importance;
    }
    Importance imp = jobImportance.get(job);
    if (imp != null) {
      return imp;
    }
    for (Map.Entry<String, Importance> e : jobImportance.entrySet()) {
      if (e.getValue() == importance) {
        // A second job: the first one's scores move to an array of its own.
        Importance own = new Importance(entries);
        for (int s = 0; s < entries; s++) {
          if (importance.known(s)) {
            own.set(s, importance.score(s));
          }
        }
        e.setValue(own);
      }
    }
    imp = new Importance(entries);
    jobImportance.put(job, imp);
    return imp;
  }

  /** The policies' score of each sample is the highest any job gave it. Under the policy lock. */
  private void combine(Importance changed, int[] samples) {
    if (changed == importance) {
      return;
    }
    synchronized (this) {
      for (int s : samples) {
        float best = Float.NaN;
        for (Importance job : jobImportance.values()) {
          if (job.known(s) && !(job.score(s) <= best)) {
            best = job.score(s);
          }
        }
        if (!Float.isNaN(best)) {
          importance.set(s, best);
        }
      }
    }
  }

  /** Replays the sampler for {@code epoch} and makes it the stream's predicted order. */
  private void predict(Stream st, SamplerSpec sd, int epoch) {
    predict(st, sd, epoch, null);
  }

  /**
   * Replays the sampler for {@code epoch} and makes it the stream's predicted order. With {@code
   * before} (a recognised stream moving on by itself, when its reader reached the end), the last
   * window of the old order stays in front, read: the slower workers' last files of the old epoch
   * still arrive after the furthest one, and must not be taken for reads of the new epoch.
   */
  private void predict(Stream st, SamplerSpec sd, int epoch, int[] before) {
    ImageFolderView v = viewFor(st);
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
    st.order().moveTo(carried);
    // What set_epoch(epoch + 1) will read first: the prefetcher carries on into it. A recognised
    // script seen not to call set_epoch reads the same order again.
    int step = !st.hinted() && st.detected() != null ? st.detectedEpochStep() : 1;
    st.order().setNextHead(replay(v, sd, epoch + step, nextHeadLength));
    effects.orderChanged(st);
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

  /** How much of the next epoch is predicted ahead: the prefetch window (set by the mount). */
  private volatile int nextHeadLength = 256;

  /** Sets how much of the next epoch's order is predicted ahead (the prefetch window). */
  public void setNextHeadLength(int n) {
    nextHeadLength = Math.max(0, n);
  }

  /** A chooser over the current classes, seeded with what is cached now. Under the policy lock. */
  private void rebuildChooser() {
    if (view == null || (!substitution && chooser == null) || chooserView == view) {
      return; // nothing to choose from, or the same dataset again (every rank declares it)
    }
    chooserView = view;
    SubstitutionChooser c = new SubstitutionChooser(context, substitutionRules, 1);
    for (int id : effects.cachedIds()) {
      c.cached(id);
    }
    neighbours.forEach(c::setNeighbours);
    chooser = c;
  }
}
