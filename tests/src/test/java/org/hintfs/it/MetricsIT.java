package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --metrics-port}: Prometheus text whose counters count what the test did. */
class MetricsIT {
  static final Pattern SAMPLE =
      Pattern.compile(
          "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\")*\\})?"
              + " (-?[0-9.]+(E-?[0-9]+)?|NaN|\\+Inf|-Inf)");
  static final Pattern TYPE =
      Pattern.compile(
          "# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)");

  @TempDir Path tmp;
  Path mnt;

  @AfterEach
  void tearDown() {
    Hintfs.unmountQuietly(mnt);
  }

  /** Parses Prometheus text format 0.0.4 strictly: every line a comment or a sample. */
  static Map<String, Double> parse(String text) {
    Map<String, Double> out = new TreeMap<>();
    Set<String> typed = new HashSet<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("# HELP ")) {
        continue;
      }
      Matcher t = TYPE.matcher(line);
      if (t.matches()) {
        typed.add(t.group(1));
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("not Prometheus text: '%s'", line).isTrue();
      String name = m.group(1);
      String family = name.replaceAll("_(total|bucket|count|sum|created)$", "");
      assertThat(typed.contains(name) || typed.contains(family))
          .as("no # TYPE before %s", name)
          .isTrue();
      out.put(name + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(4)));
    }
    return out;
  }

  static Map<String, Double> scrape(int port) throws Exception {
    HttpResponse<String> resp =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(resp.statusCode()).isEqualTo(200);
    return parse(resp.body());
  }

  @Test
  void theEndpointParsesAsPrometheusText_andCountsWhatTheTestDid() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(8);
    long sourceBytes = 0;
    for (int i = 0; i < 30; i++) {
      Path f = src.resolve("c" + (i % 3) + "/f" + i + ".jpg");
      Files.createDirectories(f.getParent());
      int size = 2000 + rnd.nextInt(60_000);
      HostileTree.write(f, rnd, size);
      sourceBytes += size;
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    int port = Ports.free();
    // The whole dataset fits (--cache-size 100%), and nothing is fetched but what the test opens:
    // no prefetch window, no order recognition. Every figure below is then the test's own count.
    Hintfs.mount(
        src,
        mnt,
        "--metrics-port",
        "127.0.0.1:" + port,
        "--cache-size",
        "100%",
        "--prefetch-window",
        "0",
        "--no-detect-order");
    // Before the test's reads: the mount command's own wait for the mount to answer opened
    // .hintfs/stats, and hintfs_opens_total and hintfs_read_bytes_total count virtual files too;
    // nothing was fetched. Opens and bytes read are counted from here.
    Map<String, Double> m0 = scrape(port);
    double opens0 = m0.get("hintfs_opens_total");
    double readBytes0 = m0.get("hintfs_read_bytes_total");
    assertThat(m0.get("hintfs_open_misses_total")).isZero();
    assertThat(m0.get("hintfs_source_bytes_total")).isZero();

    // Pass 1, cold: 30 opens, each a miss fetched once from the source, whose bytes the test got.
    long readBytes = 0;
    for (int i = 0; i < 30; i++) {
      readBytes += Files.readAllBytes(mnt.resolve("c" + (i % 3) + "/f" + i + ".jpg")).length;
    }
    assertThat(readBytes).isEqualTo(sourceBytes);
    Map<String, Double> m1 = scrape(port);
    assertThat(m1.get("hintfs_opens_total") - opens0).isEqualTo(30.0);
    assertThat(m1.get("hintfs_open_misses_total")).isEqualTo(30.0);
    assertThat(m1.get("hintfs_open_hits_total")).isZero();
    assertThat(m1.get("hintfs_cache_misses_total")).isEqualTo(30.0);
    assertThat(m1.get("hintfs_source_fetch_duration_seconds_count")).isEqualTo(30.0);
    assertThat(m1.get("hintfs_source_bytes_total")).isEqualTo((double) sourceBytes);
    assertThat(m1.get("hintfs_read_bytes_total") - readBytes0).isEqualTo((double) readBytes);
    assertThat(m1.get("hintfs_admitted_total")).isEqualTo(30.0);
    assertThat(m1.get("hintfs_cached_files")).isEqualTo(30.0);
    assertThat(m1.get("hintfs_evictions_total")).isZero();
    // Each file (2,000-62,000 bytes) is stored with a 32-byte header on whole 4 KiB LMDB pages:
    // at least its bytes, at most one page more per file.
    assertThat(m1.get("hintfs_cache_used_bytes"))
        .isBetween((double) sourceBytes, (double) sourceBytes + 30 * 4096);
    // Every read that reached the daemon was timed: at least one per file.
    assertThat(m1.get("hintfs_read_duration_seconds_count")).isGreaterThanOrEqualTo(30.0);
    assertThat(m1.get("hintfs_read_duration_seconds_bucket{le=\"+Inf\"}"))
        .isEqualTo(m1.get("hintfs_read_duration_seconds_count"));

    // Pass 2: the same 30 files, all cached now: 30 more opens, every one a hit, no source traffic.
    for (int i = 0; i < 30; i++) {
      Files.readAllBytes(mnt.resolve("c" + (i % 3) + "/f" + i + ".jpg"));
    }
    // One lookup of a name that is not there: one ENOENT.
    assertThat(Files.exists(mnt.resolve("c0/missing.jpg"))).isFalse();
    Map<String, Double> m2 = scrape(port);
    assertThat(m2.get("hintfs_opens_total") - opens0).isEqualTo(60.0);
    assertThat(m2.get("hintfs_open_hits_total")).isEqualTo(30.0);
    assertThat(m2.get("hintfs_open_misses_total")).isEqualTo(30.0);
    assertThat(m2.get("hintfs_cache_misses_total")).isEqualTo(30.0);
    assertThat(m2.get("hintfs_source_bytes_total")).isEqualTo((double) sourceBytes);
    assertThat(m2.get("hintfs_cached_files")).isEqualTo(30.0);
    assertThat(m2.get("hintfs_errors_total{errno=\"ENOENT\"}")).isEqualTo(1.0);
    // Pass 2's reads come from the kernel's page cache (keep_cache) or, if the kernel asks, from
    // the cache's tiers: never more than one hit per file.
    assertThat(
            m2.get("hintfs_cache_hits_total{tier=\"ram\"}")
                + m2.get("hintfs_cache_hits_total{tier=\"disk\"}"))
        .isBetween(0.0, 30.0);
  }

  @Test
  void aBadMetricsPortIsOneClearLine() throws Exception {
    mnt = Files.createDirectories(tmp.resolve("mnt2"));
    Hintfs.Result r =
        Hintfs.run(
            "mount", tmp.toString(), mnt.toString(), "--metrics-port", "99999", "--no-disk-cache");
    assertThat(r.rc()).isNotZero();
    assertThat(r.out().strip())
        .isEqualTo("hintfs: --metrics-port takes [HOST:]PORT with PORT 1-65535, not '99999'");
  }
}
