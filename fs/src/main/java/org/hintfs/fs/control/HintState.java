package org.hintfs.fs.control;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.Importance;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.SubstitutionChooser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the trainer's hints have told the mount, and the thread that applies them.
 *
 * <p>Threads: lines are parsed and checked on the FUSE thread that received the write (so a bad
 * line can answer EINVAL), then queued; one applier thread applies them in order. Anything that
 * touches the policies' structures (scores, the substitution chooser) runs under the cache's lock,
 * passed in as {@code policyLock}, because the cache's read path uses them under that lock too.
 *
 * <p>Samples are catalog ids; {@code #index} maps to them through the declared dataset's {@link
 * ImageFolderView}. {@link #classOf} holds each catalog id's class under that dataset (-1 outside
 * it), filled in place so the policies' context keeps pointing at the same array.
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

    /** The predicted order changed: re-key the policy, restart the prefetcher. */
    void orderChanged();

    /** An admin's prefetch, evict, pin or unpin. */
    void admin(Hint.Admin a);

    /** An epoch hint: per-epoch counters start again. */
    default void epochStarted(int epoch) {}
  }

  private final int entries;
  private final org.hintfs.fs.prefetch.PredictedOrder predicted =
      new org.hintfs.fs.prefetch.PredictedOrder();
  private volatile Hint.Seed seed;
  private final Importance importance;
  private final int[] classOf;
  private final PolicyContext context;
  private final BlockingQueue<Hint> queue = new LinkedBlockingQueue<>();
  private final Deque<String> errors = new ArrayDeque<>();
  private final Map<Integer, int[]> neighbours = new HashMap<>();
  private final Thread applier;
  private Effects effects;
  private volatile ImageFolderView view;
  private volatile String datasetDir;
  private volatile int[] sampleOfNode;
  private volatile SubstitutionChooser chooser;
  private volatile boolean substitution;
  private volatile double substitutionMax = 1.0;
  private volatile int epoch;
  private volatile AtomicLongArray perClass = new AtomicLongArray(0);
  public final LongAdder accepted = new LongAdder();
  public final LongAdder rejected = new LongAdder();
  public final LongAdder substitutions = new LongAdder();
  private final Map<String, LongAdder> byVerb = new java.util.concurrent.ConcurrentHashMap<>();

  /** State for a catalog of {@code entries} ids. */
  public HintState(int entries) {
    this.entries = entries;
    this.importance = new Importance(entries);
    this.classOf = new int[entries];
    Arrays.fill(classOf, -1);
    this.context = new PolicyContext(entries, importance, predicted, classOf);
    this.applier = new Thread(this::applyLoop, "hint-applier");
    this.applier.setDaemon(true);
    this.applier.start();
  }

  /** Connects the state to the mount it steers (once, before any hint arrives). */
  public void connect(Effects e) {
    this.effects = e;
  }

  /** This rank's predicted order (empty until a seed or order hint). */
  public org.hintfs.fs.prefetch.PredictedOrder predicted() {
    return predicted;
  }

  /** The seed hint in force, or null. */
  public Hint.Seed seed() {
    return seed;
  }

  /** The context every policy of this mount is built with. */
  public PolicyContext context() {
    return context;
  }

  public ImageFolderView view() {
    return view;
  }

  public String datasetDir() {
    return datasetDir;
  }

  public double substitutionMax() {
    return substitutionMax;
  }

  public boolean substitution() {
    return substitution;
  }

  public int epoch() {
    return epoch;
  }

  /** The chooser, when substitution is on (use under the policy lock). */
  public SubstitutionChooser chooser() {
    return substitution ? chooser : null;
  }

  /** The dataset index of a catalog id, or -1. */
  public int sampleOf(int id) {
    int[] m = sampleOfNode;
    return m == null || id < 0 || id >= m.length ? -1 : m[id];
  }

  /** The class of a catalog id under the dataset, or -1. */
  public int classOf(int id) {
    return id >= 0 && id < entries ? classOf[id] : -1;
  }

  /**
   * Takes the effect of a parsed line that must be visible to the lines after it at once (the
   * dataset, which #index and substitution lines are checked against), then queues it.
   */
  public void accept(Hint h, String verb) {
    if (h instanceof Hint.Dataset d) {
      setDataset(d);
    }
    if (h instanceof Hint.Substitution s) {
      substitutionMax = s.maxFraction();
    }
    accepted.increment();
    byVerb.computeIfAbsent(verb, k -> new LongAdder()).increment();
    queue.add(h);
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

  /** Waits until every hint queued so far is applied. */
  public void drain() throws InterruptedException {
    while (!queue.isEmpty() || applying) {
      Thread.sleep(2);
    }
  }

  private volatile boolean applying;

  private void setDataset(Hint.Dataset d) {
    ImageFolderView v = d.view();
    synchronized (classOf) {
      Arrays.fill(classOf, -1);
      for (int i = 0; i < v.samples(); i++) {
        classOf[v.node(i)] = v.classOf(i);
      }
    }
    sampleOfNode = v.sampleOfNode(entries);
    perClass = new AtomicLongArray(v.classes() * 3);
    datasetDir = d.dir();
    view = v;
  }

  /** Counts an open of a dataset sample: hit, miss or substituted. */
  public void countOpen(int id, boolean hit, boolean substituted) {
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
      Hint h;
      try {
        h = queue.poll(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (h == null) {
        continue;
      }
      applying = true;
      try {
        apply(h);
      } catch (RuntimeException e) {
        log.warn("applying {} failed: {}", h.getClass().getSimpleName(), e.toString());
      } finally {
        applying = !queue.isEmpty();
      }
    }
  }

  private void apply(Hint h) {
    if (h instanceof Hint.Dataset) {
      effects.underPolicyLock(this::rebuildChooser);
    } else if (h instanceof Hint.Losses l) {
      effects.underPolicyLock(() -> importance.recordBatch(l.samples(), l.losses()));
      effects.recordScores(true, l.samples(), l.losses());
    } else if (h instanceof Hint.Scores s) {
      effects.underPolicyLock(
          () -> {
            for (int k = 0; k < s.samples().length; k++) {
              importance.set(s.samples()[k], s.scores()[k]);
            }
          });
      effects.recordScores(false, s.samples(), s.scores());
    } else if (h instanceof Hint.Epoch e) {
      effects.epochStarted(e.epoch());
      effects.underPolicyLock(
          () -> {
            epoch = e.epoch();
            if (chooser != null) {
              chooser.newEpoch();
            }
          });
      Hint.Seed sd = seed;
      if (sd != null && sd.epoch() != e.epoch()) {
        predict(
            new Hint.Seed(
                sd.seed(),
                e.epoch(),
                sd.world(),
                sd.rank(),
                sd.sampler(),
                sd.dropLast(),
                sd.persistentWorkers()));
      }
    } else if (h instanceof Hint.Seed sd) {
      predict(sd);
    } else if (h instanceof Hint.Order o) {
      seed = null;
      predicted.set(o.ids(), entries);
      effects.orderChanged();
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
            if (chooser != null) {
              chooser.setMaxFraction(s.maxFraction());
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

  /** Replays the sampler for the seed's epoch and makes it this rank's predicted order. */
  private void predict(Hint.Seed sd) {
    ImageFolderView v = view;
    int n = v.samples();
    int[] samples =
        sd.sampler().equals("random")
            ? org.hintfs.policy.sampler.TorchSamplers.dataLoaderShuffle(
                n, sd.seed(), sd.epoch() + 1, sd.persistentWorkers())[sd.epoch()]
            : org.hintfs.policy.sampler.TorchSamplers.distributed(
                n, sd.world(), sd.rank(), true, sd.seed(), sd.epoch(), sd.dropLast());
    int[] ids = new int[samples.length];
    for (int i = 0; i < samples.length; i++) {
      ids[i] = v.node(samples[i]);
    }
    seed = sd;
    epoch = sd.epoch();
    predicted.set(ids, entries);
    effects.orderChanged();
  }

  /** A chooser over the current classes, seeded with what is cached now. Under the policy lock. */
  private void rebuildChooser() {
    if (view == null || (!substitution && chooser == null)) {
      return;
    }
    SubstitutionChooser c = new SubstitutionChooser(context, substitutionMax, 1);
    for (int id : effects.cachedIds()) {
      c.cached(id);
    }
    neighbours.forEach(c::setNeighbours);
    chooser = c;
  }
}
