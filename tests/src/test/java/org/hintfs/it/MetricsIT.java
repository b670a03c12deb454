package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
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

/** {@code --metrics-port}: Prometheus text whose counters match {@code /.hintfs/stats}. */
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

  @Test
  void theEndpointParsesAsPrometheusTextAndItsCountersMatchStats() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src"));
    Random rnd = new Random(8);
    for (int i = 0; i < 30; i++) {
      Path f = src.resolve("c" + (i % 3) + "/f" + i + ".jpg");
      Files.createDirectories(f.getParent());
      HostileTree.write(f, rnd, 2000 + rnd.nextInt(60_000));
    }
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Hintfs.mount(src, mnt, "--metrics-port", "127.0.0.1:" + port, "--cache-size", "50%");
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < 30; i++) {
        Files.readAllBytes(mnt.resolve("c" + (i % 3) + "/f" + i + ".jpg"));
      }
    }
    assertThat(Files.exists(mnt.resolve("c0/missing.jpg"))).isFalse();
    // Let the background writer settle so both reads see the same cache.
    Thread.sleep(500);
    HttpResponse<String> resp =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(resp.statusCode()).isEqualTo(200);
    Map<String, Double> m = parse(resp.body());
    JsonNode s = new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
    assertThat(m.get("hintfs_open_hits_total")).isEqualTo(s.path("open_hits").asDouble());
    assertThat(m.get("hintfs_open_misses_total")).isEqualTo(s.path("open_misses").asDouble());
    assertThat(m.get("hintfs_open_misses_total")).isGreaterThanOrEqualTo(30.0);
    assertThat(m.get("hintfs_cache_misses_total")).isEqualTo(s.path("misses").asDouble());
    assertThat(m.get("hintfs_source_bytes_total")).isEqualTo(s.path("source_bytes").asDouble());
    assertThat(
            m.get("hintfs_cache_hits_total{tier=\"ram\"}")
                + m.get("hintfs_cache_hits_total{tier=\"disk\"}"))
        .isEqualTo(s.path("hits").asDouble());
    assertThat(m.get("hintfs_evictions_total")).isEqualTo(s.path("evictions").asDouble());
    assertThat(m.get("hintfs_cache_used_bytes")).isEqualTo(s.path("cache_used_bytes").asDouble());
    assertThat(m.get("hintfs_cached_files")).isEqualTo(s.path("cached_files").asDouble());
    assertThat(m.get("hintfs_errors_total{errno=\"ENOENT\"}"))
        .isEqualTo(s.path("errors").path("ENOENT").asDouble())
        .isPositive();
    // Every read of a dataset file that reaches the daemon is in the histogram (the second pass
    // is the kernel's page cache); fetches are timed too.
    assertThat(m.get("hintfs_read_duration_seconds_count")).isGreaterThanOrEqualTo(30.0);
    assertThat(m.get("hintfs_read_duration_seconds_bucket{le=\"+Inf\"}"))
        .isEqualTo(m.get("hintfs_read_duration_seconds_count"));
    assertThat(m.get("hintfs_source_fetch_duration_seconds_count"))
        .isEqualTo(s.path("misses").asDouble());
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
