package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials from the cloud, for real: a mount with no keys in its environment takes them from a
 * web identity (STS), a container endpoint or instance metadata, all on loopback ({@link
 * CredentialsEndpoint}), and keeps reading while they expire and the server's key changes.
 */
class CloudCredentialsIT {
  @TempDir static Path tmp;
  static S3ProxyServer s3;
  static Path flat;
  static List<String> files = new ArrayList<>();
  static final String BIG = "big/shard.bin";
  static final int BIG_SIZE = 40 << 20;
  Path mnt;
  CredentialsEndpoint creds;

  @BeforeAll
  static void start() throws Exception {
    assertThat(System.getenv("AWS_ACCESS_KEY_ID")).as("the suite runs with no keys").isNull();
    s3 = new S3ProxyServer(tmp).start();
    flat = Files.createDirectories(tmp.resolve("flat"));
    Random rnd = new Random(62);
    // 120 files of 20-80 KB in 6 classes: an epoch, each file read once.
    for (int i = 0; i < 120; i++) {
      String rel = "c" + (i % 6) + "/img" + i + ".jpg";
      Files.createDirectories(flat.resolve(rel).getParent());
      HostileTree.write(flat.resolve(rel), rnd, 20_000 + rnd.nextInt(60_000));
      files.add(rel);
    }
    // One large file, read in blocks straight from the socket over presigned URLs.
    Files.createDirectories(flat.resolve(BIG).getParent());
    HostileTree.write(flat.resolve(BIG), rnd, BIG_SIZE);
    s3.upload("train", "flat/", flat);
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  @AfterEach
  void unmount() throws Exception {
    if (mnt != null) {
      Hintfs.unmountQuietly(mnt);
    }
    if (creds != null) {
      creds.close();
    }
    if (rotated) { // the next test starts from the suite's own identity
      s3.kill();
      s3.identity(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY).start();
      rotated = false;
    }
  }

  boolean rotated;

  JsonNode stats() throws IOException {
    return new ObjectMapper().readTree(Files.readAllBytes(mnt.resolve(".hintfs/stats")));
  }

  /** The environment of each way in, with no keys in it. */
  Map<String, String> env(String kind) throws IOException {
    Map<String, String> env = new HashMap<>();
    env.put("AWS_EC2_METADATA_DISABLED", "true");
    switch (kind) {
      case "web-identity" -> {
        Path token =
            Files.writeString(tmp.resolve("web-identity-token"), CredentialsEndpoint.WEB_TOKEN);
        env.put("AWS_WEB_IDENTITY_TOKEN_FILE", token.toString());
        env.put("AWS_ROLE_ARN", CredentialsEndpoint.ROLE_ARN);
        env.put("AWS_ENDPOINT_URL_STS", creds.url());
      }
      case "container" -> {
        Path token =
            Files.writeString(
                tmp.resolve("container-token"), CredentialsEndpoint.CONTAINER_TOKEN + "\n");
        env.put("AWS_CONTAINER_CREDENTIALS_FULL_URI", creds.url() + "/creds");
        env.put("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token.toString());
      }
      case "instance-metadata" -> {
        env.put("AWS_EC2_METADATA_DISABLED", "false");
        env.put("AWS_EC2_METADATA_SERVICE_ENDPOINT", creds.url());
      }
      default -> throw new IllegalArgumentException(kind);
    }
    return env;
  }

  Path mount(String kind, String... more) throws Exception {
    mnt = Files.createDirectories(tmp.resolve("mnt-" + kind));
    List<String> args =
        new ArrayList<>(
            List.of(
                "--endpoint", s3.endpoint(), "--log-file", tmp.resolve(kind + ".log").toString()));
    args.addAll(List.of(more));
    Hintfs.mountS3(env(kind), "s3://train/flat", mnt, args.toArray(String[]::new));
    return tmp.resolve(kind + ".log");
  }

  @Test
  void aMountWithNoKeys_takesThemFromAWebIdentity_aContainerEndpoint_orInstanceMetadata()
      throws Exception {
    for (String kind : List.of("web-identity", "container", "instance-metadata")) {
      creds =
          new CredentialsEndpoint(
              S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY, Duration.ofMinutes(15));
      Path log = mount(kind);
      String f = files.get(7);
      assertThat(Files.readAllBytes(mnt.resolve(f)))
          .as(kind)
          .isEqualTo(Files.readAllBytes(flat.resolve(f)));
      JsonNode c = stats().path("credentials");
      assertThat(c.path("kind").asText()).isEqualTo(kind);
      assertThat(c.path("access_key_id").asText()).isEqualTo(S3ProxyServer.ACCESS_KEY);
      assertThat(c.path("session").asBoolean()).isTrue();
      assertThat(c.path("expires").asText()).matches("20\\d\\d-\\d\\d-\\d\\dT.*Z");
      Hintfs.Result st = Hintfs.run("status", mnt.toString());
      assertThat(st.rc()).as(st.out()).isZero();
      String row =
          st.out().lines().filter(l -> l.strip().startsWith("credentials")).findFirst().orElse("");
      assertThat(row)
          .as(st.out())
          .contains(
              switch (kind) {
                case "web-identity" -> "web identity: role " + CredentialsEndpoint.ROLE_ARN;
                case "container" -> "container credentials at " + creds.url() + "/creds";
                default -> "instance metadata at " + creds.url();
              })
          .contains("expire 20");
      // Each endpoint was asked as its protocol says (IMDSv2: a session token first; the endpoint
      // refuses a GET without one).
      switch (kind) {
        case "web-identity" -> assertThat(creds.stsCalls.get()).isPositive();
        case "container" -> assertThat(creds.containerCalls.get()).isPositive();
        default -> {
          assertThat(creds.imdsTokenPuts.get()).isPositive();
          assertThat(creds.imdsCredentialCalls.get()).isPositive();
        }
      }
      assertThat(creds.refused.get()).isZero();
      assertNoSecretsShown(st.out(), log);
      Hintfs.unmountQuietly(mnt);
      creds.close();
    }
  }

  /** Neither the secret key nor a session token nor a request token in status, log or /proc. */
  void assertNoSecretsShown(String status, Path log) throws IOException {
    List<String> places = new ArrayList<>();
    places.add(status);
    places.add(new String(Files.readAllBytes(mnt.resolve(".hintfs/stats"))));
    places.add(Files.readString(log));
    for (long pid : Hintfs.daemonsFor(mnt)) {
      places.add(new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline"))));
      places.add(new String(Files.readAllBytes(Path.of("/proc/" + pid + "/environ"))));
    }
    assertThat(places).hasSizeGreaterThan(3);
    for (String p : places) {
      assertThat(p)
          .doesNotContain(S3ProxyServer.SECRET_KEY)
          .doesNotContain("ROTATED-SECRET")
          .doesNotContain(CredentialsEndpoint.SESSION_TOKEN_PREFIX)
          .doesNotContain(CredentialsEndpoint.WEB_TOKEN)
          .doesNotContain(CredentialsEndpoint.CONTAINER_TOKEN);
    }
  }

  @Test
  void anEpochAcrossTwoKeyRotations_with60sCredentials_hasNoReaderErrorAndNoWrongByte()
      throws Exception {
    // Credentials live 60 s (renewed in the background after 30 s). The server's key is changed
    // twice mid-epoch: S3Proxy stops, the endpoint hands out the next key, S3Proxy starts with
    // it. The old key is refused from then on, as a revoked or rotated key is.
    creds =
        new CredentialsEndpoint(
            S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY, Duration.ofSeconds(60));
    Path log = mount("container");
    long pid = stats().path("pid").asLong();
    List<String> order = new ArrayList<>(files);
    Collections.shuffle(order, new Random(7));
    int errors = 0;
    int wrong = 0;
    long t0 = System.nanoTime();
    // 120 files, one every 0.5 s: 60 s. The rotations at 8 s and 50 s: the first one's refusal
    // fetches new credentials at ~10 s, which are renewed in the background 30 s later (~40 s),
    // well away from the second. The large file's first MiB is read before the first rotation
    // (its URL signed with the old keys, a block or two fetched), the rest at 16 s, after small
    // files' GETs have been refused and sent again with the new keys.
    try (RandomAccessFile big = new RandomAccessFile(mnt.resolve(BIG).toFile(), "r")) {
      byte[] want = Files.readAllBytes(flat.resolve(BIG));
      int bigAt = 0;
      boolean rotated1 = false;
      boolean rotated2 = false;
      for (int i = 0; i < order.size(); i++) {
        double t = (System.nanoTime() - t0) / 1e9;
        if (!rotated1 && t >= 8) {
          rotate("ROTATED-KEY-1", "ROTATED-SECRET-1");
          rotated1 = true;
        }
        if (!rotated2 && t >= 50) {
          rotate("ROTATED-KEY-2", "ROTATED-SECRET-2");
          rotated2 = true;
        }
        if ((i == 5 && bigAt == 0) || (t >= 16 && bigAt < BIG_SIZE)) {
          int n = bigAt == 0 ? 1 << 20 : BIG_SIZE - bigAt;
          byte[] got = new byte[n];
          try {
            big.seek(bigAt);
            big.readFully(got);
            if (!Arrays.equals(got, 0, n, want, bigAt, bigAt + n)) {
              wrong++;
            }
          } catch (IOException e) {
            errors++;
            System.out.println("large file at " + bigAt + ": " + e);
          }
          bigAt += n;
        }
        String f = order.get(i);
        try {
          if (!Arrays.equals(
              Files.readAllBytes(mnt.resolve(f)), Files.readAllBytes(flat.resolve(f)))) {
            wrong++;
          }
        } catch (IOException e) {
          errors++;
          System.out.println(f + ": " + e);
        }
        long next = t0 + (long) ((i + 1) * 0.5e9);
        Thread.sleep(Math.max(0, (next - System.nanoTime()) / 1_000_000));
      }
    }
    JsonNode st = stats();
    JsonNode c = st.path("credentials");
    System.out.printf(
        "an epoch across two rotations: %d reader errors, %d wrong; %d fetches at the endpoint,"
            + " %d renewals (%d ahead, %d after a refusal; %d refusals), %d requests sent again"
            + " with new credentials, %d presigns, %d plain GETs (%d asked again)%n",
        errors,
        wrong,
        creds.containerCalls.get(),
        c.path("renewals").asLong(),
        c.path("renewed_ahead").asLong(),
        c.path("renewed_after_refusal").asLong(),
        c.path("refusals").asLong(),
        st.path("source_requests").path("retried_with_new_credentials").asLong(),
        st.path("source_requests").path("presigns").asLong(),
        st.path("source_requests").path("plain_gets").asLong(),
        st.path("source_requests").path("plain_asked_again").asLong());
    assertThat(errors).isZero();
    assertThat(wrong).isZero();
    assertThat(st.path("errors").toString()).isIn("{}", "null");
    assertThat(st.path("pid").asLong()).as("no remount").isEqualTo(pid);
    assertThat(c.path("access_key_id").asText()).isEqualTo("ROTATED-KEY-2");
    // After each rotation's first refusal, and once in the background in between.
    assertThat(c.path("renewed_after_refusal").asLong()).isEqualTo(2);
    assertThat(c.path("renewed_ahead").asLong()).isGreaterThanOrEqualTo(1);
    assertThat(st.path("source_requests").path("retried_with_new_credentials").asLong())
        .isGreaterThanOrEqualTo(2);
    // The large file's URL was signed again for the new keys before it was used: no plain GET
    // was refused and left to minio-java.
    assertThat(st.path("source_requests").path("presigns").asLong()).isGreaterThanOrEqualTo(2);
    assertThat(st.path("source_requests").path("plain_asked_again").asLong()).isZero();
    // The large file's second half came from the socket too, under URLs signed anew.
    assertThat(st.path("source_requests").path("plain_gets").asLong()).isPositive();
    assertNoSecretsShown(Hintfs.run("status", mnt.toString()).out(), log);
  }

  /**
   * The server's key changes: S3Proxy stops, the endpoint hands out the new key, S3Proxy starts.
   */
  void rotate(String key, String secret) throws Exception {
    rotated = true;
    s3.kill();
    creds.hand(key, secret);
    s3.identity(key, secret).start();
  }
}
