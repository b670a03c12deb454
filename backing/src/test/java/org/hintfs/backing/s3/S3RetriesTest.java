package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.hintfs.backing.SourceUnavailableException;
import org.junit.jupiter.api.Test;

class S3RetriesTest {
  private final S3Errors errors = new S3Errors("b", "http://127.0.0.1:1", "s3://b/");

  @Test
  void aWaitForTheServerThatTimedOut_isTriedAgain_asAHungSourceIs() throws Exception {
    // The plain-HTTP GET throws the socket's timeout as it is (minio-java's calls wrap theirs):
    // before this, it was taken for an interrupt and failed the read at once.
    S3Retries retries = new S3Retries(errors, Duration.ofSeconds(30), null);
    AtomicInteger calls = new AtomicInteger();
    Integer got =
        retries.call(
            "GET k",
            "k",
            () -> {
              if (calls.incrementAndGet() < 3) {
                throw new SocketTimeoutException("no answer from 127.0.0.1:1 in 10000 ms");
              }
              return 42;
            });
    assertThat(got).isEqualTo(42);
    assertThat(calls).hasValue(3);
    assertThat(retries.retries.sum()).isEqualTo(2);
  }

  @Test
  void timeoutsPastTheRetryTime_failAsTheSourceUnavailable_sayingWhy() {
    S3Retries retries = new S3Retries(errors, Duration.ofMillis(200), null);
    AtomicInteger calls = new AtomicInteger();
    assertThat(failing(retries, new SocketTimeoutException("no answer in 10000 ms"), calls))
        .isInstanceOf(SourceUnavailableException.class)
        .hasMessageContaining("GET k failed after " + calls.get() + " attempts")
        .hasMessageContaining("no answer in time: no answer in 10000 ms");
    assertThat(calls.get()).isGreaterThan(1);
    assertThat(retries.failures.sum()).isEqualTo(1);
  }

  @Test
  void anInterrupt_endsTheCallAtOnce() {
    S3Retries retries = new S3Retries(errors, Duration.ofSeconds(30), null);
    AtomicInteger calls = new AtomicInteger();
    assertThat(failing(retries, new InterruptedIOException("interrupted during an S3 GET"), calls))
        .isInstanceOf(InterruptedIOException.class)
        .isNotInstanceOf(SocketTimeoutException.class);
    assertThat(calls).hasValue(1);
    assertThat(retries.retries.sum()).isZero();
  }

  /** What a call of {@code retries} ends with when its every attempt throws {@code e}. */
  private static Throwable failing(S3Retries retries, IOException e, AtomicInteger calls) {
    return catchThrowable(
        () ->
            retries.call(
                "GET k",
                "k",
                () -> {
                  calls.incrementAndGet();
                  throw e;
                }));
  }
}
