package org.hintfs.fs.cluster;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.infinispan.Cache;
import org.infinispan.commons.dataconversion.MediaType;
import org.infinispan.configuration.cache.CacheMode;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.global.GlobalConfigurationBuilder;
import org.infinispan.distribution.LocalizedCacheTopology;
import org.infinispan.factories.GlobalComponentRegistry;
import org.infinispan.manager.DefaultCacheManager;
import org.infinispan.manager.EmbeddedCacheManager;
import org.infinispan.notifications.Listener;
import org.infinispan.notifications.cachelistener.annotation.TopologyChanged;
import org.infinispan.notifications.cachelistener.event.TopologyChangedEvent;
import org.infinispan.notifications.cachemanagerlistener.annotation.Merged;
import org.infinispan.notifications.cachemanagerlistener.annotation.ViewChanged;
import org.infinispan.notifications.cachemanagerlistener.event.MergeEvent;
import org.infinispan.notifications.cachemanagerlistener.event.ViewChangedEvent;
import org.infinispan.remoting.transport.Address;
import org.infinispan.remoting.transport.jgroups.JGroupsChannelConfigurator;
import org.infinispan.remoting.transport.jgroups.JGroupsTransport;
import org.infinispan.util.function.SerializableFunction;
import org.jgroups.JChannel;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.stack.ProtocolStack;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This daemon's membership in its job's cluster: an embedded Infinispan cache manager on a JGroups
 * channel.
 *
 * <p>Homes: the cache {@code hintfs-homes} is distributed with one owner per key and holds no
 * entries; its consistent hash alone names each sample's home ({@link #homeOf}), computed locally,
 * with no message. When a member joins or leaves, Infinispan rebalances the hash and every member
 * sees the new homes at once; nothing moves, since the bytes live in each home's own cache.
 *
 * <p>Transfer: {@link #ask} runs a function on the home through Infinispan's cluster executor; the
 * function finds the home's {@link HomeServer} in that node's component registry and answers with
 * the bytes in a {@link PeerReply}. A member that dies fails the call at once (its address leaves
 * the view); a slow one is cut by the timeout.
 *
 * <p>Admission: the replicated cache {@code hintfs-job} holds what the cluster serves (the source
 * and its listing's fingerprint); a member whose source or listing differs is refused at start.
 * With a secret, JGroups' AUTH refuses a member that cannot prove it holds the secret, and
 * SYM_ENCRYPT encrypts every message with a key drawn from it.
 */
public final class ClusterMember implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ClusterMember.class);
  static final String HOMES = "hintfs-homes";
  static final String JOB = "hintfs-job";

  private final DefaultCacheManager manager;
  private final Cache<Integer, byte[]> homes;
  private final ClusterConfig config;
  private final AtomicLong viewChanges = new AtomicLong();
  private final AtomicLong rebalances = new AtomicLong();

  /**
   * Each segment's home now, and in the last earlier homes this node read through (null until
   * then): the topologies a cluster goes through while its members start, before any reader, held
   * nothing, and asking them would cost each first-epoch miss a message for nothing.
   */
  private Address[] homesNow;

  private volatile boolean readSinceHomesMoved;

  private volatile Runnable homesMoved = () -> {};

  /**
   * Runs {@code r} whenever the homes move (on Infinispan's notification thread: hand long work to
   * a thread of its own).
   */
  public void onHomesMoved(Runnable r) {
    this.homesMoved = r;
  }

  private volatile Address[] formerHomes;

  private ClusterMember(DefaultCacheManager manager, ClusterConfig config) {
    this.manager = manager;
    this.config = config;
    this.homes = manager.getCache(HOMES);
    recordHomes();
    manager.addListener(new ViewCounter());
    homes.addListener(new TopologyCounter());
  }

  /**
   * Joins (or forms) the cluster, serving this node's homed samples through {@code server}.
   *
   * @param identity what this mount serves: the source and its listing's fingerprint; members must
   *     agree on it
   * @throws ClusterRefusedException with a one-line reason: another source, a wrong secret, a port
   *     in use
   */
  public static ClusterMember join(ClusterConfig config, String identity, HomeServer server)
      throws ClusterRefusedException {
    byte[] secret = readSecret(config);
    String tag = SharedSecret.tag(secret);
    DefaultCacheManager cm;
    try {
      GlobalConfigurationBuilder g = new GlobalConfigurationBuilder();
      // The channel comes from a configurator: a JGroupsTransport built around a channel of our
      // own is replaced by Infinispan's default (UDP multicast) stack without a word.
      g.transport()
          .clusterName(config.name())
          .nodeName(config.bindHost() + ":" + config.bindPort() + "~" + tag)
          .defaultTransport()
          .addProperty(JGroupsTransport.CHANNEL_CONFIGURATOR, new Stack(config, secret));
      g.jmx().disable();
      cm = new DefaultCacheManager(g.build(), false);
      GlobalComponentRegistry.of(cm).registerComponent(server, HomeServer.class);
      cm.start();
    } catch (Exception e) {
      throw new ClusterRefusedException(
          "cannot join cluster " + config.name() + ": " + rootMessage(e), e);
    }
    try {
      ConfigurationBuilder dist = new ConfigurationBuilder();
      dist.clustering()
          .cacheMode(CacheMode.DIST_SYNC)
          .remoteTimeout(10, TimeUnit.SECONDS)
          .hash()
          .numOwners(1);
      // Keys are hashed as the objects they are: every member computes the same home for an id.
      dist.encoding().mediaType(MediaType.APPLICATION_OBJECT_TYPE);
      cm.defineConfiguration(HOMES, dist.build());
      ConfigurationBuilder repl = new ConfigurationBuilder();
      repl.clustering().cacheMode(CacheMode.REPL_SYNC).remoteTimeout(10, TimeUnit.SECONDS);
      repl.encoding().mediaType(MediaType.APPLICATION_OBJECT_TYPE);
      cm.defineConfiguration(JOB, repl.build());
      refuseIfShutOut(cm, config, tag);
      Cache<String, String> job = cm.getCache(JOB);
      String served = job.putIfAbsent("identity", identity);
      if (served != null && !served.equals(identity)) {
        throw new ClusterRefusedException(
            "cluster "
                + config.name()
                + " serves "
                + served
                + "; this mount serves "
                + identity
                + ": give this job its own --cluster name, or mount the same source");
      }
      ClusterMember m = new ClusterMember(cm, config);
      server.onServe(m::noteRead);
      log.info("joined cluster {} as {}: members {}", config.name(), m.self(), cm.getMembers());
      return m;
    } catch (ClusterRefusedException e) {
      cm.stop();
      throw e;
    } catch (RuntimeException e) {
      cm.stop();
      throw new ClusterRefusedException(
          "cannot join cluster " + config.name() + ": " + rootMessage(e), e);
    }
  }

  /**
   * A member whose messages the others cannot decrypt (another secret, or none where they have one)
   * is never answered: JGroups makes it a cluster of its own after its join attempts, without an
   * error. Each member's logical name carries a tag of its key ({@link SharedSecret#tag}), and
   * discovery, which runs below the encryption, brings the peers' names in the clear: a peer whose
   * tag differs is positive proof, and the member is refused. A member that is alone only because
   * the others were still starting waits for MERGE3 to join them, as JGroups intends.
   */
  private static void refuseIfShutOut(DefaultCacheManager cm, ClusterConfig c, String tag)
      throws ClusterRefusedException {
    String self = c.bindHost() + ":" + c.bindPort();
    if (c.peers().stream().noneMatch(p -> !p.equals(self) && listening(p))) {
      return; // the first member up: nobody to be shut out by
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SHUT_OUT_SECONDS);
    while (cm.getMembers().size() == 1 && System.nanoTime() < deadline) {
      for (String name : org.jgroups.util.NameCache.getContents().values()) {
        int cut = name.lastIndexOf('~');
        if (cut < 0
            || name.substring(0, cut).equals(self)
            || !c.peers().contains(name.substring(0, cut))) {
          continue;
        }
        if (name.substring(cut + 1).equals(tag)) {
          return; // a peer of the same key: MERGE3 joins us when it can
        }
        throw new ClusterRefusedException(
            "cluster "
                + c.name()
                + " at "
                + name.substring(0, cut)
                + " holds another --cluster-secret-file"
                + (c.secretFile() == null ? " (this mount has none)" : " than " + c.secretFile())
                + ": its members will not take this one");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    if (cm.getMembers().size() == 1 && !c.peers().isEmpty()) {
      log.warn(
          "cluster {}: alone after {} s; the members at {} will be merged when they answer",
          c.name(),
          SHUT_OUT_SECONDS,
          c.peers());
    }
  }

  private static boolean listening(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(
          new java.net.InetSocketAddress(
              hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
          500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Several MERGE3 rounds (at most 5 s apart): members started together have merged by then. */
  static final int SHUT_OUT_SECONDS = 20;

  private static byte[] readSecret(ClusterConfig c) throws ClusterRefusedException {
    if (c.secretFile() == null) {
      return null;
    }
    byte[] secret;
    try {
      secret = Files.readAllBytes(c.secretFile());
    } catch (IOException e) {
      throw new ClusterRefusedException(
          "cannot read --cluster-secret-file " + c.secretFile() + ": " + e.getMessage(), e);
    }
    if (secret.length < 16) {
      throw new ClusterRefusedException(
          "--cluster-secret-file "
              + c.secretFile()
              + " holds "
              + secret.length
              + " bytes; give it at least 16 (head -c 32 /dev/urandom > FILE)");
    }
    return secret;
  }

  /**
   * The channel Infinispan runs on: the user's stack, or TCP with TCPPING on the given peers; with
   * a secret, SYM_ENCRYPT under NAKACK2 and AUTH under GMS.
   */
  private static final class Stack implements JGroupsChannelConfigurator {
    private final ClusterConfig c;
    private final byte[] secret;

    Stack(ClusterConfig c, byte[] secret) {
      this.c = c;
      this.secret = secret;
    }

    @Override
    public String getName() {
      return "hintfs";
    }

    @Override
    public String getProtocolStackString() {
      return c.stackFile() != null ? c.stackFile().toString() : stack(c);
    }

    @Override
    public List<org.jgroups.conf.ProtocolConfiguration> getProtocolStack() {
      return List.of();
    }

    @Override
    public void setSocketFactory(org.jgroups.util.SocketFactory f) {}

    @Override
    public void setDataSource(javax.sql.DataSource ds) {}

    @Override
    public JChannel createChannel(String clusterName) throws Exception {
      JChannel ch;
      if (c.stackFile() != null) {
        try (var in = Files.newInputStream(c.stackFile())) {
          ch = new JChannel(in);
        }
      } else {
        ch = new JChannel(new ByteArrayInputStream(stack(c).getBytes(StandardCharsets.UTF_8)));
      }
      if (secret != null) {
        ProtocolStack stack = ch.getProtocolStack();
        SYM_ENCRYPT enc = new SYM_ENCRYPT();
        enc.setSecretKey(SharedSecret.aesKey(secret));
        stack.insertProtocol(enc, ProtocolStack.Position.BELOW, "NAKACK2");
        AUTH auth = new AUTH();
        auth.setAuthToken(new SharedSecret(secret));
        stack.insertProtocol(auth, ProtocolStack.Position.BELOW, GMS.class);
        enc.init();
        auth.init();
      }
      return ch;
    }
  }

  /**
   * The built-in stack: TCP on the bind address, TCPPING on the peers, failure detection by socket
   * (a killed member is seen at once) and by heartbeat (a hung or partitioned one within ~3 s).
   * Failure detection listens on the first free port of PORT+100..PORT+110: the port 100 above may
   * be held by anything, an outgoing connection's ephemeral port among them (its neighbour tries
   * each of them and takes the one that answers with the member's own address).
   */
  static String stack(ClusterConfig c) {
    String hosts =
        c.peers().isEmpty()
            ? c.bindHost() + "[" + c.bindPort() + "]"
            : c.peers().stream()
                .map(
                    p -> {
                      int colon = p.lastIndexOf(':');
                      return p.substring(0, colon) + "[" + p.substring(colon + 1) + "]";
                    })
                .collect(Collectors.joining(","));
    return String.join(
        "\n",
        "<config xmlns=\"urn:org:jgroups\">",
        "  <TCP bind_addr=\"" + c.bindHost() + "\" bind_port=\"" + c.bindPort() + "\"",
        "       port_range=\"0\" sock_conn_timeout=\"300ms\" tcp_nodelay=\"true\"",
        "       diag.enabled=\"false\" thread_pool.min_threads=\"0\"",
        "       thread_pool.max_threads=\"200\"/>",
        "  <TCPPING initial_hosts=\"" + hosts + "\" port_range=\"0\" send_cache_on_join=\"true\"/>",
        "  <MERGE3 min_interval=\"2s\" max_interval=\"5s\"/>",
        "  <FD_SOCK2 bind_addr=\"" + c.bindHost() + "\" offset=\"100\" port_range=\"10\"/>",
        "  <FD_ALL3 timeout=\"3000\" interval=\"1000\"/>",
        "  <VERIFY_SUSPECT2 timeout=\"500\"/>",
        "  <pbcast.NAKACK2 use_mcast_xmit=\"false\" xmit_interval=\"200ms\"/>",
        "  <UNICAST3 xmit_interval=\"200ms\"/>",
        "  <pbcast.STABLE desired_avg_gossip=\"5s\" max_bytes=\"1M\"/>",
        "  <pbcast.GMS print_local_addr=\"false\" join_timeout=\"3s\" max_join_attempts=\"4\"/>",
        "  <UFC max_credits=\"4m\" min_threshold=\"0.40\"/>",
        "  <MFC max_credits=\"4m\" min_threshold=\"0.40\"/>",
        "  <FRAG4 frag_size=\"60k\"/>",
        "</config>",
        "");
  }

  /** The home of a sample: computed from the current consistent hash, no message sent. */
  public Address homeOf(int id) {
    LocalizedCacheTopology t = homes.getAdvancedCache().getDistributionManager().getCacheTopology();
    return t.getDistribution(id).primary();
  }

  /**
   * The member that was {@code id}'s home before its home last moved, if it is still a member and
   * is neither this node nor the home now; else null. After a join or a healed partition the new
   * home has not fetched what it is home to, and the former one most likely still holds it (as a
   * guest, evicted first): asking it costs a message, the source a fetch.
   */
  public Address formerHomeOf(int id) {
    Address[] former = formerHomes;
    if (former == null) {
      return null;
    }
    LocalizedCacheTopology t = homes.getAdvancedCache().getDistributionManager().getCacheTopology();
    int segment = t.getSegment(id);
    Address a = segment < former.length ? former[segment] : null;
    if (a == null || isSelf(a) || a.equals(t.getDistribution(id).primary())) {
      return null;
    }
    return manager.getMembers().contains(a) ? a : null;
  }

  /** The member named {@code name} ({@link Address#toString}) if it is one now, else null. */
  public Address member(String name) {
    if (name == null) {
      return null;
    }
    for (Address a : manager.getMembers()) {
      if (a.toString().equals(name)) {
        return a;
      }
    }
    return null;
  }

  /**
   * Notes the homes of the topology now; the ones they replace become the former homes if this node
   * read through them.
   */
  private synchronized void recordHomes() {
    var ch =
        homes
            .getAdvancedCache()
            .getDistributionManager()
            .getCacheTopology()
            .getReadConsistentHash();
    Address[] now = new Address[ch.getNumSegments()];
    for (int s = 0; s < now.length; s++) {
      now[s] = ch.locatePrimaryOwnerForSegment(s);
    }
    if (homesNow != null && java.util.Arrays.equals(homesNow, now)) {
      return;
    }
    if (homesNow != null) {
      homesMoved.run();
    }
    if (homesNow != null && readSinceHomesMoved) {
      // Homes no read went through (a rebalance's passing phase, the start) leave the last ones
      // that served reads as the former homes.
      formerHomes = homesNow;
    }
    homesNow = now;
    readSinceHomesMoved = false;
  }

  /**
   * Notes that a sample went through the homes now (asked, fetched as its home, or served): the
   * homes may hold something when they are former homes.
   */
  public void noteRead() {
    if (!readSinceHomesMoved) {
      readSinceHomesMoved = true;
    }
  }

  /** True if {@code a} is this member. */
  public boolean isSelf(Address a) {
    return a.equals(manager.getAddress());
  }

  /** This member's address. */
  public Address self() {
    return manager.getAddress();
  }

  /**
   * Asks {@code home} for one unit; the reply comes as a {@link PeerReply}'s bytes. {@code
   * formerHome} (a member's name, or null) is where the asker last knew the unit's home: the home
   * asks it before the source if it does not hold the unit.
   */
  public CompletableFuture<byte[]> ask(
      Address home, int id, int block, String path, String formerHome, long timeoutMillis) {
    return submit(home, serve(id, block, path, formerHome), timeoutMillis);
  }

  /**
   * Asks {@code member} for one unit it may hold, without letting it fetch: a {@link PeerReply}'s
   * bytes, or an empty array when it holds none.
   */
  public CompletableFuture<byte[]> peek(
      Address member, int id, int block, String path, long timeoutMillis) {
    return submit(member, peek(id, block, path), timeoutMillis);
  }

  private CompletableFuture<byte[]> submit(
      Address target,
      SerializableFunction<EmbeddedCacheManager, byte[]> function,
      long timeoutMillis) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    manager
        .executor()
        .filterTargets(List.of(target))
        .singleNodeSubmission()
        .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
        .submitConsumer(
            function,
            (addr, bytes, err) -> {
              if (err != null) {
                result.completeExceptionally(err);
              } else {
                result.complete(bytes);
              }
            })
        .whenComplete(
            (v, err) -> {
              if (err != null) {
                result.completeExceptionally(err);
              } else if (!result.isDone()) {
                result.completeExceptionally(new IOException("no answer from " + target));
              }
            });
    return result;
  }

  /**
   * The function the home runs. Static, capturing only numbers and a string: Infinispan marshals it
   * as a lambda of its own ({@code SerializableFunction}).
   */
  private static SerializableFunction<EmbeddedCacheManager, byte[]> serve(
      int id, int block, String path, String formerHome) {
    return m -> {
      try {
        return GlobalComponentRegistry.componentOf(m, HomeServer.class)
            .serve(id, block, path, formerHome);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
  }

  /** The function a former home runs: the unit from its own tiers only, or an empty array. */
  private static SerializableFunction<EmbeddedCacheManager, byte[]> peek(
      int id, int block, String path) {
    return m -> {
      try {
        return GlobalComponentRegistry.componentOf(m, HomeServer.class).peek(id, block, path);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
  }

  /** The members now, in view order (the first is the coordinator). */
  public List<String> members() {
    return manager.getMembers().stream().map(ClusterMember::display).toList();
  }

  /** A member's name as users know it: HOST:PORT, without its key's tag. */
  public static String display(Object address) {
    String s = String.valueOf(address);
    int cut = s.lastIndexOf('~');
    return cut < 0 ? s : s.substring(0, cut);
  }

  /** The cluster's name. */
  public String name() {
    return config.name();
  }

  /** Views installed since this member joined. */
  public long viewChanges() {
    return viewChanges.get();
  }

  /** Consistent-hash topologies installed since this member joined (each rebalance adds some). */
  public long rebalances() {
    return rebalances.get();
  }

  /** True while the homes' hash is being rebalanced. */
  public boolean rebalancing() {
    var dm = homes.getAdvancedCache().getDistributionManager();
    if (dm.isRehashInProgress()) {
      return true;
    }
    // A new view (a join, a leave, a healed partition) reaches the homes' topology a moment later:
    // until it has, the homes are those of the old view and will move.
    List<Address> view = manager.getMembers();
    List<Address> owners = dm.getCacheTopology().getMembers();
    return owners.size() != view.size() || !owners.containsAll(view);
  }

  /** The id of the homes' current topology: changes whenever homes may have moved. */
  public int topologyId() {
    return homes.getAdvancedCache().getDistributionManager().getCacheTopology().getTopologyId();
  }

  @Override
  public void close() {
    manager.stop();
  }

  /** The JGroups channel under the cache manager (tests cut it to partition the cluster). */
  JChannel channel() {
    return ((JGroupsTransport)
            GlobalComponentRegistry.componentOf(
                manager, org.infinispan.remoting.transport.Transport.class))
        .getChannel();
  }

  private static String rootMessage(Throwable t) {
    Throwable r = t;
    while (r.getCause() != null && r.getCause() != r) {
      r = r.getCause();
    }
    return r.getMessage() == null ? r.toString() : r.getMessage();
  }

  @Listener
  public final class ViewCounter {
    @ViewChanged
    public void viewChanged(ViewChangedEvent e) {
      viewChanges.incrementAndGet();
      log.info("cluster {}: members {}", config.name(), e.getNewMembers());
    }

    /** A healed partition: Infinispan sends a merge to these listeners, not a view change. */
    @Merged
    public void merged(MergeEvent e) {
      viewChanges.incrementAndGet();
      log.info("cluster {}: partitions merged, members {}", config.name(), e.getNewMembers());
    }
  }

  @Listener(observation = Listener.Observation.POST)
  public final class TopologyCounter {
    @TopologyChanged
    public void topologyChanged(TopologyChangedEvent<?, ?> e) {
      rebalances.incrementAndGet();
      recordHomes();
    }
  }
}
