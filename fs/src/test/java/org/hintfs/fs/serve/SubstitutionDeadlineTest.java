package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.hintfs.backing.FaultInjectingSource;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With substitution on, a miss the rules would have its reader wait for (a fetch under way, the
 * first epoch, an H-sample, an owed one) and that the source has not answered within its deadline
 * no longer holds the reader: the open is served a cached stand-in of the same class under the cap.
 * A source that answers within the deadline is waited for as before. In-process, no FUSE: {@link
 * HintFs} as the adapter drives it.
 */
class SubstitutionDeadlineTest {
  private static final long PID = ProcessHandle.current().pid();

  @TempDir Path tmp;
  private HintFs fs;
  private FaultInjectingSource source;

  @AfterEach
  void close() throws Exception {
    if (source != null) {
      source.latency(0);
    }
    if (fs != null) {
      fs.close();
      fs.cache().close();
    }
  }

  @Test
  void aPrefetchTheHungSourceHasNotAnswered_isStoodInFor_pastItsDeadline() throws Exception {
    List<byte[]> cats = mountWithFiveCatsCached();
    control("dataset train\nsubstitution on max 1 from-start\n");

    // The source hangs (every read takes a minute) while an admin's prefetch of cat 7 is under way.
    source.latency(60_000);
    control("prefetch train/cat/07.jpg\n");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!fs.cache().isFetching(catalogId("/train/cat/07.jpg"))) {
      assertThat(System.nanoTime()).as("the prefetch started").isLessThan(deadline);
      Thread.sleep(10);
    }

    // The reader opens cat 7. Before: a fetch in flight was always waited for (a minute here).
    // Now: after the source's deadline (1 s: fewer than 16 answers so far) a cached cat stands in.
    long t0 = System.nanoTime();
    byte[] got = read("/train/cat/07.jpg");
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertThat(seconds).isLessThan(10);
    assertThat(cats).anySatisfy(c -> assertThat(got).isEqualTo(c));
    JsonNode sub = stats().path("substitution");
    assertThat(sub.path("fetches_past_deadline").asLong()).isEqualTo(1);
    assertThat(stats().path("substitutions").asLong()).isEqualTo(1);
  }

  @Test
  void aMissTheRulesWouldWaitFor_isStoodInFor_onlyWhenTheSourceIsPastItsDeadline()
      throws Exception {
    List<byte[]> cats = mountWithFiveCatsCached();
    // The default rules: in the first epoch nothing is substituted (the warm-up); a miss waits for
    // the source. Five reads of cached dogs let the cap (a fifth of the reads) allow one.
    control("dataset train\nsubstitution on\n");
    for (int i = 0; i < 5; i++) {
      read("/train/dog/0" + i + ".jpg");
    }

    // A source that answers within its deadline (1 s before 16 answers): the miss is waited for.
    source.latency(100);
    assertThat(new String(read("/train/cat/06.jpg"), StandardCharsets.UTF_8)).startsWith("cat6-");
    assertThat(stats().path("substitutions").asLong()).isZero();
    assertThat(stats().path("substitution").path("fetches_past_deadline").asLong()).isZero();

    // The source hangs: before, the reader waited for it (a minute here); now a cat stands in.
    source.latency(60_000);
    long t0 = System.nanoTime();
    byte[] got = read("/train/cat/07.jpg");
    assertThat((System.nanoTime() - t0) / 1e9).isLessThan(10);
    assertThat(cats).anySatisfy(c -> assertThat(got).isEqualTo(c));
    JsonNode s = stats();
    assertThat(s.path("substitution").path("fetches_past_deadline").asLong()).isEqualTo(1);
    assertThat(s.path("substitution").path("substituted_past_deadline").asLong()).isEqualTo(1);
    assertThat(s.path("substitutions").asLong()).isEqualTo(1);
  }

  /** Cats and dogs 0-9 at the source; cats 0-4 (returned) and dogs 0-4 read, so cached. */
  private List<byte[]> mountWithFiveCatsCached() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    List<byte[]> cats = HintFsReads.catsAndDogs(src, 100).subList(0, 5);
    source = new FaultInjectingSource(new LocalDirSource(src));
    fs =
        Mount.create(
            source,
            Mount.listCatalog(source),
            MountConfig.defaults(src.toString(), tmp.resolve("mnt"))
                .withCache(tmp.resolve("cache"), "100%"));
    for (int i = 0; i < 5; i++) {
      assertThat(read("/train/cat/0" + i + ".jpg")).isEqualTo(cats.get(i));
      read("/train/dog/0" + i + ".jpg");
    }
    return cats;
  }

  private int catalogId(String path) throws Exception {
    return fs.resolve(path);
  }

  private byte[] read(String path) throws Exception {
    return HintFsReads.file(fs, path, PID);
  }

  private void control(String text) throws Exception {
    HintFsReads.control(fs, text, PID);
  }

  private JsonNode stats() throws Exception {
    return HintFsReads.stats(fs, PID);
  }
}
