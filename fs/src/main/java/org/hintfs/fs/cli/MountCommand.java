package org.hintfs.fs.cli;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.hintfs.backing.DatasetSource;
import org.hintfs.backing.Sources;
import org.hintfs.backing.s3.S3Options;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.Sizes;
import org.hintfs.fs.cluster.ClusterConfig;
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
      description = "the daemon's log (default: /tmp/hintfs-<uid>/<mountpoint, '/' as '_'>.log)")
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
      defaultValue = "1",
      description =
          "the fewest threads reading kernel requests; more read while they are busy (up to two"
              + " per core), and each request waiting on the source or a peer hands its thread's"
              + " place to another, up to --fuse-max-threads (default: ${DEFAULT-VALUE})")
  int fuseThreads;

  /** The default of {@code --fuse-max-threads} (or {@code --fuse-threads}, if that is more). */
  static final int DEFAULT_FUSE_MAX_THREADS = 512;

  @Option(
      names = "--fuse-max-threads",
      paramLabel = "N",
      description =
          "the most threads serving kernel requests at once: each read waiting on the source or a"
              + " peer holds one, cached reads take the others; past it requests wait in the"
              + " kernel (default: 512, or --fuse-threads if that is more)")
  Integer fuseMaxThreads;

  /** {@code --fuse-max-threads}, or its default. */
  int fuseMaxThreads() {
    return fuseMaxThreads != null
        ? fuseMaxThreads
        : Math.max(DEFAULT_FUSE_MAX_THREADS, fuseThreads);
  }

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
          "files read ahead of each reader once its order is known (default: ${DEFAULT-VALUE})")
  int prefetchWindow;

  @Option(
      names = "--max-fetches",
      paramLabel = "N",
      defaultValue = "" + MountConfig.DEFAULT_MAX_FETCHES,
      description =
          "source reads in flight at most, the readers' misses and the prefetcher's together: a"
              + " slow source needs more to keep a hinted reader fed (default: ${DEFAULT-VALUE})")
  int maxFetches;

  @Option(
      names = "--no-detect-order",
      description =
          "do not recognise PyTorch samplers' orders from the reads of readers that send no hint"
              + " (hints always win over a recognised order)")
  boolean noDetectOrder;

  @Option(
      names = "--no-warm-up",
      description =
          "start without warming up: no reads of cached files through the mount before the"
              + " first reader")
  boolean noWarmUp;

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
              + " ${DEFAULT-VALUE}; at most 90%% of what the disk can hold: its free space plus the"
              + " cache's own)")
  String cacheSize;

  @Option(
      names = "--cache-min-free",
      paramLabel = "SIZE|SHARE",
      defaultValue = "5%",
      description =
          "the free space the disk cache leaves on its disk: it grows no further when others"
              + " fill the disk to this, and grows again when they free it: 10G, or a share of the"
              + " disk like 5%% (default: ${DEFAULT-VALUE}, as mountpoint-s3 keeps; 0: none)")
  String cacheMinFree;

  @Option(
      names = "--ram-cache",
      paramLabel = "SIZE",
      defaultValue = MountConfig.DEFAULT_RAM_CACHE_TEXT,
      description = "RAM tier capacity for objects just fetched (default: ${DEFAULT-VALUE})")
  String ramCache;

  @Option(
      names = "--page-cache-reach",
      paramLabel = "SIZE|auto",
      defaultValue = "auto",
      description =
          "with substitution on, a miss the mount served as itself within the last SIZE read"
              + " through it may still be in the kernel's page cache, and is not substituted for"
              + " (default: auto, the memory available; 0: any miss may be)")
  String pageCacheReach;

  /** {@code --page-cache-reach} in bytes; negative for {@code auto}. */
  long pageCacheReachBytes() {
    if (pageCacheReach.strip().equalsIgnoreCase("auto")) {
      return -1;
    }
    try {
      if (!pageCacheReach.strip().endsWith("%")) {
        return Sizes.parse(pageCacheReach, 0);
      }
    } catch (IllegalArgumentException e) {
      // said below
    }
    throw new IllegalArgumentException(
        "--page-cache-reach must be a size (e.g. 16G, or 0) or auto, not '" + pageCacheReach + "'");
  }

  @Option(
      names = "--block-size",
      paramLabel = "SIZE",
      defaultValue = "8M",
      description =
          "files over 8 MiB are cached, and fetched from the source, in blocks of SIZE: one"
              + " ranged GET per block, a random read fetching its whole block (a power of two"
              + " from 1M to 16M; default: ${DEFAULT-VALUE}; a disk cache cut in another size"
              + " drops its blocks at mount)")
  String blockSize;

  @Option(
      names = "--write-queue",
      paramLabel = "SIZE",
      defaultValue = "auto",
      description =
          "the most fetched bytes waiting for the disk cache's writer; when the disk is behind the"
              + " source, more are served without being stored (default: auto, a thirty-second of"
              + " the memory and at most an eighth of the heap, between 128M and 512M)")
  String writeQueue;

  /** {@code --write-queue} in bytes, {@code auto} resolved. */
  long writeQueueBytes() {
    if (writeQueue.strip().equalsIgnoreCase("auto")) {
      return org.hintfs.fs.MountConfig.autoWriteQueueBytes();
    }
    long b;
    try {
      b = writeQueue.strip().endsWith("%") ? 0 : Sizes.parse(writeQueue, 1);
    } catch (IllegalArgumentException e) {
      b = 0;
    }
    if (b < 1) {
      throw new IllegalArgumentException(
          "--write-queue must be a size of at least 1 byte (e.g. 512M) or auto, not '"
              + writeQueue
              + "'");
    }
    return b;
  }

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
      defaultValue = "120",
      description =
          "how long a read keeps retrying an unreachable or failing S3 endpoint before it fails"
              + " with EIO (default: ${DEFAULT-VALUE})")
  long retryTimeoutSeconds;

  @Option(
      names = "--s3-connections",
      paramLabel = "N",
      description =
          "concurrent requests to the S3 endpoint (default: --max-fetches + 64, at least "
              + S3Options.DEFAULT_MAX_CONNECTIONS
              + ")")
  Integer s3Connections;

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
      names = "--cluster",
      paramLabel = "NAME",
      description =
          "share one cache with the other nodes of a job: every daemon of the job names the same"
              + " cluster; each sample is fetched from the source by its home alone")
  String cluster;

  @Option(
      names = "--cluster-bind",
      paramLabel = "HOST[:PORT]",
      description =
          "where this member listens (default 127.0.0.1:7800); a loopback or private address"
              + " unless --cluster-secret-file is given")
  String clusterBind;

  @Option(
      names = "--cluster-peers",
      paramLabel = "HOST[:PORT],...",
      description =
          "members to find the cluster by (e.g. every node of a Slurm job: scontrol show"
              + " hostnames); '+' also separates them (for fstab)")
  String clusterPeers;

  @Option(
      names = "--cluster-config",
      paramLabel = "FILE",
      description =
          "a JGroups stack of your own instead of TCP + TCPPING (e.g. DNS_PING for a Kubernetes"
              + " headless service)")
  Path clusterConfig;

  @Option(
      names = "--cluster-secret-file",
      paramLabel = "FILE",
      description =
          "only members holding this file's bytes join (JGroups AUTH), and their traffic is"
              + " encrypted with a key drawn from it (SYM_ENCRYPT)")
  Path clusterSecretFile;

  @Option(
      names = "--allow-nonempty",
      description =
          "mount over a directory that has files in it (they are hidden while mounted; -o"
              + " nonempty does the same)")
  boolean allowNonEmpty;

  @Option(
      names = "--read-only",
      description =
          "mount the dataset read-only (-o ro does the same): a READ no longer makes the kernel"
              + " ask for the file's attributes again, one FUSE request less per open of a file"
              + " read before; the control file takes no hints or commands (status still reads)")
  boolean readOnly;

  @picocli.CommandLine.Mixin OwnershipOptions owners = new OwnershipOptions();

  @Option(
      names = "-o",
      paramLabel = "OPT",
      split = ",",
      description =
          "extra libfuse options, e.g. -o allow_other (every user of the node may enter the mount;"
              + " the kernel then checks the modes and owners shown: default_permissions);"
              + " -o uid=,gid=,file_mode=,dir_mode= are --uid, --gid, --file-mode, --dir-mode")
  List<String> fuseOptions = new ArrayList<>();

  /**
   * The old daemon's credentials and home ({@code refresh}): when set, they replace the caller's
   * {@code AWS_*} variables, in the checks here and in the new daemon.
   */
  java.util.Map<String, String> daemonEnvironment = java.util.Map.of();

  /** The environment the source is opened with: the caller's, or the old daemon's on refresh. */
  java.util.Map<String, String> environment() {
    java.util.Map<String, String> env = new java.util.HashMap<>(System.getenv());
    if (!daemonEnvironment.isEmpty()) {
      env.keySet().removeIf(k -> k.startsWith("AWS_"));
      env.putAll(daemonEnvironment);
    }
    return env;
  }

  @Override
  public Integer call() throws Exception {
    Daemon.keepFilesPrivate();
    Path mp = mountpoint.toAbsolutePath().normalize();
    normalizeOptions();
    validateOptions();
    try (DatasetSource src = openSource()) {
      // Opened here to report a bad source or cache dir in the user's terminal, not in a log.
      if (!foreground && !noDiskCache && !preloadIntoHeap) {
        CacheDirectory.claim(resolvedCacheDir(src), src.describe(), mp).close();
      }
    } catch (IOException e) {
      throw new UserError(e.getMessage());
    }
    Preflight.checkFuse();
    Preflight.checkMountpoint(mp, allowNonEmpty || fuseOptions.contains("nonempty"));
    if (!daemonized && OwnershipOptions.othersMayEnter(fuseOptions)) {
      System.err.println(
          "hintfs: "
              + OwnershipOptions.allowOtherNotice(
                  owners.ownership(), !source.startsWith("s3://"), source));
    }
    if (foreground) {
      return ForegroundMount.run(this, mp);
    }
    return DaemonLauncher.start(this, mp);
  }

  /**
   * -o nonempty is --allow-nonempty: root's mounts pass it to libfuse anyway, and fusermount3
   * (everyone else's) rejects it. --read-only is -o ro.
   */
  private void normalizeOptions() {
    allowNonEmpty |= fuseOptions.remove("nonempty");
    owners.takeFrom(fuseOptions);
    if (readOnly && !fuseOptions.contains("ro")) {
      fuseOptions.add("ro");
    }
  }

  /**
   * What {@code refresh} checks while the old mount still serves: the options and the source
   * (reachable, credentials accepted), with the environment the new daemon will get.
   */
  void checkBeforeRemount() {
    normalizeOptions();
    validateOptions();
    try (DatasetSource src = openSource()) {
      // opened and probed: that is the check
    } catch (IOException e) {
      throw new UserError(e.getMessage());
    }
  }

  private void validateOptions() {
    try {
      if (Sizes.parse(cacheSize, 1L << 40) == 0) {
        throw new UserError(
            "--cache-size "
                + cacheSize
                + " holds nothing: for a mount without a disk cache use"
                + " --no-disk-cache");
      }
      Sizes.parse(ramCache, 1);
      pageCacheReachBytes();
      writeQueueBytes();
      org.hintfs.fs.store.MinFree.parse(cacheMinFree);
      MountConfig.parseBlockSize(blockSize);
      Policies.create(policy, 1);
      owners.ownership();
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
    if (retryTimeoutSeconds < 0 || retryTimeoutSeconds > 3600) {
      throw new UserError(
          "--retry-timeout must be between 0 and 3600 seconds, not " + retryTimeoutSeconds);
    }
    if (s3Connections != null && (s3Connections < 1 || s3Connections > 4096)) {
      throw new UserError("--s3-connections must be between 1 and 4096, not " + s3Connections);
    }
    if (maxFetches < 1 || maxFetches > 4096) {
      throw new UserError("--max-fetches must be between 1 and 4096, not " + maxFetches);
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
    if (fuseMaxThreads() < fuseThreads || fuseMaxThreads() > 8192) {
      throw new UserError(
          "--fuse-max-threads must be between --fuse-threads ("
              + fuseThreads
              + ") and 8192, not "
              + fuseMaxThreads());
    }
    if (cluster == null
        && (clusterBind != null
            || clusterPeers != null
            || clusterConfig != null
            || clusterSecretFile != null)) {
      throw new UserError(
          "--cluster-bind, --cluster-peers, --cluster-config and --cluster-secret-file need"
              + " --cluster NAME");
    }
    clusterConfig();
  }

  /** The cluster to join, checked; null without --cluster. */
  ClusterConfig clusterConfig() {
    if (cluster == null) {
      return null;
    }
    for (Path f : new Path[] {clusterConfig, clusterSecretFile}) {
      if (f != null && !java.nio.file.Files.isReadable(f)) {
        throw new UserError(f + " does not exist or cannot be read");
      }
    }
    try {
      return ClusterConfig.parse(
          cluster,
          clusterBind,
          clusterPeers == null ? null : clusterPeers.replace('+', ','),
          clusterConfig == null ? null : clusterConfig.toAbsolutePath(),
          clusterSecretFile == null ? null : clusterSecretFile.toAbsolutePath());
    } catch (IllegalArgumentException e) {
      throw new UserError(e.getMessage());
    }
  }

  Path resolvedCacheDir(DatasetSource src) {
    return cacheDir != null
        ? cacheDir.toAbsolutePath().normalize()
        : defaultCacheDir(src, environment());
  }

  /** {@code $XDG_CACHE_HOME/hintfs/<source, made a file name>-<hash>}, one per source. */
  static Path defaultCacheDir(DatasetSource src, java.util.Map<String, String> env) {
    String xdg = env.get("XDG_CACHE_HOME");
    String home = env.getOrDefault("HOME", System.getProperty("user.home"));
    Path base = xdg != null && !xdg.isEmpty() ? Path.of(xdg) : Path.of(home, ".cache");
    String d = src.describe();
    String slug = d.replaceAll("[^A-Za-z0-9._-]+", "_");
    if (slug.length() > 60) {
      slug = slug.substring(slug.length() - 60);
    }
    String hash = Integer.toHexString(d.hashCode() ^ (d.length() * 0x9E3779B9)).replace('-', '0');
    return base.resolve("hintfs").resolve(slug + "-" + hash);
  }

  DatasetSource openSource() throws IOException {
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
  Object[] metricsAddress() {
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

  S3Options s3Options() {
    return new S3Options(
        endpoint,
        region,
        pathStyle,
        Duration.ofSeconds(retryTimeoutSeconds),
        s3Connections(),
        environment());
  }

  /**
   * Requests to the S3 endpoint at once: as given, else room for every fetch plus 64 for listing
   * and retries, at least {@link S3Options#DEFAULT_MAX_CONNECTIONS}.
   */
  int s3Connections() {
    return s3Connections != null
        ? s3Connections
        : Math.min(4096, Math.max(S3Options.DEFAULT_MAX_CONNECTIONS, maxFetches + 64));
  }
}
