package org.hintfs.it;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The three cloud credential endpoints on loopback, each handing out the current key pair with a
 * fresh session token and an expiry {@code life} ahead, as AWS's do: STS AssumeRoleWithWebIdentity
 * ({@code POST /}, the token and role checked), the container endpoint ({@code GET /creds}, the
 * Authorization header checked: ECS, EKS Pod Identity) and EC2 instance metadata, IMDSv2 only (a
 * {@code PUT /latest/api/token} first; a GET without its token is refused, as with {@code
 * HttpTokens=required}). {@link #hand} rotates the keys.
 */
final class CredentialsEndpoint implements AutoCloseable {
  static final String ROLE_ARN = "arn:aws:iam::123456789012:role/hintfs-test";
  static final String WEB_TOKEN = "eyJhbGciOiJSUzI1NiJ9.web-identity-token.signature";
  static final String CONTAINER_TOKEN = "container-authorization-token-0123";
  static final String IMDS_ROLE = "hintfs-node-role";

  private final HttpServer server;
  private final Duration life;
  private volatile String accessKey;
  private volatile String secretKey;
  private final AtomicInteger issued = new AtomicInteger();
  final AtomicInteger stsCalls = new AtomicInteger();
  final AtomicInteger containerCalls = new AtomicInteger();
  final AtomicInteger imdsTokenPuts = new AtomicInteger();
  final AtomicInteger imdsCredentialCalls = new AtomicInteger();
  final AtomicInteger refused = new AtomicInteger();
  private volatile String imdsToken = "imds-session-" + System.nanoTime();

  CredentialsEndpoint(String accessKey, String secretKey, Duration life) throws IOException {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.life = life;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.createContext("/", this::sts);
    server.createContext("/creds", this::container);
    server.createContext("/latest/", this::imds);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** From now on, hands out this key pair. */
  void hand(String accessKey, String secretKey) {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
  }

  /** The session tokens handed out so far look like this, with a number: never to be shown. */
  static final String SESSION_TOKEN_PREFIX = "SESSION-TOKEN-SECRET-";

  private String token() {
    return SESSION_TOKEN_PREFIX + issued.incrementAndGet();
  }

  private String expiry() {
    return Instant.now().plus(life).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private void sts(HttpExchange x) throws IOException {
    Map<String, String> q = query(x.getRequestURI().getRawQuery());
    if (!x.getRequestMethod().equals("POST")
        || !"AssumeRoleWithWebIdentity".equals(q.get("Action"))
        || !WEB_TOKEN.equals(q.get("WebIdentityToken"))
        || !ROLE_ARN.equals(q.get("RoleArn"))) {
      refused.incrementAndGet();
      send(x, 403, "<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>");
      return;
    }
    stsCalls.incrementAndGet();
    send(
        x,
        200,
        "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
            + "<AssumeRoleWithWebIdentityResult><Credentials>"
            + "<AccessKeyId>"
            + accessKey
            + "</AccessKeyId><SecretAccessKey>"
            + secretKey
            + "</SecretAccessKey><SessionToken>"
            + token()
            + "</SessionToken><Expiration>"
            + expiry()
            + "</Expiration></Credentials></AssumeRoleWithWebIdentityResult>"
            + "</AssumeRoleWithWebIdentityResponse>");
  }

  private void container(HttpExchange x) throws IOException {
    if (!CONTAINER_TOKEN.equals(x.getRequestHeaders().getFirst("Authorization"))) {
      refused.incrementAndGet();
      send(x, 401, "{\"Code\":\"Unauthorized\"}");
      return;
    }
    containerCalls.incrementAndGet();
    send(x, 200, json());
  }

  private void imds(HttpExchange x) throws IOException {
    String path = x.getRequestURI().getPath();
    if (path.equals("/latest/api/token") && x.getRequestMethod().equals("PUT")) {
      if (x.getRequestHeaders().getFirst("X-aws-ec2-metadata-token-ttl-seconds") == null) {
        send(x, 400, "");
        return;
      }
      imdsTokenPuts.incrementAndGet();
      send(x, 200, imdsToken);
      return;
    }
    if (!imdsToken.equals(x.getRequestHeaders().getFirst("X-aws-ec2-metadata-token"))) {
      refused.incrementAndGet();
      send(x, 401, ""); // IMDSv1 is off
      return;
    }
    String base = "/latest/meta-data/iam/security-credentials/";
    if (path.equals(base)) {
      send(x, 200, IMDS_ROLE);
    } else if (path.equals(base + IMDS_ROLE)) {
      imdsCredentialCalls.incrementAndGet();
      send(x, 200, json());
    } else {
      send(x, 404, "");
    }
  }

  private String json() {
    return "{\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\""
        + accessKey
        + "\",\"SecretAccessKey\":\""
        + secretKey
        + "\",\"Token\":\""
        + token()
        + "\",\"Expiration\":\""
        + expiry()
        + "\"}";
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> m = new HashMap<>();
    if (raw == null) {
      return m;
    }
    for (String kv : raw.split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        m.put(
            URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return m;
  }

  private static void send(HttpExchange x, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    x.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
    if (b.length > 0) {
      x.getResponseBody().write(b);
    }
    x.close();
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
