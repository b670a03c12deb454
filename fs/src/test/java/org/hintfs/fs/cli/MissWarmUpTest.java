package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The miss path's warm-up against its in-process S3: real HTTP on loopback, the real client. */
class MissWarmUpTest {
  private static long leftovers() throws IOException {
    try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return s.filter(p -> p.getFileName().toString().startsWith("hintfs-miss-warm-up")).count();
    }
  }

  @Test
  void makesItsGets_thenRemovesWhatItMade() throws Exception {
    long before = leftovers();
    MissWarmUp.Result r = MissWarmUp.run(50_000, 16, () -> false);
    assertThat(r.stopped()).isIn("all made", "out of time");
    if (r.stopped().equals("all made")) {
      assertThat(r.gets()).isEqualTo(MissWarmUp.GETS);
    } else {
      assertThat(r.gets()).isBetween(1, MissWarmUp.GETS);
      assertThat(r.millis()).isGreaterThanOrEqualTo(MissWarmUp.BUDGET_MILLIS);
    }
    assertThat(leftovers()).isEqualTo(before);
  }

  @Test
  void stopsAtTheFirstReader() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    MissWarmUp.Result r = MissWarmUp.run(4_096, 16, () -> asked.incrementAndGet() > 40);
    assertThat(r.stopped()).isEqualTo("a reader came");
    // Each of the 8 threads asks before each GET: at most 40 GETs were started.
    assertThat(r.gets()).isBetween(1, 40);
  }
}
