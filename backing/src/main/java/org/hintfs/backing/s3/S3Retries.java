package org.hintfs.backing.s3;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.hintfs.backing.SourceUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one S3 request, retrying transient failures with jittered exponential backoff (50 ms
 * doubling, at most 2 s apart) until the retry time has passed, with a last attempt then. A request
 * the server refused for its credentials (expired, rotated, revoked) is sent once more with fresh
 * ones, at once, if the chain gives newer ones ({@link RenewingCredentials#renewAfterRefusal}).
 */
final class S3Retries {
  private static final Logger log = LoggerFactory.getLogger(S3Retries.class);
  private static final long BACKOFF_START_MS = 50;
  private static final long BACKOFF_MAX_MS = 2_000;

  private final S3Errors errors;
  private final Duration retryTime;
  private final long retryNanos;
  final LongAdder retries = new LongAdder();
  final LongAdder failures = new LongAdder();
  final LongAdder renewedRetries = new LongAdder();

  /** Null for unsigned requests. */
  private final RenewingCredentials credentials;

  S3Retries(S3Errors errors, Duration retryTime, RenewingCredentials credentials) {
    this.errors = errors;
    this.credentials = credentials;
    this.retryTime = retryTime;
    this.retryNanos = retryTime.toNanos();
  }

  interface Call<T> {
    T run() throws Exception;
  }

  <T> T call(String what, String path, Call<T> call) throws IOException {
    long deadline = System.nanoTime() + retryNanos;
    boolean renewed = false;
    for (int attempt = 0; ; attempt++) {
      IOException failure;
      var signedWith = credentials == null ? null : credentials.fetch();
      try {
        return call.run();
      } catch (Exception e) {
        if (!renewed && credentials != null && S3Errors.refusesCredentials(e)) {
          renewed = true; // one fresh fetch and one retry per call
          if (credentials.renewAfterRefusal(signedWith)) {
            renewedRetries.increment();
            log.debug("{}: {}; sending it again with renewed credentials", what, e.getMessage());
            continue;
          }
        }
        failure = errors.classify(e, path);
      }
      if (failure instanceof S3Errors.EndOfObject) {
        return null; // a range at or past the end: nothing to read (only ranged GETs get here)
      }
      if (!(failure instanceof S3Errors.Transient)) {
        throw failure;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        failures.increment();
        throw new SourceUnavailableException(
            what
                + " failed after "
                + (attempt + 1)
                + " attempts in "
                + retryTime.toSeconds()
                + " s: "
                + failure.getMessage(),
            failure.getCause(),
            true);
      }
      long backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS << Math.min(attempt, 16));
      long sleep =
          Math.min(
              TimeUnit.NANOSECONDS.toMillis(left) + 1,
              backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1));
      retries.increment();
      log.debug("retrying {} in {} ms: {}", what, sleep, failure.getMessage());
      try {
        Thread.sleep(sleep);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while retrying " + what);
      }
    }
  }
}
