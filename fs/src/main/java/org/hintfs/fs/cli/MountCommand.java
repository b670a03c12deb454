package org.hintfs.fs.cli;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.hintfs.backing.DatasetSource;
import org.hintfs.backing.InMemorySource;
import org.hintfs.backing.Sources;
import org.hintfs.backing.s3.S3Options;
import org.hintfs.fs.HintFs;
import org.hintfs.fs.Mount;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.Sizes;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.fuse.HintFuse;
import org.hintfs.fs.store.CacheDirectory;
import org.hintfs.policy.Policies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hintfs mount SOURCE MOUNTPOINT}: starts a daemon and returns once the mount answers. */
@Command(
    name = "mount",
    mixinStandardHelpOptions = true,
    description = {
      "Mount a dataset read-only. Without --foreground, starts a daemon and returns once the",
      "mount answers; the daemon exits when the filesystem is unmounted."
    },
    footer = {
      "",
      "Examples:",
      "  hintfs mount /data/imagenet /mnt/imagenet",
      "  hintfs mount file:///data/imagenet /mnt/imagenet --foreground",
      "  AWS_PROFILE=training hintfs mount s3://datasets/imagenet/train /mnt/imagenet",
      "  hintfs mount s3://datasets/imagenet /mnt/x --endpoint http://minio:9000",
      "",
      "S3 credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN,",
      "else from the profile AWS_PROFILE (or 'default') in AWS_SHARED_CREDENTIALS_FILE (or",
      "~/.aws/credentials); with none, requests are unsigned. They are never taken on the",
      "command line."
    })
final class MountCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  private static final Logger log = LoggerFactory.getLogger(MountCommand.class);
  private static final long PROBE_INTERVAL_MS = 50;

  @Parameters(
      index = "0",
      paramLabel = "SOURCE",
      description = "a directory, a file:// URI or s3://bucket[/prefix]")
  String source;

  @Parameters(index = "1", paramLabel = "MOUNTPOINT", description = "an existing empty directory")
  Path mountpoint;

  @Option(
      names = {"-f", "--foreground"},
      description = "stay in the foreground and log to stderr")
  boolean foreground;

  @Option(
      names = "--log-file",
      paramLabel = "FILE",
      description = "the daemon's log (default: $TMPDIR/hintfs-<uid>/<mountpoint>.log)")
  Path logFile;

  @Option(
      names = "--mount-timeout",
      paramLabel = "SECONDS",
      defaultValue = "600",
      description =
          "give up if the mount does not answer within this time (default: ${DEFAULT-VALUE})")
  long mountTimeoutSeconds;

  @Option(names = "--daemonized", hidden = true, description = "set by the parent for its daemon")
  boolean daemonized;

  @Option(names = "--debug-fuse", description = "log every FUSE request (libfuse -d)")
  boolean debugFuse;

  @Option(
      names = "--fuse-threads",
      paramLabel = "N",
      defaultValue = "32",
      description =
          "threads serving kernel requests; each read waiting on the source holds one"
              + " (default: ${DEFAULT-VALUE})")
  int fuseThreads;

  @Option(
      names = "--cache-dir",
      paramLabel = "DIR",
      description =
          "where the LMDB cache lives (default: $XDG_CACHE_HOME/hintfs/<source>, or"
              + " ~/.cache/hintfs/<source>); it survives unmounts and restarts")
  Path cacheDir;

  @Option(names = "--no-disk-cache", description = "keep nothing on disk (RAM tier only)")
  boolean noDiskCache;

  @Option(
      names = "--trace",
      paramLabel = "FILE",
      description =
          "append every open of a dataset sample to FILE in the simulator's trace format"
              + " (also: 'trace on|off' in the control file)")
  Path trace;

  @Option(
      names = "--prefetch-window",
      paramLabel = "FILES",
      defaultValue = "" + MountConfig.DEFAULT_PREFETCH_WINDOW,
      description =
          "files fetched ahead of the reader once a seed hint is known (default: ${DEFAULT-VALUE})")
  int prefetchWindow;

  @Option(
      names = "--no-detect-order",
      description =
          "do not recognise PyTorch samplers' orders from the reads of readers that send no hint"
              + " (hints always win over a recognised order)")
  boolean noDetectOrder;

  @Option(
      names = "--source-latency-ms",
      hidden = true,
      defaultValue = "0",
      description = "tests and benchmarks: add this much latency to every source read")
  long sourceLatencyMs;

  @Option(
      names = "--reuse-listing",
      description =
          "mount from the listing saved in the cache dir at the last mount instead of listing the"
              + " source again (fast for millions of objects; changes since are not seen)")
  boolean reuseListing;

  @Option(
      names = "--cache-size",
      paramLabel = "SIZE",
      defaultValue = MountConfig.DEFAULT_CACHE_SIZE,
      description =
          "disk cache capacity: 20G, 500M, or a share of the dataset like 10%% (default:"
              + " ${DEFAULT-VALUE}, at most 90%% of the free disk)")
  String cacheSize;

  @Option(
      names = "--ram-cache",
      paramLabel = "SIZE",
      defaultValue = MountConfig.DEFAULT_RAM_CACHE_TEXT,
      description = "RAM tier capacity for objects just fetched (default: ${DEFAULT-VALUE})")
  String ramCache;

  @Option(
      names = "--policy",
      paramLabel = "NAME",
      defaultValue = MountConfig.DEFAULT_POLICY,
      description = "cache policy: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})",
      completionCandidates = PolicyNames.class)
  String policy;

  @Option(
      names = "--endpoint",
      paramLabel = "URL",
      description =
          "S3 endpoint, e.g. http://minio:9000 (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,"
              + " or AWS S3)")
  String endpoint;

  @Option(
      names = "--region",
      paramLabel = "REGION",
      description =
          "S3 signing region (default: AWS_REGION, AWS_DEFAULT_REGION, us-east-1 for a custom"
              + " endpoint, else asked of the bucket)")
  String region;

  @Option(
      names = "--path-style",
      description = "S3 path-style URLs (http://host/bucket/key); custom endpoints use them anyway")
  boolean pathStyle;

  @Option(
      names = "--retry-timeout",
      paramLabel = "SECONDS",
      defaultValue = "20",
      description =
          "how long a read keeps retrying an unreachable or failing S3 endpoint before it fails"
              + " with EIO (default: ${DEFAULT-VALUE})")
  long retryTimeoutSeconds;

  @Option(
      names = "--s3-connections",
      paramLabel = "N",
      defaultValue = "" + S3Options.DEFAULT_MAX_CONNECTIONS,
      description = "concurrent requests to the S3 endpoint (default: ${DEFAULT-VALUE})")
  int s3Connections;

  @Option(
      names = "--metrics-port",
      paramLabel = "[HOST:]PORT",
      description =
          "serve Prometheus metrics at http://HOST:PORT/metrics (HOST defaults to 127.0.0.1;"
              + " 0.0.0.0 for every interface)")
  String metricsPort;

  @Option(
      names = "--preload-into-heap",
      hidden = true,
      description = "benchmark baseline: copy the whole source into the heap, no disk cache")
  boolean preloadIntoHeap;

  @Option(
      names = "-o",
      paramLabel = "OPT",
      split = ",",
      description = "extra libfuse options, e.g. -o allow_other")
  List<String> fuseOptions = new ArrayList<>();

  /** Added to the daemon's environment ({@code refresh} passes the old daemon's credentials). */
  java.util.Map<String, String> daemonEnvironment = java.util.Map.of();

  @Override
  public Integer call() throws Exception {
    Path mp = mountpoint.toAbsolutePath().normalize();
    validateOptions();
    try (DatasetSource src = openSource()) {
      // Opened here to report a bad source or cache dir in the user's terminal, not in a log.
      if (!foreground && !noDiskCache && !preloadIntoHeap) {
        CacheDirectory.claim(resolvedCacheDir(src), src.describe()).close();
      }
    } catch (IOException e) {
      throw new UserError(e.getMessage());
    }
    Preflight.checkFuse();
    Preflight.checkMountpoint(mp);
    if (foreground) {
      return runForeground(mp);
    }
    return startDaemon(mp);
  }

  private void validateOptions() {
    try {
      Sizes.parse(cacheSize, 1);
      Sizes.parse(ramCache, 1);
      Policies.create(policy, 1);
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    if (retryTimeoutSeconds < 0 || retryTimeoutSeconds > 3600) {
      throw new UserError(
          "--retry-timeout must be between 0 and 3600 seconds, not " + retryTimeoutSeconds);
    }
    if (s3Connections < 1 || s3Connections > 4096) {
      throw new UserError("--s3-connections must be between 1 and 4096, not " + s3Connections);
    }
    if (!source.startsWith("s3://") && (endpoint != null || region != null || pathStyle)) {
      throw new UserError("--endpoint, --region and --path-style apply to s3:// sources only");
    }
    if (metricsPort != null) {
      metricsAddress();
    }
    if (fuseThreads < 1 || fuseThreads > 1024) {
      throw new UserError("--fuse-threads must be between 1 and 1024, not " + fuseThreads);
    }
  }

  private Path resolvedCacheDir(DatasetSource src) {
    return cacheDir != null ? cacheDir.toAbsolutePath().normalize() : defaultCacheDir(src);
  }

  /** {@code $XDG_CACHE_HOME/hintfs/<source, made a file name>-<hash>}, one per source. */
  static Path defaultCacheDir(DatasetSource src) {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base =
        xdg != null && !xdg.isEmpty()
            ? Path.of(xdg)
            : Path.of(System.getProperty("user.home"), ".cache");
    String d = src.describe();
    String slug = d.replaceAll("[^A-Za-z0-9._-]+", "_");
    if (slug.length() > 60) {
      slug = slug.substring(slug.length() - 60);
    }
    String hash = Integer.toHexString(d.hashCode() ^ (d.length() * 0x9E3779B9)).replace('-', '0');
    return base.resolve("hintfs").resolve(slug + "-" + hash);
  }

  private DatasetSource openSource() throws IOException {
    try {
      return Sources.open(source, s3Options());
    } catch (NoSuchFileException e) {
      if (source.startsWith("s3://")) {
        throw new UserError(e.getMessage());
      }
      throw new UserError("source " + source + " does not exist");
    } catch (java.nio.file.AccessDeniedException e) {
      throw new UserError(e.getMessage());
    } catch (NotDirectoryException e) {
      throw new UserError("source " + source + " is not a directory");
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
  }

  /** {host, port} of --metrics-port, checked. */
  private Object[] metricsAddress() {
    String v = metricsPort;
    int colon = v.lastIndexOf(':');
    String host = colon < 0 ? "127.0.0.1" : v.substring(0, colon);
    String p = colon < 0 ? v : v.substring(colon + 1);
    int port;
    try {
      port = Integer.parseInt(p);
    } catch (NumberFormatException e) {
      port = -1;
    }
    if (port < 1 || port > 65535 || host.isEmpty()) {
      throw new UserError("--metrics-port takes [HOST:]PORT with PORT 1-65535, not '" + v + "'");
    }
    return new Object[] {host, port};
  }

  private S3Options s3Options() {
    return new S3Options(
        endpoint,
        region,
        pathStyle,
        Duration.ofSeconds(retryTimeoutSeconds),
        s3Connections,
        System.getenv());
  }

  private int runForeground(Path mp) throws IOException {
    Daemon.detachFromTerminal(daemonized);
    DatasetSource src = openSource();
    if (src instanceof org.hintfs.backing.s3.S3Source s3) {
      log.info("source: {}", s3.summary());
    }
    if (preloadIntoHeap) {
      src = InMemorySource.copyOf(src);
    }
    if (sourceLatencyMs > 0) {
      src = new org.hintfs.backing.FaultInjectingSource(src).latency(sourceLatencyMs);
    }
    Path dir = noDiskCache || preloadIntoHeap ? null : resolvedCacheDir(src);
    CacheDirectory claimed = null;
    if (dir != null) {
      try {
        claimed = CacheDirectory.claim(dir, src.describe());
      } catch (IOException e) {
        throw new UserError(e.getMessage());
      }
    }
    MountConfig config =
        MountConfig.builder(source, mp)
            .cache(dir, cacheSize)
            .ramCacheBytes(Sizes.parse(ramCache, 0))
            .policy(policy)
            .fuse(debugFuse, fuseOptions)
            .tracePath(trace == null ? null : trace.toAbsolutePath())
            .prefetchWindow(prefetchWindow)
            .detectOrder(!noDetectOrder)
            .build();
    Catalog catalog = catalogFor(src, dir);
    HintFs fs;
    try {
      fs = Mount.create(src, catalog, config);
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    log.info(
        "cache: {} at {}, capacity {} bytes, policy {}",
        fs.cache().storeHealth(),
        dir,
        fs.cache().capacityBytes(),
        fs.cache().policyName());
    org.hintfs.fs.MetricsServer metrics = null;
    if (metricsPort != null) {
      Object[] a = metricsAddress();
      try {
        metrics = org.hintfs.fs.MetricsServer.start(fs, (String) a[0], (Integer) a[1]);
      } catch (IOException e) {
        throw new UserError("cannot serve metrics on " + a[0] + ":" + a[1] + ": " + e.getMessage());
      }
      log.info("metrics at http://{}:{}/metrics", a[0], metrics.port());
    }
    HintFuse fuse = new HintFuse(fs);
    String[] opts = fuseArgs(config, src.describe());
    log.info("mounting at {} with {}", mp, String.join(" ", opts));
    try {
      fuse.serve(mp, opts, fuseThreads);
    } catch (IllegalStateException e) {
      throw new UserError("mount at " + mp + " failed: " + e.getMessage() + " (see above)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (metrics != null) {
        metrics.close();
      }
      try {
        fs.close();
        fs.cache().close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      src.close();
      if (claimed != null) {
        claimed.close();
      }
    }
    log.info("unmounted {}", mp);
    return 0;
  }

  /**
   * The catalog to serve: the persisted one with {@code --reuse-listing}, else a fresh listing
   * (saved beside the cache for next time); if listing fails, the persisted one with a warning.
   */
  private Catalog catalogFor(DatasetSource src, Path dir) throws IOException {
    Path saved = dir == null ? null : dir.resolve("catalog.bin");
    if (reuseListing && saved != null && Files.exists(saved)) {
      try {
        Catalog c = Catalog.load(saved, src.describe());
        log.info("using the saved listing {} ({} files); not re-listing", saved, c.fileCount());
        return c;
      } catch (IOException e) {
        log.warn("cannot use the saved listing, listing the source: {}", e.getMessage());
      }
    }
    long t0 = System.nanoTime();
    Catalog catalog;
    try {
      catalog = Mount.listCatalog(src);
    } catch (IOException e) {
      if (saved != null && Files.exists(saved)) {
        log.warn(
            "listing {} failed ({}); serving the listing saved at the last mount",
            src.describe(),
            e);
        return Catalog.load(saved, src.describe());
      }
      throw new UserError("listing " + src.describe() + " failed: " + e.getMessage());
    }
    log.info(
        "listed {}: {} files, {} bytes, {} directories in {} ms (catalog {} bytes of heap)",
        src.describe(),
        catalog.fileCount(),
        catalog.totalBytes(),
        catalog.directoryCount(),
        (System.nanoTime() - t0) / 1_000_000,
        catalog.heapBytes());
    if (saved != null) {
      try {
        catalog.save(saved, src.describe());
      } catch (IOException e) {
        log.warn("cannot save the listing to {}: {}", saved, e.getMessage());
      }
    }
    return catalog;
  }

  static String[] fuseArgs(MountConfig c, String description) {
    long ttl = c.metadataTimeout().toSeconds();
    List<String> o = new ArrayList<>();
    // A comma would end the option: libfuse reads "\," as a literal one.
    o.add("fsname=hintfs:" + description.replace("\\", "\\\\").replace(",", "\\,"));
    o.add("subtype=hintfs");
    o.add("entry_timeout=" + ttl);
    o.add("attr_timeout=" + ttl);
    o.add("negative_timeout=" + ttl);
    o.add("kernel_cache");
    o.add("max_read=131072");
    if (Preflight.isRoot()) {
      // Root mounts directly; for others fusermount3 mounts and rejects this libfuse2 option.
      o.add("nonempty");
    }
    o.addAll(c.extraFuseOptions());
    return c.fuseDebug()
        ? new String[] {"-d", "-o", String.join(",", o)}
        : new String[] {"-o", String.join(",", o)};
  }

  /** Options the CLI acts on itself; the daemon is not given them. */
  private static final java.util.Set<String> CLI_ONLY =
      java.util.Set.of(
          "--foreground", "--daemonized", "--log-file", "--mount-timeout", "--help", "--version");

  /**
   * The options the user gave, as the daemon is to be given them, derived from the parsed command
   * line (so an option added to this command reaches the daemon with no more code): each option
   * matched, with its values as typed, paths made absolute (the daemon runs in {@code /}).
   */
  private List<String> daemonOptions() {
    List<String> out = new ArrayList<>();
    var parsed = spec.commandLine().getParseResult();
    for (picocli.CommandLine.Model.OptionSpec o : spec.options()) {
      if (CLI_ONLY.contains(o.longestName()) || !parsed.hasMatchedOption(o)) {
        continue;
      }
      if (o.arity().max() == 0) {
        out.add(o.longestName()); // a flag
        continue;
      }
      for (String v : o.originalStringValues()) {
        if (o.type() == Path.class) {
          v = Path.of(v).toAbsolutePath().normalize().toString();
        }
        out.add(o.longestName());
        out.add(v);
      }
    }
    return out;
  }

  private int startDaemon(Path mp) throws IOException, InterruptedException {
    Path logPath = logFile != null ? logFile.toAbsolutePath() : defaultLogFile(mp);
    Files.createDirectories(logPath.getParent());
    long logStart = Files.exists(logPath) ? Files.size(logPath) : 0;
    List<String> cmd = new ArrayList<>();
    cmd.add(
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    cmd.add("mount");
    cmd.add("--foreground");
    cmd.add("--daemonized");
    cmd.addAll(daemonOptions());
    cmd.add(source.contains("://") ? source : Path.of(source).toAbsolutePath().toString());
    cmd.add(mp.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().putAll(daemonEnvironment);
    Process child =
        pb.directory(new File("/")) // a daemon must not keep the caller's directory busy
            .redirectInput(new File("/dev/null"))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logPath.toFile()))
            .redirectErrorStream(true)
            .start();
    long deadline = System.nanoTime() + Duration.ofSeconds(mountTimeoutSeconds).toNanos();
    while (System.nanoTime() < deadline) {
      if (!child.isAlive()) {
        throw new UserError(
            Daemon.lastError(logPath, logStart)
                    .orElse("the daemon exited with status " + child.exitValue())
                + " (log: "
                + logPath
                + ")");
      }
      if (Mounts.isHintfs(mp) && StatusCommand.readStats(mp).isPresent()) {
        System.out.println(
            "hintfs: mounted "
                + source
                + " at "
                + mp
                + " (pid "
                + child.pid()
                + ", log "
                + logPath
                + ")");
        return 0;
      }
      Thread.sleep(PROBE_INTERVAL_MS);
    }
    child.destroy();
    throw new UserError(
        "the mount did not answer within " + mountTimeoutSeconds + " s (log: " + logPath + ")");
  }

  static Path defaultLogFile(Path mp) {
    String dir =
        System.getProperty("java.io.tmpdir")
            + "/hintfs-"
            + new com.sun.security.auth.module.UnixSystem().getUid();
    String name = mp.toString().replaceAll("[^A-Za-z0-9._-]", "_");
    return Path.of(dir, name + ".log");
  }
}
