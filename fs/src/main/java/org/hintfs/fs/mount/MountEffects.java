package org.hintfs.fs.mount;

import java.io.IOException;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.serve.TraceRecorder;
import org.hintfs.fs.store.TieredCache;
import org.hintfs.policy.Policies;

/**
 * What applying a hint does to the mount ({@link HintState.Effects}), and the cache's residency
 * changes the substitution chooser follows: the wiring between the hint state, the cache, the
 * prefetchers and admin work.
 */
final class MountEffects {
  private MountEffects() {}

  /** Connects {@code fs}'s hint state to its cache, prefetchers and admin work. */
  static void wire(HintFs fs) {
    TieredCache cache = fs.cache();
    HintState hints = fs.hints();
    cache
        .index()
        .setListener(
            new org.hintfs.fs.store.CacheIndex.Listener() {
              @Override
              public void added(int id) {
                var c = hints.substitution.chooser();
                if (c != null) {
                  c.cached(id);
                }
              }

              @Override
              public void removed(int id) {
                var c = hints.substitution.chooser();
                if (c != null) {
                  c.uncached(id);
                }
              }
            });
    // Homes that move away leave their files here as guests, not as this node's own.
    if (fs.cluster() != null) {
      fs.cluster().refileWhenHomesMove(cache.index());
    }
    // A stream that ends leaves estimated next uses behind: re-key what is cached without them.
    hints.streams().onEnd(s -> cache.index().orderChanged());
    hints.setNextHeadLength(fs.config().prefetchWindow());
    hints.connect(
        new HintState.Effects() {
          @Override
          public void underPolicyLock(Runnable r) {
            cache.index().underLock(r);
          }

          @Override
          public void switchPolicy(String name) {
            cache.index().switchPolicy(Policies.create(name, hints.context()));
          }

          @Override
          public void trace(boolean on) {
            try {
              fs.setTrace(on ? fs.config().tracePath() : null);
            } catch (IOException e) {
              fs.backgroundErrors().record("trace", String.valueOf(fs.config().tracePath()), e);
            }
          }

          @Override
          public int[] cachedIds() {
            return cache.index().cachedIds();
          }

          @Override
          public void orderChanged(org.hintfs.fs.stream.Stream s) {
            cache.index().orderChanged();
            fs.prefetcher().reset(s);
          }

          @Override
          public void epochStarted(int epoch) {
            fs.startEpochCounters();
          }

          @Override
          public void owed(int[] ids) {
            fs.owedPrefetch().start(ids);
          }

          @Override
          public void admin(org.hintfs.fs.control.Hint.Admin a) {
            fs.admin().apply(a);
          }

          @Override
          public void packed(org.hintfs.fs.control.Hint.Packed p) {
            fs.packed(p);
          }

          @Override
          public void recordScores(boolean losses, int[] ids, float[] values) {
            TraceRecorder t = fs.trace();
            if (t != null) {
              int[] samples = new int[ids.length];
              for (int k = 0; k < ids.length; k++) {
                samples[k] = hints.sampleOf(ids[k]);
              }
              t.scores(losses, samples, values);
            }
          }
        });
  }
}
