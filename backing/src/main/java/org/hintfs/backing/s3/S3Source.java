package org.hintfs.backing.s3;

import io.minio.GetObjectArgs;
import io.minio.GetObjectResponse;
import io.minio.ListObjectsArgs;
import io.minio.MinioClient;
import io.minio.Result;
import io.minio.StatObjectArgs;
import io.minio.StatObjectResponse;
import io.minio.credentials.StaticProvider;
import io.minio.errors.ErrorResponseException;
import io.minio.errors.MinioException;
import io.minio.errors.ServerException;
import io.minio.messages.Item;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
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
 *   <li>OkHttp gets its own dispatcher and connection pool sized {@code maxConnections} (its
 *       default dispatcher allows 5 requests per host).
 *   <li>5xx, 429, timeouts, refused connections and resets are retried with jittered exponential
 *       backoff (50 ms doubling, at most 2 s apart) until {@code retryTime} has passed, with a last
 *       attempt then; after that the read fails with a {@link SourceUnavailableException} marked as
 *       retried. Access errors and missing keys fail at once.
 * </ul>
 */
public final class S3Source implements DatasetSource {
  private static final Logger log = LoggerFactory.getLogger(S3Source.class);
  private static final long BACKOFF_START_MS = 50;
  private static final long BACKOFF_MAX_MS = 2_000;
  private static final int LIST_THREADS = 16;

  private final String bucket;
  private final String prefix;
  private final String endpoint;
  private final MinioClient client;
  private final OkHttpClient http;
  private final long retryNanos;
  private final Duration retryTime;

  private String summary;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger maxInFlight = new AtomicInteger();
  private final LongAdder gets = new LongAdder();
  private final LongAdder listPages = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder retries = new LongAdder();
  private final LongAdder failures = new LongAdder();

  private S3Source(
      String bucket,
      String prefix,
      String endpoint,
      MinioClient client,
      OkHttpClient http,
      Duration retryTime) {
    this.bucket = bucket;
    this.prefix = prefix;
    this.endpoint = endpoint;
    this.client = client;
    this.http = http;
    this.retryTime = retryTime;
    this.retryNanos = retryTime.toNanos();
  }

  /** A bucket and a prefix ("" or ending in '/'). */
  record Location(String bucket, String prefix) {}

  /** Parses {@code s3://bucket[/prefix][/]}. */
  static Location parse(String spec) {
    if (!spec.startsWith("s3://")) {
      throw new IllegalArgumentException("not an s3:// URL: " + spec);
    }
    String rest = spec.substring("s3://".length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash + 1);
    if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new IllegalArgumentException(
          "'"
              + bucket
              + "' in "
              + spec
              + " is not a valid bucket name (3-63 of a-z, 0-9, '.', '-')");
    }
    while (prefix.startsWith("/")) {
      prefix = prefix.substring(1);
    }
    if (!prefix.isEmpty() && !prefix.endsWith("/")) {
      prefix = prefix + "/";
    }
    if (prefix.contains("//")) {
      throw new IllegalArgumentException("the prefix in " + spec + " has an empty segment ('//')");
    }
    return new Location(bucket, prefix);
  }

  /**
   * Connects to {@code spec} and checks, with one small listing, that the bucket exists and the
   * credentials may list it; every failure is an {@link IOException} whose message is one line fit
   * for a user.
   */
  public static S3Source open(String spec, S3Options options) throws IOException {
    Location loc = parse(spec);
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
    S3Credentials creds = S3Credentials.resolve(options.env());
    int n = options.maxConnections();
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(n);
    dispatcher.setMaxRequestsPerHost(n);
    OkHttpClient http =
        new OkHttpClient.Builder()
            .dispatcher(dispatcher)
            .connectionPool(new ConnectionPool(n, 5, TimeUnit.MINUTES))
            .connectTimeout(5, TimeUnit.SECONDS)
            .readTimeout(10, TimeUnit.SECONDS)
            .writeTimeout(10, TimeUnit.SECONDS)
            .build();
    MinioClient.Builder b = MinioClient.builder().endpoint(ep).httpClient(http);
    String region = options.effectiveRegion(!aws);
    if (region != null) {
      b.region(region);
    }
    if (!creds.anonymous()) {
      b.credentialsProvider(
          new StaticProvider(creds.accessKey(), creds.secretKey(), creds.sessionToken()));
    }
    MinioClient client;
    try {
      client = b.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--endpoint " + ep + ": " + e.getMessage());
    }
    if (options.pathStyle() || !aws) {
      client.disableVirtualStyleEndpoint();
    }
    S3Source s = new S3Source(loc.bucket(), loc.prefix(), ep, client, http, options.retryTime());
    s.summary =
        s.describe()
            + " at "
            + ep
            + ", region "
            + (region == null ? "(asked of the bucket)" : region)
            + ", credentials: "
            + creds
            + ", up to "
            + n
            + " requests at once, retries for "
            + options.retryTime().toSeconds()
            + " s";
    log.debug("opening {}", s.summary);
    s.probe();
    return s;
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
      throw mountError(e);
    }
  }

  private IOException mountError(Exception e) {
    String where = describe();
    if (e instanceof ErrorResponseException er) {
      String code = er.errorResponse().code();
      return switch (code) {
        case "NoSuchBucket" ->
            new NoSuchFileException(
                where, null, "bucket '" + bucket + "' does not exist (NoSuchBucket)");
        case "InvalidAccessKeyId" ->
            new AccessDeniedException(
                where,
                null,
                "the access key is not known to the server (InvalidAccessKeyId); check"
                    + " AWS_ACCESS_KEY_ID or the profile");
        case "SignatureDoesNotMatch" ->
            new AccessDeniedException(
                where,
                null,
                "the secret key is wrong (SignatureDoesNotMatch); check AWS_SECRET_ACCESS_KEY or the"
                    + " profile");
        case "AccessDenied", "AllAccessDisabled", "ExpiredToken", "InvalidToken" ->
            new AccessDeniedException(
                where, null, "access denied (" + code + "): the credentials may not list it");
        default ->
            new IOException(
                where + ": the server answered " + code + ": " + er.errorResponse().message());
      };
    }
    Throwable c = rootCause(e);
    if (c instanceof SSLException) {
      return new IOException("TLS with " + endpoint + " failed: " + c.getMessage());
    }
    if (c instanceof UnknownHostException) {
      return new IOException("cannot resolve the S3 endpoint host in " + endpoint);
    }
    if (c instanceof ConnectException || c instanceof java.net.SocketTimeoutException) {
      return new SourceUnavailableException(
          "cannot reach the S3 endpoint " + endpoint + ": " + c.getMessage());
    }
    if (c instanceof IOException) {
      return new SourceUnavailableException(
          "the S3 endpoint " + endpoint + " failed: " + c.getMessage());
    }
    return new IOException(where + ": " + c);
  }

  private static Throwable rootCause(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
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

  // ------------------------------------------------------------------------------------ listing

  @Override
  public void list(Consumer<SourceObject> sink) throws IOException {
    Object sinkLock = new Object();
    Consumer<SourceObject> serial =
        o -> {
          synchronized (sinkLock) {
            sink.accept(o);
          }
        };
    List<String> subPrefixes = new ArrayList<>();
    listPrefix(prefix, true, serial, subPrefixes);
    if (subPrefixes.isEmpty()) {
      return;
    }
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.min(LIST_THREADS, subPrefixes.size()),
            r -> {
              Thread t = new Thread(r, "hintfs-s3-list");
              t.setDaemon(true);
              return t;
            });
    try {
      List<Future<?>> done = new ArrayList<>();
      for (String p : subPrefixes) {
        done.add(
            pool.submit(
                () -> {
                  listPrefix(p, false, serial, null);
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while listing " + describe());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("listing " + describe() + " failed: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Lists everything under {@code p}: with a delimiter (one level; sub-prefixes go to {@code subs})
   * or recursively. A failed page is retried from the last key seen.
   */
  private void listPrefix(
      String p, boolean oneLevel, Consumer<SourceObject> sink, List<String> subs)
      throws IOException {
    String[] after = {null};
    withRetries(
        "LIST " + p,
        p,
        () -> {
          ListObjectsArgs.Builder a = ListObjectsArgs.builder().bucket(bucket).prefix(p);
          if (oneLevel) {
            a.delimiter("/");
          } else {
            a.recursive(true);
          }
          if (after[0] != null) {
            a.startAfter(after[0]);
          }
          listPages.increment();
          for (Result<Item> r : client.listObjects(a.build())) {
            Item item = r.get();
            String key = item.objectName();
            if (item.isDir()) {
              if (subs != null) {
                subs.add(key);
              }
            } else {
              emit(item, sink);
            }
            after[0] = key;
          }
          return null;
        });
  }

  private void emit(Item item, Consumer<SourceObject> sink) {
    String key = item.objectName();
    if (!key.startsWith(prefix)) {
      return;
    }
    String rel = key.substring(prefix.length());
    long mtime = item.lastModified() == null ? 0 : item.lastModified().toInstant().toEpochMilli();
    boolean marker = rel.endsWith("/");
    if (marker) {
      rel = rel.substring(0, rel.length() - 1);
    }
    if (rel.isEmpty()) {
      return; // the prefix's own marker
    }
    if (!representable(rel)) {
      log.warn("skipping key {}: it has an empty, '.' or '..' path segment", key);
      return;
    }
    if (marker) {
      sink.accept(SourceObject.dir(rel, mtime));
    } else {
      sink.accept(SourceObject.file(rel, item.size(), versionTag(item.etag(), item.size()), mtime));
    }
  }

  private static boolean representable(String rel) {
    for (String seg : rel.split("/", -1)) {
      if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
        return false;
      }
    }
    return true;
  }

  static String versionTag(String etag, long size) {
    return stripQuotes(etag) + ":" + size;
  }

  /** The ETag part of a version tag ({@code etag:size}). */
  static String etagOf(String versionTag) {
    int colon = versionTag.lastIndexOf(':');
    return colon < 0 ? versionTag : versionTag.substring(0, colon);
  }

  static String stripQuotes(String etag) {
    if (etag == null) {
      return "";
    }
    String e = etag.strip();
    if (e.startsWith("W/")) {
      e = e.substring(2);
    }
    if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
      e = e.substring(1, e.length() - 1);
    }
    return e;
  }

  // ------------------------------------------------------------------------------------ objects

  @Override
  public SourceObject stat(String path) throws IOException {
    String key = prefix + path;
    try {
      return withRetries(
          "HEAD " + key,
          path,
          () -> {
            StatObjectResponse r =
                client.statObject(StatObjectArgs.builder().bucket(bucket).object(key).build());
            long mtime = r.lastModified() == null ? 0 : r.lastModified().toInstant().toEpochMilli();
            return SourceObject.file(path, r.size(), versionTag(r.etag(), r.size()), mtime);
          });
    } catch (NoSuchFileException e) {
      boolean[] any = {false};
      withRetries(
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
    String etag = expectedVersion == null ? null : etagOf(expectedVersion);
    int start = dst.position();
    Integer got =
        withRetries(
            "GET " + key,
            path,
            () -> {
              GetObjectArgs.Builder a =
                  GetObjectArgs.builder()
                      .bucket(bucket)
                      .object(key)
                      .offset(offset)
                      .length((long) want);
              if (etag != null && !etag.isEmpty()) {
                a.matchETag(etag);
              }
              int now = inFlight.incrementAndGet();
              maxInFlight.accumulateAndGet(now, Math::max);
              gets.increment();
              try (GetObjectResponse r = client.getObject(a.build())) {
                String actual = stripQuotes(r.headers().get("ETag"));
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

  /**
   * Reads up to {@code want} bytes of the body into {@code dst}, straight into its array when it
   * has one (one copy from the socket); returns how many.
   */
  private static int readInto(InputStream in, ByteBuffer dst, int want) throws IOException {
    if (!dst.hasArray()) {
      byte[] buf = in.readNBytes(want);
      dst.put(buf);
      return buf.length;
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

  private interface Call<T> {
    T run() throws Exception;
  }

  /** A failure worth another attempt. */
  private static final class Transient extends IOException {
    Transient(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private <T> T withRetries(String what, String path, Call<T> call) throws IOException {
    long deadline = System.nanoTime() + retryNanos;
    for (int attempt = 0; ; attempt++) {
      IOException failure;
      try {
        return call.run();
      } catch (Exception e) {
        failure = classify(e, path);
      }
      if (failure instanceof EndOfObject) {
        return null; // a range at or past the end: nothing to read (only ranged GETs get here)
      }
      if (!(failure instanceof Transient)) {
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

  /** A range that starts at or past the end: a read of 0 bytes. */
  private static final class EndOfObject extends IOException {}

  private IOException classify(Exception e, String path) {
    if (e instanceof ObjectChangedException oc) {
      return oc;
    }
    if (e instanceof InterruptedIOException ie) {
      return ie;
    }
    if (e instanceof ErrorResponseException er) {
      String code = er.errorResponse().code();
      int status = er.response() == null ? 0 : er.response().code();
      switch (code) {
        case "NoSuchKey":
          return new NoSuchFileException(path);
        case "InvalidRange":
          return new EndOfObject();
        case "PreconditionFailed":
          return new ObjectChangedException(path, "the listed ETag", "a different one");
        case "NoSuchBucket":
          return new NoSuchFileException(path, null, "bucket " + bucket + " no longer exists");
        case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken":
          return new AccessDeniedException(path, null, code);
        case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout":
          return new Transient(code, e);
        default:
          if (status >= 500 || status == 429) {
            return new Transient(code + " (HTTP " + status + ")", e);
          }
          return new IOException(path + ": " + code + ": " + er.errorResponse().message(), e);
      }
    }
    if (e instanceof ServerException se) {
      int status = se.statusCode();
      if (status == 412) {
        return new ObjectChangedException(path, "the listed ETag", "a different one");
      }
      if (status >= 500 || status == 429) {
        return new Transient("HTTP " + status, e);
      }
      return new IOException(path + ": HTTP " + status + ": " + se.getMessage(), e);
    }
    Throwable c = rootCause(e);
    if (c instanceof SSLException) {
      return new IOException("TLS with " + endpoint + " failed: " + c.getMessage(), c);
    }
    if (c instanceof IOException || e instanceof MinioException) {
      return new Transient(String.valueOf(c.getMessage()), c);
    }
    return new IOException(path + ": " + c, c);
  }

  // ------------------------------------------------------------------------------------ metrics

  @Override
  public Map<String, Long> counters() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("requestsInFlight", (long) inFlight.get());
    m.put("maxRequestsInFlight", (long) maxInFlight.get());
    m.put("gets", gets.sum());
    m.put("listPages", listPages.sum());
    m.put("bytes", bytesRead.sum());
    m.put("retries", retries.sum());
    m.put("failedAfterRetries", failures.sum());
    return m;
  }

  @Override
  public void close() throws IOException {
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
