package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;

import io.minio.Time;
import io.minio.credentials.Credentials;
import io.minio.errors.ErrorResponseException;
import io.minio.messages.ErrorResponse;
import java.io.IOException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RenewingCredentialsTest {

  /**
   * Hands out key N on its Nth fetch, living {@code life} (null: no expiry), after {@code delay}.
   */
  static final class CountingSource implements CredentialSource {
    final AtomicInteger fetches = new AtomicInteger();
    final AtomicBoolean failing = new AtomicBoolean();
    final Duration life;
    final long delayMillis;
    final boolean sameKeysEachTime;

    CountingSource(Duration life, long delayMillis, boolean sameKeysEachTime) {
      this.life = life;
      this.delayMillis = delayMillis;
      this.sameKeysEachTime = sameKeysEachTime;
    }

    @Override
    public String describe() {
      return "a counting source";
    }

    @Override
    public String kind() {
      return "test";
    }

    @Override
    public Credentials fetch() throws IOException {
      try {
        Thread.sleep(delayMillis);
      } catch (InterruptedException e) {
        throw new IOException("interrupted");
      }
      if (failing.get()) {
        throw new IOException("the endpoint is down");
      }
      int n = sameKeysEachTime ? 0 : fetches.get();
      fetches.incrementAndGet();
      ZonedDateTime exp = life == null ? null : ZonedDateTime.now(ZoneOffset.UTC).plus(life);
      return new Credentials(
          "key" + n, "secret" + n, "token" + n, exp == null ? null : new Time.S3Time(exp));
    }
  }

  @Test
  void renewsAtHalfTheLifeOfShortCredentials_and5MinutesAheadOfLongOnes() {
    assertThat(RenewingCredentials.renewAfter(Duration.ofSeconds(60)))
        .isEqualTo(Duration.ofSeconds(30));
    assertThat(RenewingCredentials.renewAfter(Duration.ofHours(1)))
        .isEqualTo(Duration.ofMinutes(55));
    assertThat(RenewingCredentials.renewAfter(Duration.ofMinutes(10)))
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void temporaryCredentialsAreRenewedInTheBackground_andFetchNeverWaitsOnARenewal()
      throws Exception {
    // 1.5 s credentials are renewed after 0.75 s, each fetch taking 200 ms; over 4 s that is at
    // least 3 renewals, none of which a caller of fetch() waits for.
    CountingSource src = new CountingSource(Duration.ofMillis(1_500), 200, false);
    try (RenewingCredentials c = new RenewingCredentials(src)) {
      Set<String> keys = new HashSet<>();
      long slowest = 0;
      long end = System.nanoTime() + 4_000_000_000L;
      while (System.nanoTime() < end) {
        long t0 = System.nanoTime();
        Credentials now = c.fetch();
        slowest = Math.max(slowest, System.nanoTime() - t0);
        assertThat(now.expiration()).isAfter(ZonedDateTime.now());
        keys.add(now.accessKey());
        Thread.sleep(1);
      }
      assertThat(keys).hasSizeGreaterThanOrEqualTo(4);
      assertThat(c.renewals.sum()).isGreaterThanOrEqualTo(3);
      // A fetch that waited on the 200 ms renewal would show here.
      assertThat(slowest).isLessThan(50_000_000L);
    }
  }

  @Test
  void manyRequestsRefusedAtOnce_makeOneFetch_andEachIsToldToRetry() throws Exception {
    CountingSource src = new CountingSource(null, 0, false);
    try (RenewingCredentials c = new RenewingCredentials(src)) {
      Credentials refused = c.fetch();
      src.fetches.set(1);
      CountingSource slow = src;
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          answers.add(
              pool.submit(
                  () -> {
                    go.await();
                    return c.renewAfterRefusal(refused);
                  }));
        }
        go.countDown();
        for (Future<Boolean> a : answers) {
          assertThat(a.get()).isTrue();
        }
      } finally {
        pool.shutdownNow();
      }
      // The first fetch was the one at construction; the 8 refusals made one more.
      assertThat(slow.fetches).hasValue(2);
      assertThat(c.fetch().accessKey()).isEqualTo("key1");
    }
  }

  @Test
  void keysTheSourceGivesAgainUnchanged_areNotRetried_norFetchedForEveryRefusal() throws Exception {
    CountingSource src = new CountingSource(null, 0, true);
    try (RenewingCredentials c = new RenewingCredentials(src)) {
      Credentials refused = c.fetch();
      assertThat(c.renewAfterRefusal(refused)).isFalse(); // the same keys: nothing new to send
      assertThat(src.fetches).hasValue(2);
      for (int i = 0; i < 20; i++) {
        assertThat(c.renewAfterRefusal(c.fetch())).isFalse();
      }
      // Within 10 s of the last fetch for a refusal, refusals of the same keys fetch nothing.
      assertThat(src.fetches).hasValue(2);
    }
  }

  @Test
  void aFailedRenewalKeepsTheCurrentCredentials_isCounted_andIsTriedAgain() throws Exception {
    // 2 s credentials: renewal at 1 s fails; tried again after a quarter of what is left (~0.25 s),
    // and again, until the source answers.
    CountingSource src = new CountingSource(Duration.ofSeconds(2), 0, false);
    try (RenewingCredentials c = new RenewingCredentials(src)) {
      Credentials first = c.fetch();
      src.failing.set(true);
      Thread.sleep(1_400);
      assertThat(c.fetch()).isSameAs(first);
      assertThat(c.renewalFailures.sum()).isGreaterThanOrEqualTo(1);
      assertThat(c.describe().get("last_failure")).isEqualTo("the endpoint is down");
      src.failing.set(false);
      long end = System.nanoTime() + 3_000_000_000L;
      while (c.fetch() == first && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(c.fetch().accessKey()).isEqualTo("key1");
      assertThat(c.describe().get("last_failure")).isNull();
    }
  }

  @Test
  void aRefusedRequestIsSentOnceMoreWithTheNewCredentials_andOnlyOnce() throws Exception {
    CountingSource src = new CountingSource(null, 0, false);
    try (RenewingCredentials c = new RenewingCredentials(src)) {
      S3Retries retries =
          new S3Retries(new S3Errors("b", "http://127.0.0.1:1", "s3://b/"), Duration.ZERO, c);
      List<String> signedWith = new ArrayList<>();
      String got =
          retries.call(
              "GET k",
              "k",
              () -> {
                signedWith.add(c.fetch().accessKey());
                if (signedWith.size() == 1) {
                  throw refused("ExpiredToken");
                }
                return "bytes";
              });
      assertThat(got).isEqualTo("bytes");
      assertThat(signedWith).containsExactly("key0", "key1");
      assertThat(retries.renewedRetries.sum()).isEqualTo(1);
      // The new keys refused too, moments after a refusal fetched them: that refusal is the
      // answer, with no fetch and no retry (a key denied for good costs a fetch per 10 s).
      signedWith.clear();
      Throwable t =
          org.assertj.core.api.Assertions.catchThrowable(
              () ->
                  retries.call(
                      "GET k",
                      "k",
                      () -> {
                        signedWith.add(c.fetch().accessKey());
                        throw refused("InvalidAccessKeyId");
                      }));
      assertThat(t).isInstanceOf(java.nio.file.AccessDeniedException.class);
      assertThat(signedWith).containsExactly("key1");
      assertThat(src.fetches).hasValue(2);
    }
  }

  static ErrorResponseException refused(String code) {
    return new ErrorResponseException(
        new ErrorResponse(code, "refused", "b", "k", "/b/k", "r", "h"), null, "");
  }
}
