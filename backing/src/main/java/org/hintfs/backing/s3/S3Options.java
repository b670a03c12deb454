package org.hintfs.backing.s3;

import java.time.Duration;
import java.util.Map;

/**
 * How to reach an S3 endpoint. Credentials are not here: they come from the environment or a
 * profile file or a cloud endpoint (see {@link CredentialChain}), never from the command line.
 *
 * @param endpoint {@code http(s)://host[:port]}, or null for AWS (then from {@code
 *     AWS_ENDPOINT_URL_S3} or {@code AWS_ENDPOINT_URL} if set)
 * @param region the signing region, or null for {@code AWS_REGION}, {@code AWS_DEFAULT_REGION}, or
 *     us-east-1 with a custom endpoint
 * @param pathStyle force path-style addressing ({@code http://host/bucket/key}); custom endpoints
 *     use it anyway
 * @param retryTime how long one read may keep retrying transient failures before it fails
 * @param maxConnections concurrent requests (and pooled connections) to the endpoint
 * @param env the environment to read credentials and defaults from
 */
public record S3Options(
    String endpoint,
    String region,
    boolean pathStyle,
    Duration retryTime,
    int maxConnections,
    Map<String, String> env) {

  public static final Duration DEFAULT_RETRY_TIME = Duration.ofSeconds(120);
  public static final int DEFAULT_MAX_CONNECTIONS = 128;

  /** Defaults, reading this process's environment. */
  public static S3Options defaults() {
    return new S3Options(
        null, null, false, DEFAULT_RETRY_TIME, DEFAULT_MAX_CONNECTIONS, System.getenv());
  }

  public S3Options {
    if (retryTime.isNegative()) {
      throw new IllegalArgumentException("the retry time must not be negative: " + retryTime);
    }
    if (maxConnections < 1 || maxConnections > 4096) {
      throw new IllegalArgumentException(
          "S3 connections must be between 1 and 4096, not " + maxConnections);
    }
  }

  /** The endpoint to use: the option, else the standard environment variables, else AWS. */
  String effectiveEndpoint() {
    if (endpoint != null && !endpoint.isBlank()) {
      return endpoint;
    }
    for (String k : new String[] {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
      String v = env.get(k);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return "https://s3.amazonaws.com";
  }

  /** The region to sign with, or null to let the client ask the bucket. */
  String effectiveRegion(boolean customEndpoint) {
    if (region != null && !region.isBlank()) {
      return region;
    }
    for (String k : new String[] {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
      String v = env.get(k);
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return customEndpoint ? "us-east-1" : null;
  }
}
