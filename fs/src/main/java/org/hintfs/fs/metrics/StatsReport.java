package org.hintfs.fs.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.hintfs.fs.Version;
import org.hintfs.fs.serve.HintFs;
import org.hintfs.fs.serve.MountStats;
import org.hintfs.fs.store.CacheStats;
import org.hintfs.fs.store.TieredCache;

/** Renders {@code /.hintfs/stats}: one JSON object, what {@code hintfs status} prints. */
public final class StatsReport {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final HintFs fs;

  public StatsReport(HintFs fs) {
    this.fs = fs;
  }

  public String json() {
    MountStats s = fs.stats();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", Version.VERSION);
    m.put("commit", Version.COMMIT);
    m.put("source", fs.source().describe());
    Map<String, Object> creds = fs.source().credentials();
    if (!creds.isEmpty()) {
      m.put("credentials", creds);
    }
    m.put("mountpoint", fs.config().mountpoint().toString());
    m.put("read_only", fs.config().readOnly());
    m.put("pid", ProcessHandle.current().pid());
    m.put("started", fs.started().toString());
    m.put("uptime_s", Duration.between(fs.started(), Instant.now()).toSeconds());
    Map<String, Object> jvm = new LinkedHashMap<>();
    jvm.put("version", System.getProperty("java.version"));
    jvm.put("vendor", System.getProperty("java.vendor"));
    jvm.put("home", System.getProperty("java.home"));
    jvm.put("aot_cache", aotCache());
    m.put("java", jvm);
    m.put("files", fs.catalog().fileCount());
    m.put("directories", fs.catalog().directoryCount());
    m.put("bytes", fs.catalog().totalBytes());
    m.put("catalog_heap_bytes", fs.catalog().heapBytes());
    for (MountCounters.Counter k : MountCounters.of(fs)) {
      if (k.json() != null) {
        m.put(k.json(), k.value().get());
      }
    }
    TieredCache c = fs.cache();
    CacheStats cs = c.stats();
    Map<String, Long> sc = fs.source().counters();
    if (!sc.isEmpty()) {
      Map<String, Object> src = new LinkedHashMap<>();
      sc.forEach((k, v) -> src.put(snake(k), v));
      m.put("source_requests", src);
    }
    m.put("policy", c.index().policyName());
    long[] eb = fs.epochBase();
    m.put("epoch_open_hits", cs.openHits.sum() - eb[0]);
    m.put("epoch_open_misses", cs.openMisses.sum() - eb[1]);
    m.put("cache_dir", fs.config().cacheDir() == null ? null : fs.config().cacheDir().toString());
    m.put("cache_health", c.storeHealth());
    m.put("cache_capacity_basis", c.index().capacityBasis(c.capacityBasis()));
    var h = fs.hints();
    Map<String, Object> hints = new LinkedHashMap<>();
    var ds = h.dataset(); // root and view of one declaration
    hints.put("dataset", ds == null ? null : ds.dir());
    hints.put("samples", ds == null ? 0 : ds.view().samples());
    hints.put("classes", ds == null ? 0 : ds.view().classes());
    hints.put("epoch", h.epoch());
    hints.put("accepted", h.accepted.sum());
    hints.put("accepted_by_kind", h.acceptedByVerb());
    hints.put("rejected", h.rejected.sum());
    hints.put("pending", h.pending());
    hints.put("writes_still_applying", h.stillApplying.sum());
    hints.put("scored_samples", h.context().importance().knownCount());
    hints.put("substitution", h.substitution.on());
    hints.put("substitution_max", h.substitution.rules().maxFraction());
    m.put("substitution", substitutionReport(h));
    var pf = fs.prefetcher();
    var live = h.streams().active();
    Map<String, Object> pred = new LinkedHashMap<>();
    // The mount-wide view (every stream summed; seed and rank are the lead stream's).
    var lead = java.util.Arrays.stream(live).filter(x -> x.order().known()).findFirst();
    pred.put("known", lead.isPresent());
    var sd = lead.map(x -> x.sampler()).orElse(null);
    pred.put("seed", sd == null ? null : sd.seed());
    pred.put("sampler", sd == null ? (lead.isPresent() ? "order" : null) : sd.sampler());
    pred.put("rank", sd == null ? null : sd.rank() + "/" + sd.world());
    pred.put("streams", live.length);
    pred.put("position", java.util.Arrays.stream(live).mapToLong(x -> x.order().position()).sum());
    pred.put(
        "length",
        java.util.Arrays.stream(live)
            .mapToLong(x -> x.order().order() == null ? 0 : x.order().order().length)
            .sum());
    pred.put("window", pf.window());
    pred.put("window_per_stream", pf.windowPerStream());
    pred.put("files_in_flight", pf.filesInFlight());
    pred.put("bytes_in_flight", pf.bytesInFlight());
    pred.put("prefetched", pf.prefetched.sum());
    pred.put("prefetches_cancelled", pf.cancelled.sum());
    pred.put("off_order_opens", pf.offOrder.sum());
    pred.put("stale_drops", pf.staleDrops.sum());
    pred.put("streams_ended", h.streams().endedCount.sum());
    m.put("prediction", pred);
    java.util.List<Map<String, Object>> streams = new java.util.ArrayList<>();
    for (var st : live) {
      Map<String, Object> e = new LinkedHashMap<>();
      var spec = st.sampler();
      var o = st.order();
      e.put("id", st.id());
      e.put("job", st.job(h.streams().tree()));
      e.put("rank", st.rank());
      e.put("world", st.world());
      e.put("owner_pid", st.owner());
      e.put("adopted", st.adopted());
      e.put("dataset", st.datasetDir() == null ? h.datasetDir() : st.datasetDir());
      e.put("epoch", st.epoch());
      var det = st.recognition().detected();
      boolean detected = det != null && !st.recognition().hinted() && o.known();
      e.put(
          "prediction",
          detected
              ? "detected"
              : spec != null ? "seed" : st.explicitOrder() && o.known() ? "order" : null);
      if (st.implicit()) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("attempts", st.recognition().detectAttempts());
        d.put("found", det != null);
        if (det != null) {
          d.put("sampler", det.sampler());
          d.put("generator_seed", det.generatorSeed());
          d.put("world", det.world());
          d.put("rank", det.rank());
          d.put("matched", det.matched() + "/" + det.observed());
          d.put("log10_chance", Math.round(det.log10Chance() * 10) / 10.0);
          d.put("set_epoch", st.recognition().detectedEpochStep() == 1);
        }
        d.put("search_ms", st.recognition().detectMicros() / 1000.0);
        e.put("detection", d);
      }
      e.put("seed", spec == null ? null : spec.seed());
      e.put("known", o.known());
      e.put("position", o.position());
      // Where the slowest DataLoader worker is (the first position not yet read), and how many
      // workers are followed; confirmed: nine in ten of the last opens were where expected.
      e.put("oldest_unread", o.known() ? o.lowMark() : 0);
      e.put("workers_followed", st.readersFollowed());
      e.put("confirmed", o.known() && st.confirmed());
      e.put("length", o.order() == null ? 0 : o.order().length);
      e.put("window", pf.windowPerStream());
      e.put("files_in_flight", pf.filesInFlight(st));
      e.put("opens", st.opens.sum());
      e.put("hits", st.hits.sum());
      e.put("off_order_opens", st.offOrder.sum());
      e.put("misses_prefetch_late", st.lateMisses.sum());
      e.put("prefetched", st.prefetched.sum());
      e.put("stale_drops", st.staleDrops.sum());
      e.put("ms_per_open", Math.round(st.pace() / 1e3) / 1e3);
      streams.add(e);
    }
    m.put("streams", streams);
    hints.put("jobs", h.jobs());
    hints.put("orders_detected", h.recognition.detections.sum());
    hints.put("detection_searches", h.recognition.detectionSearches.sum());
    hints.put("detection_ms", h.recognition.detectionMicros.sum() / 1000);
    m.put("hints", hints);
    m.put("per_class", h.substitution.perClass());
    m.put("cluster", clusterReport());
    m.put("errors", fs.errors().snapshot());
    m.put("background_errors", fs.backgroundErrors().snapshot());
    m.put("admin", fs.admin().counters());
    try {
      return JSON.writeValueAsString(m) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** requestsInFlight -> requests_in_flight, as the other keys are spelled. */
  static String snake(String camel) {
    StringBuilder b = new StringBuilder(camel.length() + 4);
    for (char ch : camel.toCharArray()) {
      if (Character.isUpperCase(ch)) {
        b.append('_').append(Character.toLowerCase(ch));
      } else {
        b.append(ch);
      }
    }
    return b.toString();
  }

  /**
   * Substitution and what the trainers received: the rules in force, why misses were not
   * substituted, the owed samples' prefetch, and per epoch the distinct samples served (coverage).
   */
  private Map<String, Object> substitutionReport(org.hintfs.fs.control.HintState h) {
    Map<String, Object> m = new LinkedHashMap<>();
    var rules = h.substitution.rules();
    m.put("on", h.substitution.on());
    m.put("max", rules.maxFraction());
    m.put("reuse", rules.reuse());
    m.put("from_start", rules.fromStart());
    var cs = h.substitution.chooserState();
    m.put("warm", cs != null && cs.warm());
    m.put("substitutions_this_epoch", cs == null ? 0 : cs.substitutionsThisEpoch());
    m.put("fetches_past_deadline", h.substitution.pastDeadline.sum());
    m.put("substituted_past_deadline", cs == null ? 0 : cs.lateSubstitutions());
    m.put("owed_left", cs == null ? 0 : cs.owedLeft());
    var owed = fs.owedPrefetch();
    m.put("owed_at_epoch_start", owed.owed());
    m.put("owed_prefetched", owed.fetched.sum());
    m.put("owed_not_prefetched", owed.skipped.sum());
    long[] held = fs.cache().index().heldUsage();
    m.put("held_files", held[0]);
    m.put("held_bytes", held[1]);
    Map<String, Object> not = new LinkedHashMap<>();
    if (cs != null) {
      var r = cs.refusals();
      not.put("warm_up", r.warmUp);
      not.put("important", r.important);
      not.put("owed", r.owed);
      not.put("fetch_in_flight", r.inFlight);
      not.put("cap", r.capped);
      not.put("no_candidate", r.noCandidate);
      not.put("page_cache", r.pageCached);
    }
    m.put("not_substituted", not);
    var cov = h.substitution.coverage();
    m.put("dataset_samples", cov == null ? 0 : cov.datasetSize());
    m.put("longest_unserved_epochs", cov == null ? 0 : cov.longestUnserved());
    java.util.List<Map<String, Object>> epochs = new java.util.ArrayList<>();
    if (cov != null) {
      for (var e : cov.epochs()) {
        Map<String, Object> em = new LinkedHashMap<>();
        em.put("epoch", e.epoch());
        em.put("complete", e.complete());
        em.put("reads", e.reads());
        em.put("distinct_served", e.distinct());
        em.put("coverage", Math.round(e.coverage() * 10000) / 10000.0);
        em.put("substitutions", e.substitutions());
        epochs.add(em);
      }
    }
    m.put("epochs", epochs);
    return m;
  }

  /**
   * The job's cluster as this member sees it (null when the mount is alone): who is in it, what
   * this node is home to, and where this node's misses were served from.
   */
  private Map<String, Object> clusterReport() {
    var peers = fs.cluster();
    if (peers == null) {
      return null;
    }
    var member = peers.member();
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("name", member.name());
    c.put("self", org.hintfs.fs.cluster.ClusterMember.display(member.self()));
    c.put("members", member.members());
    c.put("view_changes", member.viewChanges());
    c.put("topologies", member.rebalances());
    c.put("rebalancing", member.rebalancing());
    long[] homed = peers.homedNow(fs.catalog());
    c.put("homed_files", homed[0]);
    c.put("homed_bytes", homed[1]);
    c.put("guest_files", fs.cache().guestFiles());
    c.put("reads_from_peers", peers.fromPeers());
    c.put("bytes_from_peers", peers.bytesFromPeers());
    c.put("peer_mean_us", peers.meanPeerMicros());
    c.put("source_reads_as_home", peers.homedHere());
    c.put("reads_from_former_homes", peers.fromFormerHomes());
    c.put("former_home_misses", peers.formerHomeMisses());
    c.put("refiled_as_guests", peers.refiledAsGuests());
    c.put("peer_failures", peers.peerFailures());
    c.put("peer_hedged", peers.peerHedged());
    c.put("peer_skipped", peers.peerSkipped());
    c.put("served_to_peers", fs.home().served());
    c.put("bytes_served_to_peers", fs.home().bytesServed());
    return c;
  }

  /**
   * The AOT cache (Java 25+) or CDS archive (17-24) the launcher started this JVM with, or null:
   * what it was given; a cache the JVM refused is named in the log's first lines.
   */
  static String aotCache() {
    for (String a : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("-XX:AOTCache=") || a.startsWith("-XX:SharedArchiveFile=")) {
        return a.substring(a.indexOf('=') + 1);
      }
    }
    return null;
  }
}
