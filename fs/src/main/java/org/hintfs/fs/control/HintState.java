package org.hintfs.fs.control;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.fs.stream.SamplerSpec;
import org.hintfs.fs.stream.Stream;
import org.hintfs.fs.stream.Streams;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.Importance;
import org.hintfs.policy.PolicyContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the trainers' hints have told the mount, and the thread that applies them.
 *
 * <p>Threads: lines are parsed and checked on the FUSE thread that received the write (so a bad
 * line can answer EINVAL), then queued with the stream they belong to; one applier thread applies
 * them in order. Anything that touches the policies' structures (scores, the substitution chooser)
 * runs under the cache index's lock ({@link Effects#underPolicyLock}), because the cache's read
 * path uses them under that lock too.
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
 *
 * <p>The default dataset changes under one lock (the {@code classOf} array's): the array is filled,
 * then the root, view and index map are published together as one immutable {@link Dataset}. A
 * reader sees one declaration's three, never a mix of two racing writers', and {@link #classOf}
 * reads the published dataset first, so it sees every class filled before it.
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

    /** A packed file's samples and their order. */
    default void packed(Hint.Packed p) {}

    /** An epoch hint for an epoch the mount is not in yet: per-epoch counters start again. */
    default void epochStarted(int epoch) {}

    /**
     * A new epoch began with samples substituted away in the last one and never served: they must
     * reach the trainer in this one, fetch them ahead.
     */
    default void owed(int[] ids) {}
  }

  /**
   * The default dataset: its root, its view, and each catalog id's index in it or -1 (not to be
   * written).
   */
  public record Dataset(String dir, ImageFolderView view, int[] sampleOfNode) {}

  /** A checked line and the stream it came from (null: a writer with no stream). */
  private record Queued(Stream stream, Hint hint) {}

  private final int entries;
  private final Streams streams;
  private final Importance importance;
  private final JobScores jobScores;
  private final SamplerReplay predictions;
  private final int[] classOf;
  private final PolicyContext context;
  private final BlockingQueue<Queued> queue = new LinkedBlockingQueue<>();
  private final Deque<String> errors = new ArrayDeque<>();
  private final Thread applier;
  private Effects effects;
  private volatile Dataset dataset;
  public final LongAdder accepted = new LongAdder();
  public final LongAdder rejected = new LongAdder();

  /** Writes answered EINPROGRESS: a reader line not applied within the write's bound. */
  public final LongAdder stillApplying = new LongAdder();

  private final Map<String, LongAdder> byVerb = new ConcurrentHashMap<>();
  private final Map<Integer, ImageFolderView> views = new ConcurrentHashMap<>();

  /** Substitution, the mount's epochs and what the trainers received. */
  public final SubstitutionAndCoverage substitution;

  /** Order recognition for the streams that send no hint. */
  public final RecognitionSearches recognition = new RecognitionSearches(this::enqueue);

  /** State for a catalog of {@code entries} ids, read by {@code streams}. */
  public HintState(int entries, Streams streams) {
    this.entries = entries;
    this.streams = streams;
    this.importance = new Importance(entries);
    this.classOf = new int[entries];
    Arrays.fill(classOf, -1);
    this.context = new PolicyContext(entries, importance, streams, classOf);
    this.jobScores = new JobScores(entries, importance);
    this.predictions =
        new SamplerReplay(
            entries,
            s -> {
              // The job's positions are computed here, on the hint applier, not under the cache's
              // lock when the re-keying asks for them.
              streams.warmJobClock(s);
              effects.orderChanged(s);
            });
    this.substitution = new SubstitutionAndCoverage(context, this::view);
    this.applier = new Thread(this::applyLoop, "hint-applier");
    this.applier.setDaemon(true);
    this.applier.start();
  }

  /** Connects the state to the mount it steers (once, before any hint arrives). */
  public void connect(Effects e) {
    this.effects = e;
    substitution.connect(e);
  }

  /** The streams reading this mount. */
  public Streams streams() {
    return streams;
  }

  /** The context every policy of this mount is built with. */
  public PolicyContext context() {
    return context;
  }

  /** The mount's default dataset (the last declared), all of one declaration, or null. */
  public Dataset dataset() {
    return dataset;
  }

  /** The mount's default dataset view (the last declared), or null. */
  public ImageFolderView view() {
    Dataset d = dataset;
    return d == null ? null : d.view();
  }

  /** The dataset view {@code #index} samples of a line from {@code writer} refer to, or null. */
  public ImageFolderView viewFor(Stream writer) {
    ImageFolderView v = writer == null ? null : writer.view();
    return v != null ? v : view();
  }

  public String datasetDir() {
    Dataset d = dataset;
    return d == null ? null : d.dir();
  }

  /** The mount's epoch: the last one a stream announced (each stream keeps its own too). */
  public int epoch() {
    return substitution.epoch();
  }

  /** The dataset index of a catalog id under the default dataset, or -1. */
  public int sampleOf(int id) {
    Dataset d = dataset;
    int[] m = d == null ? null : d.sampleOfNode();
    return m == null || id < 0 || id >= m.length ? -1 : m[id];
  }

  /** The class of a catalog id under the datasets declared, or -1. */
  public int classOf(int id) {
    // The volatile read orders this after the fill of every dataset published so far.
    return dataset != null && id >= 0 && id < entries ? classOf[id] : -1;
  }

  /**
   * The ImageFolder view of catalog directory {@code root}, built once: the catalog does not change
   * while mounted, and every rank declares the same root.
   */
  public ImageFolderView view(org.hintfs.fs.catalog.Catalog catalog, int root) {
    return views.computeIfAbsent(root, r -> ImageFolderView.build(catalog, r));
  }

  /** Jobs that sent scores, by name (for stats). */
  public List<String> jobs() {
    return jobScores.jobs();
  }

  /**
   * Takes the effect of a parsed line that must be visible to the lines after it at once (the
   * dataset, which #index and substitution lines are checked against), then queues it.
   */
  public void accept(Hint h, String verb, Stream writer) {
    if (h instanceof Hint.Dataset d) {
      setDataset(d);
      if (writer != null) {
        writer.setDataset(d.dir(), d.view(), entries);
      }
    }
    if (h instanceof Hint.Substitution s) {
      substitution.accepted(s);
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
   * Waits until every hint queued before this call is applied, at most {@code timeoutMs}. Lines
   * queued after the call are not waited for (a stats read while loss lines keep arriving returns
   * as soon as the lines before it are in); the applier signals each line applied, nothing polls.
   *
   * @return true if they were
   */
  public boolean awaitApplied(long timeoutMs) {
    // Lines are applied in the order queued: once as many are applied as had been counted in
    // here, every line queued before this call is among them.
    long target = queued.get();
    if (applied >= target) {
      return true;
    }
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (appliedSignal) {
      while (applied < target) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(appliedSignal, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return true;
  }

  /** Lines accepted and queued but not applied yet. */
  public long pending() {
    return Math.max(0, queued.get() - applied);
  }

  /** Lines queued, ever (counted before each is queued). */
  private final java.util.concurrent.atomic.AtomicLong queued =
      new java.util.concurrent.atomic.AtomicLong();

  /** Lines applied (or dropped) by the applier, ever; written by the applier only. */
  private volatile long applied;

  /** Notified by the applier after every line: what {@link #awaitApplied} waits on. */
  private final Object appliedSignal = new Object();

  private void enqueue(Queued q) {
    queued.incrementAndGet();
    queue.add(q);
  }

  /** Queues a hint for stream {@code st} (the applier applies it in order). */
  void enqueue(Stream st, Hint h) {
    enqueue(new Queued(st, h));
  }

  private void setDataset(Hint.Dataset d) {
    ImageFolderView v = d.view();
    synchronized (classOf) {
      Dataset now = dataset;
      if (now != null && v == now.view()) {
        // The same root again (every rank declares it): its classes and counts stand.
        if (!d.dir().equals(now.dir())) {
          dataset = new Dataset(d.dir(), v, now.sampleOfNode());
        }
        return;
      }
      for (int i = 0; i < v.samples(); i++) {
        classOf[v.node(i)] = v.classOf(i);
      }
      int[] sampleOfNode = v.sampleOfNode(entries);
      substitution.datasetChanged(v);
      dataset = new Dataset(d.dir(), v, sampleOfNode);
    }
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
        synchronized (appliedSignal) {
          applied++;
          appliedSignal.notifyAll();
        }
      }
    }
  }

  private void apply(Stream st, Hint h) {
    if (st != null && st.ended()) {
      return; // its writer is gone: nothing of it should steer the cache any more
    }
    if (h instanceof Hint.Dataset) {
      effects.underPolicyLock(substitution::rebuildChooser);
    } else if (h instanceof Hint.Losses l) {
      Importance job = jobScores.of(st == null ? "" : st.job(streams.tree()));
      effects.underPolicyLock(
          () -> {
            job.recordBatch(l.samples(), l.losses());
            jobScores.combine(job, l.samples());
          });
      effects.recordScores(true, l.samples(), l.losses());
    } else if (h instanceof Hint.Scores s) {
      Importance job = jobScores.of(st == null ? "" : st.job(streams.tree()));
      effects.underPolicyLock(
          () -> {
            for (int k = 0; k < s.samples().length; k++) {
              job.set(s.samples()[k], s.scores()[k]);
            }
            jobScores.combine(job, s.samples());
          });
      effects.recordScores(false, s.samples(), s.scores());
    } else if (h instanceof Hint.Epoch e) {
      if (st != null) {
        st.setEpoch(e.epoch());
        SamplerSpec sd = st.sampler();
        if (sd != null) {
          predictions.predict(st, viewFor(st), sd, e.epoch(), null);
        }
      }
      // The first rank to announce an epoch starts it for the mount; the others' lines for the
      // same epoch change only their own stream.
      substitution.startEpoch(e.epoch(), true);
    } else if (h instanceof Hint.Detected d) {
      if (st.recognition().hinted()) {
        return; // an explicit hint always wins
      }
      if (d.micros() >= 0) {
        st.recognition().setDetected(d.match(), d.micros());
      }
      st.setEpoch(d.epoch());
      predictions.predict(
          st, viewFor(st), d.spec(), d.epoch(), d.micros() < 0 ? st.order().order() : null);
      if (d.micros() >= 0) {
        st.markOpenedBeforeOrderRead();
      }
      log.info(
          "stream {}: {} order, generator seed {} + epoch {}, world {} rank {}",
          st.id(),
          d.micros() >= 0 ? "recognised" : "next recognised",
          d.spec().seed(),
          d.epoch(),
          d.spec().world(),
          d.spec().rank());
    } else if (h instanceof Hint.Seed sd) {
      st.recognition().markHinted();
      st.setEpoch(sd.epoch());
      substitution.startEpoch(sd.epoch(), true);
      predictions.predict(st, viewFor(st), sd.spec(), sd.epoch(), null);
    } else if (h instanceof Hint.Order o) {
      st.recognition().markHinted();
      int[] ids = o.ids();
      int[] before = st.order().order();
      if (o.append() && before != null && st.explicitOrder()) {
        ids = Arrays.copyOf(before, before.length + o.ids().length);
        System.arraycopy(o.ids(), 0, ids, before.length, o.ids().length);
        int pos = st.order().position();
        st.predict(null, ids, entries);
        st.order().startAt(pos);
      } else {
        st.predict(null, ids, entries);
      }
      effects.orderChanged(st);
    } else if (h instanceof Hint.Similar s) {
      substitution.apply(s);
    } else if (h instanceof Hint.Substitution s) {
      substitution.apply(s);
    } else if (h instanceof Hint.Policy p) {
      effects.switchPolicy(p.name());
    } else if (h instanceof Hint.Trace t) {
      effects.trace(t.on());
    } else if (h instanceof Hint.Admin a) {
      effects.admin(a);
    } else if (h instanceof Hint.Packed p) {
      effects.packed(p);
    }
  }

  /** Sets how much of the next epoch's order is predicted ahead (the prefetch window). */
  public void setNextHeadLength(int n) {
    predictions.setNextHeadLength(n);
  }
}
