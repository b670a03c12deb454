package org.hintfs.fs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VersionTest {
  @Test
  void aValueTheBuildDidNotFillIn_readsUnknown() {
    // Classes compiled outside Maven see the resource unfiltered, or none at all.
    assertThat(Version.known("${hintfs.commit}")).isEqualTo("unknown");
    assertThat(Version.known(null)).isEqualTo("unknown");
    assertThat(Version.known(" ")).isEqualTo("unknown");
    assertThat(Version.known("ba9f87ede699-dirty\n")).isEqualTo("ba9f87ede699-dirty");
  }

  @Test
  void describe_namesTheReleaseAndTheCommit() {
    assertThat(Version.describe()).isEqualTo(Version.VERSION + " (commit " + Version.COMMIT + ")");
    assertThat(Version.VERSION).matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
  }
}
