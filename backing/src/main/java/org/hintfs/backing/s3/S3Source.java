package org.hintfs.backing.s3;

import io.minio.GetObjectArgs;
import io.minio.GetObjectResponse;
import io.minio.GetPresignedObjectUrlArgs;
import io.minio.Http;
import io.minio.ListObjectsArgs;
import io.minio.MinioClient;
import io.minio.Result;
import io.minio.StatObjectArgs;
import io.minio.StatObjectResponse;
import io.minio.credentials.Credentials;
import io.minio.errors.MinioException;
import io.minio.messages.Item;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.hintfs.backing.DatasetSource;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceObject;
import org.hintfs.backing.SourceUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dataset under {@code s3://bucket[/prefix]}, on AWS S3, MinIO or any S3-compatible store.
 *
 * <ul>
 *   <li>Listing is ListObjectsV2, paginated: the first level under the prefix with a delimiter,
 *       then each sub-prefix recursively on its own thread, resuming after the last key seen when a
 *       page fails.
 *   <li>The version tag is the ETag (quotes stripped) and the size: {@code etag:size}.
 *   <li>Reads are ranged GETs with {@code If-Match: etag}. The response's ETag is checked as well
 *       (not every server honours If-Match): an object changed since the listing is refused with
 *       {@link ObjectChangedException}, never served.
 *   <li>A read into native memory (a large block read ahead) over plain HTTP is a presigned ranged
 *       GET whose body the kernel copies straight into it ({@link PlainHttpGets}); an answer that
 *       client does not read plainly is asked again through minio-java.
 *   <li>Each request runs on the thread that asks for it (no hand-off to OkHttp's dispatcher
 *       threads); at most {@code maxConnections} of them wait for headers at once, and the
 *       connection pool keeps as many (OkHttp's default dispatcher allows 5 per host).
 *   <li>5xx, 429, timeouts, refused connections and resets are retried with jittered exponential
 *       backoff (50 ms doubling, at most 2 s apart) until {@code retryTime} has passed, with a last
 *       attempt then; after that the read fails with a {@link SourceUnavailableException} marked as
 *       retried. Access errors and missing keys fail at once.
 * </ul>
 */
public final class S3Source implements DatasetSource {
  private static final Logger log = LoggerFactory.getLogger(S3Source.class);

  private final String bucket;
  private final String prefix;
  private final String endpoint;
  private final MinioClient client;
  private final OkHttpClient http;
  private final S3Errors errors;
  private final S3Retries retries;
  private final S3Listing listing;

  /** The credentials requests are signed with, renewed as they need; null when unsigned. */
  private final RenewingCredentials credentials;

  /** Large reads into native memory over plain HTTP; null over HTTPS. */
  private final PlainHttpGets plain;

  private String summary;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  private final LongAdder gets = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder plainGets = new LongAdder();
  private final LongAdder plainAskedAgain = new LongAdder();

  private S3Source(
      String bucket,
      String prefix,
      String endpoint,
      MinioClient client,
      OkHttpClient http,
      PlainHttpGets plain,
      RenewingCredentials credentials,
      Duration retryTime) {
    this.bucket = bucket;
    this.prefix = prefix;
    this.endpoint = endpoint;
    this.client = client;
    this.http = http;
    this.plain = plain;
    this.credentials = credentials;
    this.errors = new S3Errors(bucket, endpoint, describe());
    this.retries = new S3Retries(errors, retryTime, credentials);
    this.listing = new S3Listing(client, bucket, prefix, describe(), retries);
  }

  /** The longest a request waits for the next bytes of its answer before it fails. */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Connects to {@code spec} and checks, with one small listing, that the bucket exists and the
   * credentials may list it; every failure is an {@link IOException} whose message is one line fit
   * for a user.
   */
  public static S3Source open(String spec, S3Options options) throws IOException {
    S3Location loc = S3Location.parse(spec);
    String ep = options.effectiveEndpoint();
    URI uri;
    try {
      uri = URI.create(ep);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--endpoint " + ep + " is not a URL");
    }
    if (uri.getScheme() == null
        || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))
        || uri.getHost() == null) {
      throw new IllegalArgumentException(
          "--endpoint " + ep + " must be http://host[:port] or https://host[:port]");
    }
    boolean aws = uri.getHost().endsWith("amazonaws.com");
    RenewingCredentials creds = credentials(options.env());
    int n = options.maxConnections();
    Semaphore permits = new Semaphore(n);
    OkHttpClient.Builder hb =
        new OkHttpClient.Builder()
            .dispatcher(callerRunsDispatcher())
            .addInterceptor(new RequestPermits(permits))
            .connectionPool(new ConnectionPool(n, 5, TimeUnit.MINUTES))
            .connectTimeout(5, TimeUnit.SECONDS)
            .writeTimeout(10, TimeUnit.SECONDS);
    if (uri.getScheme().equals("http")) {
      // HTTP/1.1 only: each read waits at most READ_TIMEOUT as the socket's own timeout, not
      // OkHttp's per-read watchdog (PlainHttpSockets).
      hb.socketFactory(new PlainHttpSockets((int) READ_TIMEOUT.toMillis()))
          .readTimeout(0, TimeUnit.SECONDS);
    } else {
      hb.readTimeout(READ_TIMEOUT);
    }
    OkHttpClient http = hb.build();
    MinioClient.Builder b = MinioClient.builder().endpoint(ep).httpClient(http);
    String region = options.effectiveRegion(!aws);
    if (region != null) {
      b.region(region);
    }
    if (creds != null) {
      b.credentialsProvider(creds);
    }
    MinioClient client;
    try {
      client = b.build();
    } catch (IllegalArgumentException e) {
      if (creds != null) {
        creds.close();
      }
      throw new IllegalArgumentException("--endpoint " + ep + ": " + e.getMessage());
    }
    if (options.pathStyle() || !aws) {
      client.disableVirtualStyleEndpoint();
    }
    PlainHttpGets plain =
        // Plain HTTP to a host name or IPv4 address (an IPv6 literal's Host header is OkHttp's).
        uri.getScheme().equals("http") && !uri.getHost().startsWith("[")
            ? new PlainHttpGets((int) READ_TIMEOUT.toMillis(), 5_000, n, permits)
            : null;
    S3Source s =
        new S3Source(
            loc.bucket(), loc.prefix(), ep, client, http, plain, creds, options.retryTime());
    s.summary =
        s.describe()
            + " at "
            + ep
            + ", region "
            + (region == null ? "(asked of the bucket)" : region)
            + ", credentials: "
            + (creds == null
                ? "none (unsigned requests)"
                : "access key "
                    + creds.fetch().accessKey()
                    + " from "
                    + creds.source().describe()
                    + (creds.fetch().expiration() == null
                        ? ""
                        : ", expire " + creds.fetch().expiration().toInstant()))
            + ", up to "
            + n
            + " requests at once, retries for "
            + options.retryTime().toSeconds()
            + " s";
    log.debug("opening {}", s.summary);
    try {
      s.probe();
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
    return s;
  }

  /** How long a credentials endpoint (STS, container, instance metadata) may take to answer. */
  private static final int CREDENTIALS_TIMEOUT_SECONDS = 5;

  /**
   * How long the instance metadata service may take to connect: it is tried last, also off EC2,
   * where nothing answers (the AWS SDKs wait 1 s too).
   */
  private static final int METADATA_CONNECT_SECONDS = 1;

  /**
   * The credentials of the standard chain ({@link CredentialChain}) under {@code env}, fetched once
   * now, or null for unsigned requests: none configured, or instance metadata (the last place,
   * tried off EC2 too) not answering.
   */
  private static RenewingCredentials credentials(Map<String, String> env) throws IOException {
    OkHttpClient http =
        new OkHttpClient.Builder()
            .protocols(List.of(okhttp3.Protocol.HTTP_1_1))
            .connectTimeout(2, TimeUnit.SECONDS)
            .readTimeout(CREDENTIALS_TIMEOUT_SECONDS, TimeUnit.SECONDS)
            .callTimeout(2L * CREDENTIALS_TIMEOUT_SECONDS, TimeUnit.SECONDS)
            .build();
    CredentialSource source = CredentialChain.resolve(env, http);
    if (source instanceof CredentialSource.InstanceMetadata imds) {
      OkHttpClient quick =
          http.newBuilder().connectTimeout(METADATA_CONNECT_SECONDS, TimeUnit.SECONDS).build();
      source = new CredentialSource.InstanceMetadata(imds.endpoint(), quick);
      try {
        return new RenewingCredentials(source);
      } catch (IOException e) {
        log.info(
            "no credentials in the environment, a profile or a container endpoint, and {}: {};"
                + " requests go unsigned (AWS_EC2_METADATA_DISABLED=true skips it)",
            source.describe(),
            e.getMessage());
        return null;
      }
    }
    return source == null ? null : new RenewingCredentials(source);
  }

  /**
   * A dispatcher that runs each request on the thread that asked for it. minio-java's blocking
   * calls are its asynchronous ones joined: on OkHttp's default dispatcher every GET went from the
   * caller to a dispatcher thread and back, two thread hand-offs per miss for nothing, the caller
   * being blocked anyway. Its limits are lifted so that no call ever waits in its queue (a queued
   * call would run on whichever thread finished another): {@link RequestPermits} bounds the
   * requests in flight instead.
   */
  static Dispatcher callerRunsDispatcher() {
    Dispatcher d = new Dispatcher(new CallerRuns());
    d.setMaxRequests(Integer.MAX_VALUE);
    d.setMaxRequestsPerHost(Integer.MAX_VALUE);
    return d;
  }

  /** One small listing: fails with a user-fit message on bad credentials, bucket or endpoint. */
  private void probe() throws IOException {
    try {
      Iterable<Result<Item>> page =
          client.listObjects(
              ListObjectsArgs.builder()
                  .bucket(bucket)
                  .prefix(prefix)
                  .delimiter("/")
                  .maxKeys(1)
                  .build());
      var it = page.iterator();
      if (it.hasNext()) {
        it.next().get();
      } else {
        log.warn("no objects under {}: mounting an empty directory", describe());
      }
    } catch (MinioException | RuntimeException e) {
      throw errors.mountError(e);
    }
  }

  /** Endpoint, region, where the credentials came from (never the secret), limits: for logs. */
  public String summary() {
    return summary;
  }

  @Override
  public String describe() {
    return "s3://"
        + bucket
        + "/"
        + prefix
        + (endpoint.contains("amazonaws.com") ? "" : "@" + endpoint);
  }

  @Override
  public void list(Consumer<SourceObject> sink) throws IOException {
    listing.list(sink);
  }

  @Override
  public SourceObject stat(String path) throws IOException {
    String key = prefix + path;
    try {
      return retries.call(
          "HEAD " + key,
          path,
          () -> {
            StatObjectResponse r =
                client.statObject(StatObjectArgs.builder().bucket(bucket).object(key).build());
            long mtime = r.lastModified() == null ? 0 : r.lastModified().toInstant().toEpochMilli();
            return SourceObject.file(path, r.size(), ETags.versionTag(r.etag(), r.size()), mtime);
          });
    } catch (NoSuchFileException e) {
      boolean[] any = {false};
      retries.call(
          "LIST " + key + "/",
          path,
          () -> {
            for (Result<Item> r :
                client.listObjects(
                    ListObjectsArgs.builder()
                        .bucket(bucket)
                        .prefix(key + "/")
                        .delimiter("/")
                        .maxKeys(1)
                        .build())) {
              r.get();
              any[0] = true;
              break;
            }
            return null;
          });
      if (any[0]) {
        return SourceObject.dir(path, 0);
      }
      throw e;
    }
  }

  @Override
  public int read(String path, String expectedVersion, long offset, ByteBuffer dst)
      throws IOException {
    int want = dst.remaining();
    if (want == 0) {
      return 0;
    }
    String key = prefix + path;
    String etag = expectedVersion == null ? null : ETags.etagOf(expectedVersion);
    int start = dst.position();
    Integer got =
        retries.call(
            "GET " + key,
            path,
            () -> {
              if (plain != null && !dst.hasArray()) {
                Integer n = readPlain(key, path, expectedVersion, etag, offset, want, start, dst);
                if (n != null) {
                  return n;
                }
              }
              GetObjectArgs.Builder a =
                  GetObjectArgs.builder()
                      .bucket(bucket)
                      .object(key)
                      .offset(offset)
                      .length((long) want);
              if (etag != null && !etag.isEmpty()) {
                a.matchETag(etag);
              }
              sent();
              try (GetObjectResponse r = client.getObject(a.build())) {
                String actual = ETags.stripQuotes(r.headers().get("ETag"));
                if (etag != null && !etag.isEmpty() && !actual.isEmpty() && !actual.equals(etag)) {
                  throw new ObjectChangedException(path, expectedVersion, actual);
                }
                dst.position(start); // a retry starts the body again
                return readInto(r, dst, want);
              } finally {
                inFlight.decrementAndGet();
              }
            });
    if (got == null) {
      dst.position(start);
      return 0;
    }
    bytesRead.add(got);
    return got;
  }

  /** Counts a GET sent and in flight (until {@code inFlight} is decremented). */
  private void sent() {
    int now = inFlight.incrementAndGet();
    maxInFlight.accumulateAndGet(now, Math::max);
    gets.increment();
  }

  /** How long a presigned GET's URL is valid. */
  private static final int PRESIGN_SECONDS = 15 * 60;

  /**
   * How long a presigned URL is used again for its key: a third of its validity, so it has at least
   * ten minutes left when sent. Signing costs more than a 4 MiB block's GET takes on the wire
   * (minio-java's canonical request, HMAC and URL building: 9% of the daemon's CPU over a large
   * file's first read, and much of what the JIT compiled meanwhile; BENCHMARKS.md).
   */
  static final long PRESIGN_REUSE_NANOS = TimeUnit.SECONDS.toNanos(PRESIGN_SECONDS / 3);

  /** Keys whose presigned URLs are kept at most (the readers' files read ahead at once). */
  static final int PRESIGNED_KEPT = 1024;

  /**
   * A presigned GET's URL for a key, when it was signed ({@link System#nanoTime}), and the
   * credentials it was signed with: a URL signed with temporary credentials is good only while they
   * are, so new credentials sign it again.
   */
  private record Signed(URI url, long signedAt, Credentials signedWith) {}

  private final ConcurrentHashMap<String, Signed> signed = new ConcurrentHashMap<>();
  private final LongAdder presigns = new LongAdder();

  /**
   * A presigned GET's URL for {@code key}: the one signed for it within {@link
   * #PRESIGN_REUSE_NANOS} with the current credentials, else a new one. The range and If-Match go
   * as headers, which the signature does not cover, so one URL serves every block of a file.
   */
  private URI presigned(String key) throws MinioException {
    long now = System.nanoTime();
    Credentials with = credentials == null ? null : credentials.fetch();
    Signed s = signed.get(key);
    if (s != null && now - s.signedAt < PRESIGN_REUSE_NANOS && s.signedWith == with) {
      return s.url;
    }
    URI url =
        URI.create(
            client.getPresignedObjectUrl(
                GetPresignedObjectUrlArgs.builder()
                    .method(Http.Method.GET)
                    .bucket(bucket)
                    .object(key)
                    .expiry(PRESIGN_SECONDS)
                    .build()));
    presigns.increment();
    if (signed.size() >= PRESIGNED_KEPT) {
      signed.clear(); // bounded; those still read are signed again at their next block
    }
    signed.put(key, new Signed(url, now, with));
    return url;
  }

  /**
   * A GET into native memory over plain HTTP (PlainHttpGets), no copy through the heap: the bytes
   * read, or null when it was not read that way (the URL could not be signed, or the answer was not
   * one this client reads) and the caller asks again through minio-java.
   */
  private Integer readPlain(
      String key,
      String path,
      String expectedVersion,
      String etag,
      long offset,
      int want,
      int start,
      ByteBuffer dst)
      throws IOException {
    URI url;
    try {
      url = presigned(key);
    } catch (MinioException | RuntimeException e) {
      log.debug("cannot presign GET {}: {}", key, e.toString());
      plainAskedAgain.increment();
      return null;
    }
    sent();
    plainGets.increment();
    try {
      dst.position(start); // a retry starts the body again
      int n = plain.get(url, offset, want, etag, dst);
      if (n == PlainHttpGets.NOT_READ) {
        signed.remove(key); // an error status may be the URL's (expired, a skewed clock): sign anew
        dst.position(start);
        plainAskedAgain.increment();
        return null;
      }
      return n;
    } catch (PlainHttpGets.EtagMismatch e) {
      throw new ObjectChangedException(path, expectedVersion, e.actual);
    } finally {
      inFlight.decrementAndGet();
    }
  }

  /** The most of a body copied through the heap at once into a buffer without an array. */
  private static final int CHUNK = 64 << 10;

  /**
   * Reads up to {@code want} bytes of the body into {@code dst}, straight into its array when it
   * has one (one copy from the socket), else (native memory) through a small array, never one the
   * body's size; returns how many.
   */
  private static int readInto(InputStream in, ByteBuffer dst, int want) throws IOException {
    if (!dst.hasArray()) {
      byte[] chunk = new byte[Math.min(want, CHUNK)];
      int n = 0;
      while (n < want) {
        int r = in.read(chunk, 0, Math.min(chunk.length, want - n));
        if (r < 0) {
          break;
        }
        dst.put(chunk, 0, r);
        n += r;
      }
      return n;
    }
    byte[] a = dst.array();
    int at = dst.arrayOffset() + dst.position();
    int n = 0;
    while (n < want) {
      int r = in.read(a, at + n, want - n);
      if (r < 0) {
        break;
      }
      n += r;
    }
    dst.position(dst.position() + n);
    return n;
  }

  // ------------------------------------------------------------------------------------ retries

  @Override
  public Map<String, Long> counters() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("requestsInFlight", (long) inFlight.get());
    m.put("maxRequestsInFlight", (long) maxInFlight.get());
    m.put("gets", gets.sum());
    m.put("listPages", listing.listPages.sum());
    m.put("bytes", bytesRead.sum());
    m.put("plainGets", plainGets.sum());
    m.put("plainAskedAgain", plainAskedAgain.sum());
    m.put("presigns", presigns.sum());
    m.put("retries", retries.retries.sum());
    m.put("failedAfterRetries", retries.failures.sum());
    m.put("retriedWithNewCredentials", retries.renewedRetries.sum());
    return m;
  }

  @Override
  public Map<String, Object> credentials() {
    if (credentials == null) {
      return Map.of("kind", "none", "source", "none: requests go unsigned");
    }
    return credentials.describe();
  }

  /** Runs every task at once on the thread that submits it. */
  private static final class CallerRuns extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable task) {
      task.run();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return shutdown;
    }
  }

  /**
   * At most {@code n} requests between sending and their response's headers, as OkHttp's dispatcher
   * bounded them before (its call ended when the headers were in; the body is read after).
   */
  private static final class RequestPermits implements Interceptor {
    private final Semaphore permits;

    RequestPermits(Semaphore permits) {
      this.permits = permits;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
      try {
        permits.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted waiting for an S3 connection");
      }
      try {
        return chain.proceed(chain.request());
      } finally {
        permits.release();
      }
    }
  }

  @Override
  public void close() throws IOException {
    if (credentials != null) {
      credentials.close();
    }
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
    if (plain != null) {
      plain.close();
    }
  }
}
