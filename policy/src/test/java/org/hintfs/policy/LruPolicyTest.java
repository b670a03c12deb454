package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class LruPolicyTest {

  @Test
  void evictsTheLeastRecentlyUsed() {
    LruPolicy p = new LruPolicy(10);
    p.added(1);
    p.added(2);
    p.added(3); // order, most recent first: 3 2 1
    p.recordAccess(1, true); // 1 3 2
    assertThat(p.victim()).isEqualTo(2);
    p.removed(2);
    assertThat(p.victim()).isEqualTo(3);
    p.recordAccess(7, false); // a miss of an uncached sample changes nothing
    assertThat(p.victim()).isEqualTo(3);
    assertThat(p.size()).isEqualTo(2);
    p.checkInvariants();
  }

  @Property(tries = 200)
  void matchesAReferenceLru(
      @ForAll @Size(max = 300) List<@IntRange(min = 0, max = 19) Integer> accesses,
      @ForAll @IntRange(min = 1, max = 8) int capacity) {
    // Reference: a deque of ids, most recent first, capacity in samples.
    Deque<Integer> ref = new ArrayDeque<>();
    LruPolicy p = new LruPolicy(20);
    for (int s : accesses) {
      boolean hit = ref.remove(s);
      assertThat(p.contains(s)).isEqualTo(hit);
      p.recordAccess(s, hit);
      if (!hit) {
        if (ref.size() == capacity) {
          int v = ref.removeLast();
          assertThat(p.victim()).isEqualTo(v);
          p.removed(v);
        }
        p.added(s);
      }
      ref.addFirst(s);
      p.checkInvariants();
    }
    assertThat(p.size()).isEqualTo(ref.size());
  }

  @Test
  void registryNamesThePoliciesItKnows() {
    assertThat(Policies.names())
        .contains("auto", "lru", "lfu", "static", "shade", "impact", "clairvoyant");
    assertThat(Policies.create("lru", 3).name()).isEqualTo("lru");
    assertThatThrownBy(() -> Policies.create("nope", 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("choose one of auto, lru");
  }
}
