package org.hintfs.policy.sim;

import java.util.BitSet;
import java.util.List;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.Importance;
import org.hintfs.policy.NextUse;
import org.hintfs.policy.Policies;
import org.hintfs.policy.PolicyContext;
import org.hintfs.policy.Residency;
import org.hintfs.policy.SubstitutionChooser;

/**
 * Replays a trace through a policy with a cache of a given size, the way the mount's cache does: a
 * read of a cached sample is a hit; a miss is fetched (its bytes counted) and stored if it fits in
 * free space, or if the policy admits it and victims can make room; with substitution on, a miss
 * the {@link SubstitutionChooser} allows is served by a cached substitute while the missed sample
 * is still fetched in the background.
 *
 * <p>Capacity is in bytes (sample sizes from the trace); a policy's claim to optimality holds for
 * equal sizes only.
 */
public final class Simulator {
  private Simulator() {}

  /** One row of the result table. */
  public record Result(
      String policy,
      double cacheFraction,
      long capacityBytes,
      long reads,
      long hits,
      long substitutions,
      long bytesFetched) {
    public double hitRatio() {
      return reads == 0 ? 0 : (double) hits / reads;
    }

    /** Reads served without waiting for the source: hits and substitutions. */
    public double localRatio() {
      return reads == 0 ? 0 : (double) (hits + substitutions) / reads;
    }
  }

  /** Options of a run. */
  public record Options(boolean substitution, SubstitutionChooser.Rules rules, long seed) {
    public static final Options PLAIN = new Options(false, SubstitutionChooser.Rules.defaults(), 1);
  }

  /** Replays {@code trace} through policy {@code name} with {@code fraction} of its bytes. */
  public static Result run(Trace trace, String name, double fraction, Options opt) {
    return new Run(
            trace.samples(),
            trace.classes(),
            trace.nextPositions(),
            name,
            (long) (trace.datasetBytes() * fraction),
            opt)
        .replay(trace, fraction);
  }

  /** The cache under simulation, usable step by step (the closed-loop PADS generator needs it). */
  static final class Run {
    final PolicyContext ctx;
    final CachePolicy policy;
    final SubstitutionChooser chooser;
    final BitSet cached;
    final Residency residency;
    final Position position;
    long reads;
    long hits;
    long subs;
    long fetched;
    int epoch = Integer.MIN_VALUE;

    /** The trace position the clairvoyant policy sees. */
    static final class Position implements NextUse {
      final int[] next;
      int now = -1;

      Position(int[] next) {
        this.next = next;
      }

      @Override
      public long after(int sample) {
        int p = next[now];
        return p < 0 ? NEVER : p;
      }

      @Override
      public long now() {
        return now;
      }

      @Override
      public boolean known() {
        return next != null;
      }
    }

    Run(int samples, int[] classes, int[] next, String name, long capacity, Options opt) {
      this.position = new Position(next);
      this.ctx =
          new PolicyContext(
              samples, new Importance(samples), next == null ? null : position, classes);
      this.policy = Policies.create(name, ctx);
      this.chooser =
          opt.substitution() && classes != null
              ? new SubstitutionChooser(ctx, opt.rules(), opt.seed())
              : null;
      this.cached = new BitSet(samples);
      this.residency =
          new Residency(
              samples,
              policy,
              capacity,
              new Residency.Events() {
                @Override
                public void added(int s) {
                  cached.set(s);
                  if (chooser != null) {
                    chooser.cached(s);
                  }
                }

                @Override
                public void evicting(int s) {
                  cached.clear(s);
                  if (chooser != null) {
                    chooser.uncached(s);
                  }
                }
              });
    }

    Result replay(Trace t, double fraction) {
      List<Trace.ScoreEvent> events = t.events();
      int e = 0;
      for (int i = 0; i < t.length(); i++) {
        while (e < events.size() && events.get(e).position() == i) {
          apply(events.get(e++));
        }
        position.now = i;
        read(t.epoch(i), t.sample(i), t.size(t.sample(i)));
      }
      return finish(fraction);
    }

    void apply(Trace.ScoreEvent ev) {
      if (ev.losses()) {
        ctx.importance().recordBatch(ev.samples(), ev.values());
      } else {
        for (int k = 0; k < ev.samples().length; k++) {
          ctx.importance().set(ev.samples()[k], ev.values()[k]);
        }
      }
    }

    /** One read; returns true if it was served locally (hit or substitute). */
    boolean read(int ep, int s, int size) {
      if (ep != epoch) {
        if (chooser != null && epoch != Integer.MIN_VALUE) {
          chooser.newEpoch();
        }
        epoch = ep;
      }
      reads++;
      boolean hit = residency.isResident(s);
      residency.accessed(s, hit);
      boolean substituted = chooser != null && chooser.opened(s, hit, false) >= 0;
      if (hit) {
        hits++;
        return true;
      }
      if (substituted) {
        subs++;
      }
      fetched += size;
      residency.admit(s, size); // the mount's own admission and eviction
      return substituted;
    }

    Result finish(double fraction) {
      residency.checkInvariants();
      return new Result(policy.name(), fraction, residency.capacity(), reads, hits, subs, fetched);
    }
  }
}
