package org.hintfs.fs.control;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hintfs.policy.Importance;

/**
 * Importance per job. The policies see one array ({@code combined}): for every sample, the highest
 * score any job gave it (a sample one job finds hard is worth keeping for the node). One job writes
 * straight into that array, so a lone job costs nothing extra.
 */
final class JobScores {
  private final int entries;
  private final Importance combined;
  private final Map<String, Importance> byJob = new HashMap<>();

  JobScores(int entries, Importance combined) {
    this.entries = entries;
    this.combined = combined;
  }

  /** Jobs that sent scores, sorted. */
  synchronized List<String> jobs() {
    return byJob.keySet().stream().sorted().toList();
  }

  /** The scores of {@code job}, made on its first line. */
  synchronized Importance of(String job) {
    if (byJob.isEmpty()) {
      // One job writes straight into the policies' scores: a lone job costs nothing extra.
      byJob.put(job, combined);
      return combined;
    }
    Importance imp = byJob.get(job);
    if (imp != null) {
      return imp;
    }
    for (Map.Entry<String, Importance> e : byJob.entrySet()) {
      if (e.getValue() == combined) {
        // A second job: the first one's scores move to an array of its own.
        Importance own = new Importance(entries);
        for (int s = 0; s < entries; s++) {
          if (combined.known(s)) {
            own.set(s, combined.score(s));
          }
        }
        e.setValue(own);
      }
    }
    imp = new Importance(entries);
    byJob.put(job, imp);
    return imp;
  }

  /** The policies' score of each sample is the highest any job gave it. Under the policy lock. */
  void combine(Importance changed, int[] samples) {
    if (changed == combined) {
      return;
    }
    synchronized (this) {
      for (int s : samples) {
        float best = Float.NaN;
        for (Importance job : byJob.values()) {
          if (job.known(s) && !(job.score(s) <= best)) {
            best = job.score(s);
          }
        }
        if (!Float.isNaN(best)) {
          combined.set(s, best);
        }
      }
    }
  }
}
