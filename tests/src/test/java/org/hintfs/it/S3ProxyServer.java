package org.hintfs.it;

import io.minio.BucketExistsArgs;
import io.minio.MakeBucketArgs;
import io.minio.MinioClient;
import io.minio.PutObjectArgs;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.hintfs.backing.LocalDirSource;

/**
 * A real S3 server on loopback: S3Proxy 4.1.0 with the {@code filesystem-nio2} backend and
 * authentication on, run as its own process so it can be killed and restarted on the same port.
 */
final class S3ProxyServer implements AutoCloseable {
  static final String ACCESS_KEY = "hintfs-test-key";
  static final String SECRET_KEY = "hintfs-test-secret-0123456789";

  private final Path base;
  private final int port;
  private final Path log;
  private Process process;
  private String accessKey = ACCESS_KEY;
  private String secretKey = SECRET_KEY;

  S3ProxyServer(Path workDir) throws IOException {
    this.base = Files.createDirectories(workDir.resolve("s3-data"));
    this.log = workDir.resolve("s3proxy.log");
    this.port = Ports.free();
  }

  static Path jar() {
    String p =
        System.getProperty(
            "s3proxy.jar", Hintfs.ROOT.resolve("tests/target/s3proxy.jar").toString());
    return Path.of(p);
  }

  int port() {
    return port;
  }

  String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /** The environment a mount needs for these credentials. */
  static Map<String, String> credentialsEnv() {
    Map<String, String> env = new HashMap<>();
    env.put("AWS_ACCESS_KEY_ID", ACCESS_KEY);
    env.put("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
    return env;
  }

  /**
   * Starts the server and waits until it accepts connections; a server already running is left as
   * it is. (A test that failed before its kill used to start a second one in its finally: the first
   * kept the port, outlived {@link #kill} and {@link #close}, and failed the next tests.)
   */
  S3ProxyServer start() throws IOException, InterruptedException {
    if (process != null && process.isAlive()) {
      return this;
    }
    Path conf = base.resolveSibling("s3proxy.conf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "s3proxy.endpoint=http://127.0.0.1:" + port,
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + accessKey,
            "s3proxy.credential=" + secretKey,
            // Temporary credentials sign an x-amz-security-token header, which S3Proxy does not
            // know (it would answer NotImplemented); the signature over it is still checked.
            "s3proxy.ignore-unknown-headers=true",
            "jclouds.provider=filesystem-nio2",
            "jclouds.filesystem.basedir=" + base,
            ""),
        StandardCharsets.UTF_8);
    process =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx512m",
                    "-jar",
                    jar().toString(),
                    "--properties",
                    conf.toString()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(new File("/dev/null"))
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException("S3Proxy exited; see " + log);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return this;
      } catch (IOException notYet) {
        Thread.sleep(100);
      }
    }
    throw new IOException("S3Proxy did not listen on " + port + " within 60 s; see " + log);
  }

  /**
   * The key pair the server accepts from its next {@link #start}: a restart with another identity
   * is a key rotated at the server (the old key refused from then on).
   */
  S3ProxyServer identity(String accessKey, String secretKey) {
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    return this;
  }

  /** Kills the server at once, as a crash would. */
  void kill() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
      process = null;
    }
  }

  /**
   * Stops the server (SIGSTOP) without closing anything: connections stay open and nothing answers,
   * as with a network partition or a stuck server. {@link #answerAgain} continues it.
   */
  void stopAnswering() throws IOException, InterruptedException {
    signal("-STOP");
  }

  /** Continues a server {@link #stopAnswering} stopped (SIGCONT). */
  void answerAgain() throws IOException, InterruptedException {
    signal("-CONT");
  }

  private void signal(String sig) throws IOException, InterruptedException {
    if (process == null) {
      throw new IllegalStateException("S3Proxy is not running");
    }
    int rc = new ProcessBuilder("kill", sig, Long.toString(process.pid())).start().waitFor();
    if (rc != 0) {
      throw new IOException("kill " + sig + " " + process.pid() + " failed: " + rc);
    }
  }

  MinioClient client() {
    return MinioClient.builder()
        .endpoint(endpoint())
        .region("us-east-1")
        .credentials(accessKey, secretKey)
        .build();
  }

  /** Creates {@code bucket} and uploads every file under {@code dir} below {@code prefix}. */
  void upload(String bucket, String prefix, Path dir) throws Exception {
    MinioClient c = client();
    if (!c.bucketExists(BucketExistsArgs.builder().bucket(bucket).build())) {
      c.makeBucket(MakeBucketArgs.builder().bucket(bucket).build());
    }
    // Listed the way the directory source lists it: symlinks followed, cycles skipped.
    List<String> files = new ArrayList<>();
    new LocalDirSource(dir)
        .list(
            o -> {
              if (!o.directory()) {
                files.add(o.path());
              }
            });
    // Eight PUTs at once: thousands of small objects upload in a fraction of the serial time.
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (String f : files) {
        done.add(
            pool.submit(
                () -> {
                  put(c, bucket, prefix + f, Files.readAllBytes(dir.resolve(f)));
                  return null;
                }));
      }
      for (Future<?> d : done) {
        d.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  static void put(MinioClient c, String bucket, String key, byte[] bytes) throws Exception {
    c.putObject(
        PutObjectArgs.builder().bucket(bucket).object(key).stream(
                new ByteArrayInputStream(bytes), (long) bytes.length, -1L)
            .build());
  }

  @Override
  public void close() throws InterruptedException {
    kill();
  }
}
