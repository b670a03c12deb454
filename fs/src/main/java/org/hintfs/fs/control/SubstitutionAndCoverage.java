package org.hintfs.fs.control;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.hintfs.policy.Coverage;
import org.hintfs.policy.ImageFolderView;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.SubstitutionChooser;

/**
 * What the trainers receive, per mount: substitution (the chooser and its rules), the mount's
 * epochs, the coverage of each epoch and the per-class counts of hits, misses and substitutions.
 * Which cached sample stands in for a miss is {@link org.hintfs.policy.SubstitutionChooser}'s
 * choice. The chooser is touched only under the policy lock ({@link
 * HintState.Effects#underPolicyLock}), because the cache tells it of every admission and eviction
 * under that lock.
 */
public final class SubstitutionAndCoverage {
  private final PolicyContext context;
  private final Supplier<ImageFolderView> view;
  private final Map<Integer, int[]> neighbours = new HashMap<>();
  private final Object epochLock = new Object();
  private HintState.Effects effects;
  private volatile SubstitutionChooser chooser;
  private volatile boolean on;
  private volatile SubstitutionChooser.Rules rules = SubstitutionChooser.Rules.defaults();
  private volatile Coverage coverage;
  private ImageFolderView chooserView; // under the policy lock
  private volatile int epoch;
  private volatile boolean epochSeen;
  private volatile AtomicLongArray perClass = new AtomicLongArray(0);

  /** Misses served by a substitute, all epochs. */
  public final LongAdder substitutions = new LongAdder();

  /**
   * Opens of a missed sample the rules would not stand in for whose fetch had not come within the
   * source's deadline: a substitute could stand in for them under the cap alone.
   */
  public final LongAdder pastDeadline = new LongAdder();

  /** For the policies' {@code context}; {@code view} gives the mount's default dataset. */
  SubstitutionAndCoverage(PolicyContext context, Supplier<ImageFolderView> view) {
    this.context = context;
    this.view = view;
  }

  void connect(HintState.Effects e) {
    this.effects = e;
  }

  /** True while substitution is on. */
  public boolean on() {
    return on;
  }

  /** The rules in force (or that {@code substitution on} last set). */
  public SubstitutionChooser.Rules rules() {
    return rules;
  }

  /** What the trainers received per epoch under the default dataset, or null before one. */
  public Coverage coverage() {
    return coverage;
  }

  /** The mount's epoch: the last one announced, or counted with none announced. */
  public int epoch() {
    return epoch;
  }

  /** The chooser, when substitution is on (use under the policy lock). */
  public SubstitutionChooser chooser() {
    return on ? chooser : null;
  }

  /** The chooser's state, for stats. */
  public record ChooserState(
      boolean warm,
      long substitutionsThisEpoch,
      long lateSubstitutions,
      int owedLeft,
      SubstitutionChooser.Refusals refusals) {}

  /** A snapshot of the chooser (taken under the policy lock), or null when it never ran. */
  public ChooserState chooserState() {
    ChooserState[] out = {null};
    effects.underPolicyLock(
        () -> {
          SubstitutionChooser c = chooser;
          if (c != null) {
            out[0] =
                new ChooserState(
                    c.warm(),
                    c.substitutionsThisEpoch(),
                    c.lateSubstitutions(),
                    c.owedLeft(),
                    c.refusals().copy());
          }
        });
    return out[0];
  }

  /** A new default dataset: its classes' counts and its coverage start. */
  void datasetChanged(ImageFolderView v) {
    perClass = new AtomicLongArray(v.classes() * 3);
    coverage = new Coverage(context.classOf(), epoch);
  }

  /** A {@code substitution on} line's rules take effect for the lines after it at once. */
  void accepted(Hint.Substitution s) {
    if (s.on()) {
      rules = s.rules();
    }
  }

  /** Applies a {@code substitution} line (on the applier thread). */
  void apply(Hint.Substitution s) {
    effects.underPolicyLock(
        () -> {
          on = s.on();
          if (s.on() && chooser == null) {
            rebuildChooser();
          }
          if (chooser != null && s.on()) {
            chooser.setRules(s.rules());
          }
        });
  }

  /** Applies a {@code similar} line. */
  void apply(Hint.Similar s) {
    effects.underPolicyLock(
        () -> {
          neighbours.put(s.sample(), s.neighbours());
          if (chooser != null) {
            chooser.setNeighbours(s.sample(), s.neighbours());
          }
        });
  }

  /**
   * An open of dataset sample {@code id}: asks the chooser for a substitute when substitution is
   * on, and counts what the reader receives.
   *
   * @param hit the sample is cached
   * @param fetching a fetch of it is already in flight
   * @param late the source has not answered this miss within its deadline ({@link
   *     SubstitutionChooser#opened(int, boolean, boolean, boolean)})
   * @param pageCached the kernel's page cache may still hold it: served as itself unless {@code
   *     late}
   * @return the substitute to serve, or -1 to serve the sample itself
   */
  public int opened(int id, boolean hit, boolean fetching, boolean late, boolean pageCached) {
    int sub = -1;
    if (on) {
      int[] pick = {-1};
      effects.underPolicyLock(
          () -> {
            SubstitutionChooser c = chooser;
            if (on && c != null) {
              if (pageCached && !late) {
                c.openedPageCached(id);
              } else {
                pick[0] = c.opened(id, hit, fetching, late);
              }
            }
          });
      sub = pick[0];
    }
    count(id, hit, sub >= 0);
    Coverage cov = coverage;
    if (cov != null && cov.served(sub >= 0 ? sub : id, sub >= 0) && !epochSeen) {
      // No epoch was ever announced: a dataset's worth of reads makes one.
      startEpoch(cov.epoch() + 1, false);
    }
    return sub;
  }

  /**
   * Whether a miss of dataset sample {@code id} would be stood in for now (substitution on, the
   * rules allow it, a stand-in of its class is free). When it would not, its reader waits on the
   * source, and the opener waits for it up to the source's deadline first. Changes nothing.
   */
  public boolean rulesAllow(int id, boolean fetching) {
    boolean[] out = {false};
    if (on) {
      effects.underPolicyLock(
          () -> {
            SubstitutionChooser c = chooser;
            out[0] = on && c != null && c.rulesAllow(id, fetching);
          });
    }
    return out[0];
  }

  /**
   * Ends the mount's epoch and starts {@code next}: the chooser's per-epoch rules and the coverage
   * start again, and what was substituted away and never served is fetched ahead. An announced
   * epoch the mount is in already (another rank's line) changes nothing; the first announcement
   * before any read only numbers the epoch.
   */
  void startEpoch(int next, boolean announced) {
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
      if (owed[0].length > 0 && on) {
        effects.owed(owed[0]);
      }
    }
  }

  /** Counts an open of a dataset sample: hit, miss or substituted. */
  private void count(int id, boolean hit, boolean substituted) {
    int[] classOf = context.classOf();
    int c = id >= 0 && id < classOf.length ? classOf[id] : -1;
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
    ImageFolderView v = view.get();
    AtomicLongArray pc = perClass;
    List<Map<String, Object>> out = new ArrayList<>();
    if (v == null) {
      return out;
    }
    for (int c = 0; c < v.classes() && 3 * c + 2 < pc.length(); c++) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("class", v.className(c));
      m.put("hits", pc.get(3 * c));
      m.put("misses", pc.get(3 * c + 1));
      m.put("substitutions", pc.get(3 * c + 2));
      out.add(m);
    }
    return out;
  }

  /** A chooser over the current classes, seeded with what is cached now. Under the policy lock. */
  void rebuildChooser() {
    ImageFolderView v = view.get();
    if (v == null || (!on && chooser == null) || chooserView == v) {
      return; // nothing to choose from, or the same dataset again (every rank declares it)
    }
    chooserView = v;
    SubstitutionChooser c = new SubstitutionChooser(context, rules, 1);
    for (int id : effects.cachedIds()) {
      c.cached(id);
    }
    neighbours.forEach(c::setNeighbours);
    chooser = c;
  }

  private static final String SUBSTITUTION_USAGE =
      "usage: substitution off | substitution on [max <fraction>] [reuse] [from-start]";

  /**
   * {@code substitution on} with the defaults for every option not given ({@link
   * SubstitutionChooser.Rules#defaults}); {@code substitution off}.
   */
  static Hint.Substitution parse(String[] f, ImageFolderView view) {
    if (f.length < 2) {
      throw new InvalidHintException(SUBSTITUTION_USAGE);
    }
    boolean on = ControlParser.onOff(f[1]);
    SubstitutionChooser.Rules d = SubstitutionChooser.Rules.defaults();
    double max = d.maxFraction();
    boolean reuse = d.reuse();
    boolean fromStart = d.fromStart();
    for (int k = 2; k < f.length; k++) {
      if (!on) {
        throw new InvalidHintException("substitution off takes no options, not '" + f[k] + "'");
      }
      switch (f[k]) {
        case "reuse" -> reuse = true;
        case "from-start" -> fromStart = true;
        case "max" -> {
          if (++k == f.length) {
            throw new InvalidHintException("max needs a fraction in [0, 1]");
          }
          try {
            max = Double.parseDouble(f[k]);
          } catch (NumberFormatException e) {
            throw new InvalidHintException("max must be a number in [0, 1], not '" + f[k] + "'");
          }
          if (!(max >= 0 && max <= 1)) {
            throw new InvalidHintException("max must be in [0, 1], not " + f[k]);
          }
        }
        default ->
            throw new InvalidHintException(
                "unknown substitution option '" + f[k] + "': max <fraction>, reuse or from-start");
      }
    }
    if (on && view == null) {
      throw new InvalidHintException(
          "substitution needs the dataset first (a 'dataset <dir>' line): classes come from it");
    }
    return new Hint.Substitution(on, new SubstitutionChooser.Rules(max, reuse, fromStart));
  }
}
