package org.hintfs.backing.s3;

import io.minio.credentials.Credentials;
import io.minio.credentials.Provider;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The credentials every request is signed with: minio-java asks {@link #fetch} once per request and
 * gets the current ones at once, never a fetch.
 *
 * <p>Renewal: temporary credentials (those with an expiry) are fetched again from their {@link
 * CredentialSource} in the background, on one daemon thread, {@link #renewAfter} their fetch: 5
 * minutes before they expire ({@link #RENEW_AHEAD}), or at half their life if that is sooner (an
 * hour's STS credentials are renewed after 55 minutes, 60 s ones after 30 s). A renewal that fails
 * is tried again after {@link #RETRY_AFTER_FAILURE} (after a quarter of what is left, if less),
 * with one warning per run of failures; the old credentials stay in use meanwhile (the server
 * decides when they are no good).
 *
 * <p>Refusal: a request the server refused for its credentials (expired, revoked, rotated) calls
 * {@link #renewAfterRefusal} with the credentials it was signed with: one fetch however many
 * requests were refused at once (they join it), then each request is tried once more. Only then
 * does a reader wait on a fetch, and only because the server has already said no. Credentials
 * fetched less than {@link #REFUSAL_QUIET} ago are not fetched again for a refusal of the same
 * ones: a key the server denies for good (a policy, not an expiry) costs one fetch per 10 s, not
 * one per request.
 *
 * <p>Concurrency: {@code current} is volatile and replaced whole; a fetch in progress is the one
 * {@code inFlight} future, which others join; no monitor is held across a fetch.
 */
final class RenewingCredentials implements Provider, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RenewingCredentials.class);

  /** Renewed when this much of the credentials' life is left, if less than half of it. */
  static final Duration RENEW_AHEAD = Duration.ofMinutes(5);

  /** How long after a failed renewal it is tried again, at most. */
  static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(30);

  /** No fetch for a refusal of credentials fetched this recently. */
  static final Duration REFUSAL_QUIET = Duration.ofSeconds(10);

  private final CredentialSource source;
  private final ScheduledExecutorService timer;
  private final AtomicReference<CompletableFuture<Credentials>> inFlight = new AtomicReference<>();
  private volatile Credentials current;
  private volatile Instant fetchedAt;
  private volatile String lastFailure;
  private volatile boolean failing;
  private volatile boolean closed;

  final LongAdder renewals = new LongAdder();
  final LongAdder renewedAhead = new LongAdder();
  final LongAdder renewedAfterRefusal = new LongAdder();
  final LongAdder renewalFailures = new LongAdder();
  final LongAdder refusals = new LongAdder();

  /** Fetches the first credentials now (a failure is the mount's) and schedules their renewal. */
  RenewingCredentials(CredentialSource source) throws IOException {
    this.source = source;
    this.current = source.fetch();
    this.fetchedAt = Instant.now();
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread th = new Thread(r, "s3-credentials");
              th.setDaemon(true);
              return th;
            });
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
    scheduleRenewal();
  }

  /** The current credentials, at once. */
  @Override
  public Credentials fetch() {
    return current;
  }

  /** Where the credentials come from. */
  CredentialSource source() {
    return source;
  }

  /**
   * After the server refused a request signed with {@code refused}: makes sure newer credentials
   * are current (fetching them unless another request already did) and says whether a retry has
   * anything new to send.
   */
  boolean renewAfterRefusal(Credentials refused) {
    refusals.increment();
    if (!sameKeys(current, refused)) {
      return true; // renewed since that request was signed
    }
    Credentials quiet = refusalFetched;
    if (quiet != null
        && sameKeys(quiet, refused)
        && Duration.between(refusalFetchedAt, Instant.now()).compareTo(REFUSAL_QUIET) < 0) {
      return false; // fetched for a refusal moments ago, and refused again
    }
    try {
      Credentials fresh = renew("the server refused the current ones", refused);
      refusalFetched = fresh;
      refusalFetchedAt = Instant.now();
      return !sameKeys(fresh, refused);
    } catch (IOException e) {
      return false;
    }
  }

  /** The credentials the last refusal fetched, and when: see {@link #REFUSAL_QUIET}. */
  private volatile Credentials refusalFetched;

  private volatile Instant refusalFetchedAt;

  /**
   * Fetches new credentials, or joins the fetch already running; makes them current and schedules
   * their renewal.
   */
  private Credentials renew(String why, Credentials unlessRenewedSince) throws IOException {
    CompletableFuture<Credentials> mine = new CompletableFuture<>();
    CompletableFuture<Credentials> running = inFlight.compareAndExchange(null, mine);
    if (running != null) {
      try {
        return running.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for credentials");
      } catch (ExecutionException e) {
        throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
      }
    }
    try {
      Credentials now = current;
      if (unlessRenewedSince != null && !sameKeys(now, unlessRenewedSince)) {
        mine.complete(now); // a fetch that ended just before this one began renewed them
        return now;
      }
      Credentials fresh = source.fetch();
      current = fresh;
      fetchedAt = Instant.now();
      renewals.increment();
      (unlessRenewedSince == null ? renewedAhead : renewedAfterRefusal).increment();
      if (failing) {
        log.info("credentials from {} renewed again ({})", source.describe(), why);
      } else {
        log.debug(
            "credentials from {} renewed ({}); they expire {}",
            source.describe(),
            why,
            expiry(fresh));
      }
      failing = false;
      lastFailure = null;
      mine.complete(fresh);
      scheduleRenewal();
      return fresh;
    } catch (IOException | RuntimeException e) {
      renewalFailures.increment();
      lastFailure = e.getMessage();
      if (!failing) {
        log.warn(
            "cannot renew the credentials from {} ({}): {}; the current ones stay in use{}",
            source.describe(),
            why,
            e.getMessage(),
            expiry(current) == null ? "" : " (they expire " + expiry(current) + ")");
      }
      failing = true;
      mine.completeExceptionally(e);
      scheduleRetry();
      throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
    } finally {
      inFlight.set(null);
    }
  }

  private void scheduleRenewal() {
    ZonedDateTime exp = current.expiration();
    if (exp == null || closed) {
      return; // static keys: renewed only when the server refuses them
    }
    Duration life = Duration.between(fetchedAt, exp.toInstant());
    Duration at = renewAfter(life);
    schedule(at, "ahead of their expiry");
  }

  /** How long after their fetch credentials that live {@code life} are renewed. */
  static Duration renewAfter(Duration life) {
    if (life.isNegative()) {
      return Duration.ZERO;
    }
    Duration half = life.dividedBy(2);
    Duration ahead = life.minus(RENEW_AHEAD);
    return ahead.compareTo(half) > 0 ? ahead : half;
  }

  private void scheduleRetry() {
    ZonedDateTime exp = current.expiration();
    Duration wait = RETRY_AFTER_FAILURE;
    if (exp != null) {
      Duration left = Duration.between(Instant.now(), exp.toInstant());
      Duration quarter = left.dividedBy(4);
      if (quarter.compareTo(wait) < 0) {
        wait = quarter.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : quarter;
      }
    }
    schedule(wait, "again after a failure");
  }

  /** The one renewal scheduled: a new one cancels the one before. */
  private final AtomicReference<ScheduledFuture<?>> next = new AtomicReference<>();

  private void schedule(Duration after, String why) {
    if (closed) {
      return;
    }
    ScheduledFuture<?> f =
        timer.schedule(
            () -> {
              try {
                renew(why, null);
              } catch (IOException | RuntimeException logged) {
                // counted and logged by renew, which scheduled the retry
              }
            },
            Math.max(0, after.toMillis()),
            TimeUnit.MILLISECONDS);
    ScheduledFuture<?> old = next.getAndSet(f);
    if (old != null && old != f) {
      old.cancel(false);
    }
  }

  private static ZonedDateTime expiry(Credentials c) {
    return c == null ? null : c.expiration();
  }

  static boolean sameKeys(Credentials a, Credentials b) {
    return a != null
        && b != null
        && a.accessKey().equals(b.accessKey())
        && a.secretKey().equals(b.secretKey())
        && Objects.equals(a.sessionToken(), b.sessionToken());
  }

  /** For {@code status}: where they came from, the access key id, when they expire; no secret. */
  Map<String, Object> describe() {
    Credentials c = current;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", source.kind());
    m.put("source", source.describe());
    m.put("access_key_id", c.accessKey());
    m.put("session", c.sessionToken() != null);
    m.put("expires", c.expiration() == null ? null : c.expiration().toInstant().toString());
    m.put("fetched", fetchedAt.toString());
    m.put("renewals", renewals.sum());
    m.put("renewed_ahead", renewedAhead.sum());
    m.put("renewed_after_refusal", renewedAfterRefusal.sum());
    m.put("renewal_failures", renewalFailures.sum());
    m.put("refusals", refusals.sum());
    m.put("last_failure", lastFailure);
    return m;
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
  }
}
