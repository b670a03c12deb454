package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hintfs.policy.sim.Simulator;
import org.hintfs.policy.sim.Trace;
import org.junit.jupiter.api.Test;

/**
 * The committed trace of a real training run (mount-scripts/record_importance_trace.py: a CNN on
 * scikit-learn's digits with SHADE-style importance sampling) through every policy.
 */
class RecordedTraceTest {
  static final Path TRACE = Path.of("..", "tests", "traces", "digits-importance.trace");

  @Test
  void everyPolicyReplaysTheRealTrace_withinCapacity_andSubstitutionKeepsImpactAbove90PercentLocal()
      throws Exception {
    Trace t;
    try (BufferedReader r = Files.newBufferedReader(TRACE)) {
      t = Trace.read(r);
    }
    // 1,797 digits, 8 epochs of 1,797 draws with replacement, one loss line per batch of 64.
    assertThat(t.samples()).isEqualTo(1797);
    assertThat(t.length()).isEqualTo(8 * 1797);
    assertThat(t.events()).hasSize(8 * 29); // ceil(1797 / 64) = 29 batches per epoch
    for (String p : Policies.names()) {
      Simulator.Result r = Simulator.run(t, p, 0.2, Simulator.Options.PLAIN);
      assertThat(r.reads()).isEqualTo(t.length());
      assertThat(r.hitRatio()).as(p).isBetween(0.0, 1.0);
    }
    Simulator.Result lru = Simulator.run(t, "lru", 0.2, Simulator.Options.PLAIN);
    Simulator.Result shade = Simulator.run(t, "shade", 0.2, Simulator.Options.PLAIN);
    assertThat(shade.hits()).isGreaterThanOrEqualTo(lru.hits());
    Simulator.Result impact =
        Simulator.run(
            t,
            "impact",
            0.2,
            new Simulator.Options(true, new SubstitutionChooser.Rules(1.0, true, true), 1));
    assertThat(impact.localRatio()).isGreaterThanOrEqualTo(0.9);
  }
}
