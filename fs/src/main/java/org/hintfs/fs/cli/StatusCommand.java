package org.hintfs.fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hintfs status MOUNTPOINT}: what the daemon reports in {@code /.hintfs/stats}. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = "Show a mount's source, size, uptime, traffic and errors.",
    footer = {
      "",
      "Examples:",
      "  hintfs status /mnt/imagenet",
      "  hintfs status --watch /mnt/imagenet      # refresh every 2 s until Ctrl-C",
      "  hintfs status --json /mnt/x | jq .hits"
    })
final class StatusCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Parameters(index = "0", paramLabel = "MOUNTPOINT")
  Path mountpoint;

  @Option(names = "--json", description = "print the raw JSON, for scripts")
  boolean json;

  @Option(
      names = {"-w", "--watch"},
      paramLabel = "SECONDS",
      arity = "0..1",
      parameterConsumer = WatchSeconds.class,
      description = "refresh in place every SECONDS (default 2) until Ctrl-C")
  Double watch;

  /**
   * {@code --watch [SECONDS]} takes the next word only when it is a number, so that {@code status
   * --watch MNT} reads MNT as the mountpoint (picocli's optional parameter would swallow it).
   */
  static final class WatchSeconds implements picocli.CommandLine.IParameterConsumer {
    @Override
    public void consumeParameters(
        java.util.Stack<String> args,
        picocli.CommandLine.Model.ArgSpec arg,
        picocli.CommandLine.Model.CommandSpec spec) {
      double seconds = 2;
      if (!args.isEmpty()) {
        try {
          seconds = Double.parseDouble(args.peek());
          args.pop();
        } catch (NumberFormatException e) {
          // not a number: the mountpoint or another option, left for the parser
        }
      }
      arg.setValue(seconds);
    }
  }

  @Override
  public Integer call() {
    Path mp = mountpoint.toAbsolutePath().normalize();
    JsonNode s = requireStats(mp);
    if (json) {
      System.out.println(s.toPrettyString());
      return 0;
    }
    if (watch == null) {
      System.out.print(table(s));
      return 0;
    }
    if (watch <= 0 || watch > 3600) {
      throw new UserError("--watch takes 0 < SECONDS <= 3600, not " + watch);
    }
    while (true) {
      // Home, then clear to the end of the screen: refreshes in place without flicker.
      System.out.print("\033[H\033[J" + table(s) + "\n(every " + watch + " s; Ctrl-C ends)\n");
      System.out.flush();
      ControlClient.sleep((long) (watch * 1000));
      s = requireStats(mp);
    }
  }

  /** The texts of a JSON array. */
  static List<String> texts(JsonNode array) {
    List<String> out = new java.util.ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  /** "EIO 3, ENOENT 12", or "none". */
  static String errnoCounts(JsonNode byErrno) {
    StringBuilder errs = new StringBuilder();
    for (Iterator<Map.Entry<String, JsonNode>> it = byErrno.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      errs.append(errs.length() == 0 ? "" : ", ")
          .append(e.getKey())
          .append(' ')
          .append(e.getValue().asLong());
    }
    return errs.length() == 0 ? "none" : errs.toString();
  }

  static String ratio(long hits, long misses) {
    return hits + misses == 0 ? "-" : String.format("%.1f%%", 100.0 * hits / (hits + misses));
  }

  /** "web identity: role ..., access key ASIA..., expire 2026-12-02T17:00:00Z, renewed 3 times". */
  static String credentialsLine(JsonNode c) {
    StringBuilder b = new StringBuilder(c.path("source").asText());
    if (c.path("access_key_id").isTextual()) {
      b.append("; access key ").append(c.path("access_key_id").asText());
    }
    if (c.path("expires").isTextual()) {
      b.append(", expire ").append(c.path("expires").asText());
    } else if (c.has("expires")) {
      b.append(", no expiry");
    }
    if (c.path("renewals").asLong() > 0 || c.path("renewal_failures").asLong() > 0) {
      b.append(", renewed ")
          .append(c.path("renewals").asLong())
          .append(" times (")
          .append(c.path("renewal_failures").asLong())
          .append(" failed)");
    }
    if (c.path("last_failure").isTextual()) {
      b.append("; last renewal failed: ").append(c.path("last_failure").asText());
    }
    return b.toString();
  }

  /** The readable table. */
  static String table(JsonNode s) {
    StringBuilder out = new StringBuilder();
    row(out, "source", s.path("source").asText());
    if (s.path("credentials").isObject()) {
      row(out, "credentials", credentialsLine(s.path("credentials")));
    }
    row(out, "mountpoint", s.path("mountpoint").asText());
    if (s.path("read_only").asBoolean()) {
      row(out, "mounted", "read-only: the control file takes no hints or commands");
    }
    row(out, "daemon pid", s.path("pid").asText());
    row(
        out,
        "version",
        s.path("version").asText("unknown")
            + " (commit "
            + s.path("commit").asText("unknown")
            + ")");
    row(out, "uptime", Human.duration(s.path("uptime_s").asLong()));
    JsonNode j = s.path("java");
    if (j.isObject()) {
      row(
          out,
          "java",
          j.path("version").asText()
              + " ("
              + j.path("vendor").asText()
              + ") at "
              + j.path("home").asText()
              + (j.path("aot_cache").isTextual()
                  ? ", AOT cache " + j.path("aot_cache").asText()
                  : ", no AOT cache"));
    }
    row(
        out,
        "files",
        s.path("files").asLong() + " in " + s.path("directories").asLong() + " directories");
    row(out, "bytes", Human.bytes(s.path("bytes").asLong()));
    row(out, "open handles", s.path("open_handles").asText());
    row(
        out,
        "read",
        s.path("opens").asLong()
            + " opens, "
            + Human.bytes(s.path("bytes_read").asLong())
            + " in "
            + s.path("reads").asLong()
            + " reads");
    long hits = s.path("open_hits").asLong();
    long misses = s.path("open_misses").asLong();
    row(
        out,
        "cache",
        s.path("cache_health").asText()
            + (s.path("cache_dir").isNull() ? "" : " at " + s.path("cache_dir").asText())
            + ", policy "
            + s.path("policy").asText());
    row(
        out,
        "cache used",
        Human.bytes(s.path("cache_used_bytes").asLong())
            + " of "
            + Human.bytes(s.path("cache_capacity_bytes").asLong())
            + " ("
            + s.path("cached_files").asLong()
            + " files; capacity: "
            + s.path("cache_capacity_basis").asText("?")
            + ")");
    long skipped = s.path("cache_full_skipped").asLong();
    if (skipped > 0) {
      row(
          out,
          "disk full",
          skipped
              + " fetched files or blocks ("
              + Human.bytes(s.path("cache_full_skipped_bytes").asLong())
              + ") served without being stored while the cache's disk was full"
              + (s.path("cache_full_since").asLong() == 0 ? " (storing again)" : ""));
    }
    long full = s.path("write_queue_full").asLong();
    if (full > 0 || s.path("write_queue_bytes").asLong() > 0) {
      row(
          out,
          "disk writes",
          Human.bytes(s.path("write_queue_bytes").asLong())
              + " waiting (--write-queue "
              + Human.bytes(s.path("write_queue_limit").asLong())
              + ")"
              + (full == 0
                  ? ""
                  : "; "
                      + full
                      + " fetched files served without being stored: the disk is behind the"
                      + " source")
              + (s.path("write_queue_repaid").asLong() == 0
                  ? ""
                  : " (" + s.path("write_queue_repaid").asLong() + " blocks of them stored later)")
              + (s.path("write_queue_owed_bytes").asLong() == 0
                  ? ""
                  : "; "
                      + Human.bytes(s.path("write_queue_owed_bytes").asLong())
                      + " of refused blocks held for the writer"));
    }
    row(
        out,
        "hit ratio",
        ratio(hits, misses)
            + " of opens, "
            + ratio(s.path("epoch_open_hits").asLong(), s.path("epoch_open_misses").asLong())
            + " this epoch ("
            + hits
            + " hits, "
            + misses
            + " misses; reads from RAM "
            + s.path("ram_hits").asLong()
            + ", disk "
            + s.path("disk_hits").asLong()
            + ", source "
            + s.path("misses").asLong()
            + ")");
    row(
        out,
        "served",
        Human.bytes(s.path("bytes_read").asLong())
            + " to readers, "
            + Human.bytes(s.path("bytes_from_cache").asLong())
            + " of it from the cache");
    long pageReads = s.path("page_reads").asLong();
    if (pageReads > 0) {
      row(
          out,
          "random reads",
          pageReads
              + " reads of large files served by 64 KiB pages: "
              + s.path("page_hits").asLong()
              + " pages from the cache, "
              + s.path("pages_fetched").asLong()
              + " fetched in "
              + s.path("page_gets").asLong()
              + " GETs; "
              + s.path("page_read_hits").asLong()
              + " reads all from the cache");
    }
    long packedFiles = s.path("packed_files").asLong();
    if (packedFiles > 0) {
      row(
          out,
          "packed files",
          packedFiles
              + " with a sample order (packed hint): "
              + s.path("packed_prefetched").asLong()
              + " samples fetched ahead, "
              + s.path("pages_evicted").asLong()
              + " pages evicted by next use");
    }
    row(
        out,
        "not seen",
        "reads the kernel's page cache answers (a file read again soon after) never reach"
            + " the mount: their opens count, their bytes do not");
    row(
        out,
        "evictions",
        s.path("evictions").asLong()
            + " (corrupt entries "
            + s.path("corrupt_entries").asLong()
            + ", stale "
            + s.path("stale_entries").asLong()
            + ")");
    row(
        out,
        "from source",
        Human.bytes(s.path("source_bytes").asLong())
            + " in "
            + s.path("source_reads").asLong()
            + " requests, at most "
            + s.path("fetches_peak").asLong()
            + " at once (--max-fetches "
            + s.path("fetches_limit").asLong()
            + ")");
    long atMax = s.path("fuse_threads_at_max").asLong();
    row(
        out,
        "FUSE threads",
        s.path("fuse_threads").asLong()
            + " now ("
            + s.path("fuse_readers").asLong()
            + " reading), at most "
            + s.path("fuse_threads_peak").asLong()
            + " at once (--fuse-max-threads "
            + s.path("fuse_threads_max").asLong()
            + ")"
            + (atMax == 0 ? "" : "; " + atMax + " requests found all busy: raise it"));
    JsonNode sr = s.path("source_requests");
    if (!sr.isMissingNode()) {
      row(
          out,
          "requests",
          sr.path("gets").asLong()
              + " GETs, "
              + sr.path("requests_in_flight").asLong()
              + " in flight (at most "
              + sr.path("max_requests_in_flight").asLong()
              + "), "
              + sr.path("retries").asLong()
              + " retries, "
              + sr.path("failed_after_retries").asLong()
              + " failed after retrying");
    }
    JsonNode h = s.path("hints");
    row(
        out,
        "hints",
        h.path("accepted").asLong()
            + " accepted, "
            + h.path("rejected").asLong()
            + " rejected; epoch "
            + h.path("epoch").asLong()
            + ", substitutions "
            + s.path("substitutions").asLong());
    row(out, "substitution", substitutionLine(s.path("substitution")));
    JsonNode p = s.path("prediction");
    row(
        out,
        "prefetch",
        p.path("known").asBoolean()
            ? "position "
                + p.path("position").asLong()
                + " of "
                + p.path("length").asLong()
                + ", window "
                + p.path("window_per_stream").asLong(p.path("window").asLong())
                + ", "
                + p.path("files_in_flight").asLong()
                + " files ("
                + Human.bytes(p.path("bytes_in_flight").asLong())
                + ") in flight, "
                + p.path("off_order_opens").asLong()
                + " opens off the predicted order"
            : "no predicted order (no seed or order hint)");
    streams(out, s.path("streams"));
    JsonNode a = s.path("admin");
    row(
        out,
        "admin",
        a.path("pinned_files").asLong()
            + " files pinned ("
            + Human.bytes(a.path("pinned_bytes").asLong())
            + "), "
            + a.path("prefetch_waiting").asLong()
            + " queued for prefetch, "
            + a.path("evicted_files").asLong()
            + " evicted by hand");
    // What readers saw, apart from what failed in the background (a prefetch that failed during an
    // outage and was retried): no reader saw those.
    JsonNode cl = s.path("cluster");
    if (cl.isObject()) {
      row(
          out,
          "cluster",
          cl.path("name").asText()
              + ": "
              + cl.path("members").size()
              + " members ("
              + String.join(", ", texts(cl.path("members")))
              + "), this one "
              + cl.path("self").asText()
              + (cl.path("rebalancing").asBoolean() ? ", rebalancing" : ""));
      row(
          out,
          "homed here",
          cl.path("homed_files").asLong()
              + " files ("
              + Human.bytes(cl.path("homed_bytes").asLong())
              + "); served to peers "
              + cl.path("served_to_peers").asLong()
              + " ("
              + Human.bytes(cl.path("bytes_served_to_peers").asLong())
              + ")");
      row(
          out,
          "misses served",
          "by peers "
              + cl.path("reads_from_peers").asLong()
              + " ("
              + Human.bytes(cl.path("bytes_from_peers").asLong())
              + ", mean "
              + String.format("%.1f ms", cl.path("peer_mean_us").asLong() / 1000.0)
              + "), by a former home "
              + cl.path("reads_from_former_homes").asLong()
              + ", by the source as home "
              + cl.path("source_reads_as_home").asLong()
              + ", by the source after a peer failed "
              + cl.path("peer_failures").asLong()
              + ", lagged "
              + cl.path("peer_hedged").asLong()
              + " or was skipped "
              + cl.path("peer_skipped").asLong());
    }
    row(out, "reader errors", errnoCounts(s.path("errors")));
    String bg = errnoCounts(s.path("background_errors"));
    row(
        out,
        "background errors",
        bg.equals("none") ? bg : bg + " (prefetches and fetches no reader waited on)");
    return out.toString();
  }

  /** One line per stream: job, rank, owner, position in its order, hits and off-order opens. */
  private static void streams(StringBuilder out, JsonNode streams) {
    row(out, "streams", streams.size() == 0 ? "none" : streams.size() + " live");
    for (JsonNode st : streams) {
      long opens = st.path("opens").asLong();
      String pred =
          st.path("known").asBoolean()
              ? st.path("prediction").asText()
                  + (st.path("seed").isNull() ? "" : " " + st.path("seed").asLong())
                  + ", epoch "
                  + st.path("epoch").asLong()
                  + ", at "
                  + st.path("position").asLong()
                  + " of "
                  + st.path("length").asLong()
                  + workers(st)
                  + ", "
                  + st.path("files_in_flight").asLong()
                  + " in flight"
              : "no prediction";
      out.append(
          String.format(
              "  #%d %s rank %d/%d, pid %d%s: %s; %d opens, %s local, %d off-order%n",
              st.path("id").asInt(),
              st.path("job").asText(),
              st.path("rank").asInt(),
              st.path("world").asInt(),
              st.path("owner_pid").asLong(),
              st.path("adopted").asBoolean() ? "" : " (found by its window)",
              pred,
              opens,
              opens == 0 ? "-" : String.format("%.1f%%", 100.0 * st.path("hits").asLong() / opens),
              st.path("off_order_opens").asLong()));
    }
  }

  /** " (N workers, the slowest at P)" for a stream read by several DataLoader workers. */
  private static String workers(JsonNode st) {
    int n = st.path("workers_followed").asInt();
    return n < 2
        ? ""
        : " (" + n + " workers, the slowest at " + st.path("oldest_unread").asLong() + ")";
  }

  private static void row(StringBuilder out, String k, String v) {
    out.append(String.format("%-18s %s%n", k + ":", v));
  }

  /** The daemon's stats, or a one-line error saying why there are none. */
  static JsonNode requireStats(Path mp) {
    if (!Files.isDirectory(mp)) {
      throw new UserError(mp + " does not exist or is not a directory");
    }
    Optional<String> type = Mounts.typeAt(mp);
    if (type.isEmpty()) {
      throw new UserError(mp + " is not mounted");
    }
    if (!type.get().equals("fuse.hintfs")) {
      throw new UserError(mp + " is not a hintfs mount (it is " + type.get() + ")");
    }
    Path stats = mp.resolve(".hintfs/stats");
    if (Files.exists(stats) && !Files.isReadable(stats)) {
      Object owner;
      try {
        owner = Files.getAttribute(stats, "unix:uid");
      } catch (IOException | RuntimeException e) {
        owner = "?";
      }
      throw new UserError(
          "only the mount's owner (uid "
              + owner
              + ") and root may read the status of "
              + mp
              + ": it names every job's streams (docs/SEMANTICS.md, \"Who may read what\")");
    }
    return readStats(mp)
        .orElseThrow(() -> new UserError("the hintfs daemon at " + mp + " does not answer"));
  }

  /** Reads {@code MOUNTPOINT/.hintfs/stats}, if it answers. */
  static Optional<JsonNode> readStats(Path mp) {
    try {
      return Optional.of(JSON.readTree(Files.readAllBytes(mp.resolve(".hintfs/stats"))));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Substitution: the rules in force and what the trainers received in the last whole epoch. */
  static String substitutionLine(JsonNode sub) {
    if (!sub.path("on").asBoolean()) {
      return "off";
    }
    StringBuilder b =
        new StringBuilder("on, at most ")
            .append(Math.round(sub.path("max").asDouble() * 100))
            .append("% of an epoch's reads")
            .append(sub.path("reuse").asBoolean() ? ", reuse allowed" : ", each stand-in once")
            .append(
                sub.path("warm").asBoolean()
                    ? ""
                    : ", warming up (none until the first epoch ends)");
    JsonNode last = null;
    for (JsonNode e : sub.path("epochs")) {
      if (e.path("complete").asBoolean()) {
        last = e;
      }
    }
    if (last != null) {
      b.append("; epoch ")
          .append(last.path("epoch").asLong())
          .append(": ")
          .append(
              String.format(java.util.Locale.ROOT, "%.1f", 100 * last.path("coverage").asDouble()))
          .append("% of samples served, ")
          .append(last.path("substitutions").asLong())
          .append(" substituted");
    }
    long pageCached = sub.path("not_substituted").path("page_cache").asLong();
    if (pageCached > 0) {
      b.append("; ")
          .append(pageCached)
          .append(" misses maybe in the page cache served as themselves");
    }
    return b.append("; longest unserved ")
        .append(sub.path("longest_unserved_epochs").asLong())
        .append(" epoch(s)")
        .toString();
  }
}
