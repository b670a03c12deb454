package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.hintfs.policy.sampler.TorchSamplers;
import org.junit.jupiter.api.Test;

/** The sampler replay against real torch (Debian's python3-torch, /usr/bin/python3). */
class TorchReplayIT {
  static final String SCRIPT =
      Hintfs.ROOT.resolve("tests/src/test/python/torch_orders.py").toString();
  static final ObjectMapper JSON = new ObjectMapper();

  static String digest(int[] indices) throws Exception {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < indices.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(indices[i]);
    }
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256")
                .digest(sb.toString().getBytes(StandardCharsets.UTF_8)));
  }

  static JsonNode torch(ArrayNode cases) throws Exception {
    Process p = new ProcessBuilder("/usr/bin/python3", SCRIPT).redirectErrorStream(false).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(JSON.writeValueAsBytes(cases));
    }
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(600, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(err).isZero();
    return JSON.readTree(out);
  }

  @Test
  void distributedSamplerOrdersAreBitExact() throws Exception {
    ArrayNode cases = JSON.createArrayNode();
    List<long[]> params = new ArrayList<>(); // n, world, rank, shuffle, seed, epoch, dropLast
    long[][] grid = {
      {1, 1, 0},
      {10, 3, 2},
      {100, 8, 7},
      {1000, 8, 0},
      {1001, 8, 3},
      {5000, 7, 6},
      {37, 4, 1},
      {1_281_167, 8, 0},
      {1_281_167, 8, 5}
    };
    long[] seeds = {0, 1234, -7, 5_000_000_000L};
    int k = 0;
    for (long[] g : grid) {
      for (long seed : seeds) {
        boolean big = g[0] > 100_000;
        if (big && k++ % 2 == 1) {
          continue; // the ImageNet-sized cases are slow in Python: half the seeds suffice
        }
        long epoch = (seed & 3) + (big ? 0 : 2);
        for (int variant = 0; variant < (big ? 1 : 2); variant++) {
          boolean shuffle = variant == 0 || g[0] % 2 == 0;
          boolean dropLast = variant == 1;
          ObjectNode c = cases.addObject();
          c.put("kind", "distributed").put("n", g[0]).put("world", g[1]).put("rank", g[2]);
          c.put("shuffle", shuffle)
              .put("seed", seed)
              .put("epoch", epoch)
              .put("drop_last", dropLast);
          params.add(new long[] {g[0], g[1], g[2], shuffle ? 1 : 0, seed, epoch, dropLast ? 1 : 0});
        }
      }
    }
    JsonNode want = torch(cases);
    for (int i = 0; i < params.size(); i++) {
      long[] c = params.get(i);
      int[] got =
          TorchSamplers.distributed(
              (int) c[0], (int) c[1], (int) c[2], c[3] == 1, c[4], c[5], c[6] == 1);
      assertThat(digest(got)).as("case %s", cases.get(i)).isEqualTo(want.get(i).get(0).asText());
    }
    assertThat(params.size()).isGreaterThan(30);
  }

  @Test
  void dataLoaderShuffleWithAGenerator_overThreeEpochs_isBitExact() throws Exception {
    ArrayNode cases = JSON.createArrayNode();
    long[][] params = {{1000, 42, 0}, {1000, 42, 1}, {777, -3, 0}, {20_000, 1 << 33, 1}};
    for (long[] p : params) {
      cases
          .addObject()
          .put("kind", "dataloader")
          .put("n", p[0])
          .put("seed", p[1])
          .put("epochs", 3)
          .put("persistent", p[2] == 1);
    }
    JsonNode want = torch(cases);
    for (int i = 0; i < params.length; i++) {
      int[][] got =
          TorchSamplers.dataLoaderShuffle((int) params[i][0], params[i][1], 3, params[i][2] == 1);
      for (int e = 0; e < 3; e++) {
        assertThat(digest(got[e]))
            .as("case %d epoch %d", i, e)
            .isEqualTo(want.get(i).get(e).asText());
      }
      // The replay a mount uses: epoch 2 alone, epochs 0 and 1 skipped, not built.
      int[] alone =
          new org.hintfs.policy.sampler.ShuffleReplay(
                  (int) params[i][0], params[i][1], params[i][2] == 1)
              .epoch(2);
      assertThat(digest(alone))
          .as("case %d epoch 2 alone", i)
          .isEqualTo(want.get(i).get(2).asText());
    }
  }
}
