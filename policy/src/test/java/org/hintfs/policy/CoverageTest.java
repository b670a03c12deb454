package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CoverageTest {
  @Test
  void countsDistinctServed_perEpoch_andTheLongestUnservedRun() {
    int[] cls = {0, 0, 1, 1, -1}; // id 4 is outside the dataset
    Coverage c = new Coverage(cls, 0);
    assertThat(c.datasetSize()).isEqualTo(4);
    assertThat(c.renumber(3)).isTrue(); // nothing read yet: the first announced epoch numbers it
    c.served(0, false);
    c.served(0, false);
    c.served(1, true); // 1 stood in for another
    c.served(4, false);
    assertThat(c.renumber(9)).isFalse();
    c.newEpoch(4); // epoch 3: 0 and 1 served; 2 and 3 not
    c.served(2, false);
    c.newEpoch(5); // epoch 4: 0, 1 and 3 not served (3: two epochs in a row)
    List<Coverage.Epoch> es = c.epochs();
    assertThat(es).hasSize(3);
    assertThat(es.get(0)).isEqualTo(new Coverage.Epoch(3, 4, 2, 4, 1, true));
    assertThat(es.get(0).coverage()).isEqualTo(0.5);
    assertThat(es.get(1)).isEqualTo(new Coverage.Epoch(4, 1, 1, 4, 0, true));
    assertThat(es.get(2).complete()).isFalse();
    assertThat(c.longestUnserved()).isEqualTo(2);
  }

  @Test
  void withNoEpochAnnounced_aDatasetsWorthOfReadsEndsOne_once() {
    Coverage c = new Coverage(new int[] {0, 1, 0}, 0);
    assertThat(c.served(0, false)).isFalse();
    assertThat(c.served(1, false)).isFalse();
    assertThat(c.served(1, false)).isTrue();
    assertThat(c.served(2, false)).isFalse(); // told once; the caller ends the epoch
    c.newEpoch(1);
    assertThat(c.epochs().get(0).distinct()).isEqualTo(3);
    assertThat(c.longestUnserved()).isZero();
  }
}
