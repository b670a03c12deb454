package org.hintfs.bench;

import java.util.BitSet;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.hintfs.policy.CachePolicy;
import org.hintfs.policy.Policies;
import org.hintfs.policy.PolicyContext;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one cache access for each policy, with 1 M samples and room for 10% of them: the policy
 * calls a miss makes (record, admit, victim, removed, added) or a hit makes (record), exactly as
 * the mount's cache makes them, over a stream of uniform epoch shuffles with scores set for every
 * sample (so shade and impact order by them).
 *
 * <p>Run after {@code mvn -DskipTests test-compile}: {@code tests/bench/jmh.sh} (it builds the
 * classpath and runs {@code org.openjdk.jmh.Main PolicyAccessBenchmark}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class PolicyAccessBenchmark {
  static final int SAMPLES = 1_000_000;
  static final int CAPACITY = SAMPLES / 10;

  @Param({"lru", "lfu", "static", "shade", "impact", "auto"})
  public String policy;

  private CachePolicy p;
  private BitSet cached;
  private int used;
  private int[] order;
  private int pos;

  @Setup(Level.Trial)
  public void setUp() {
    PolicyContext ctx = PolicyContext.plain(SAMPLES);
    SplittableRandom r = new SplittableRandom(1);
    for (int s = 0; s < SAMPLES; s++) {
      ctx.importance().set(s, (float) Math.log(10 + r.nextInt(64)));
    }
    p = Policies.create(policy, ctx);
    cached = new BitSet(SAMPLES);
    order = new int[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      order[i] = i;
    }
    for (int i = SAMPLES - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
  }

  @Benchmark
  public int access() {
    int s = order[pos];
    pos = pos + 1 == SAMPLES ? 0 : pos + 1;
    boolean hit = cached.get(s);
    p.recordAccess(s, hit);
    if (hit) {
      return s;
    }
    if (used < CAPACITY) {
      add(s);
    } else if (p.admit(s)) {
      int v = p.victim();
      if (v >= 0 && v != s) {
        cached.clear(v);
        p.removed(v);
        used--;
        add(s);
      }
    }
    return s;
  }

  private void add(int s) {
    cached.set(s);
    p.added(s);
    used++;
  }
}
