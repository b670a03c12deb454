package org.hintfs.fs;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Renders {@code /.hintfs/stats}: one JSON object, what {@code hintfs status} prints. */
final class StatsReport {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final HintFs fs;

  StatsReport(HintFs fs) {
    this.fs = fs;
  }

  String json() {
    MountStats s = fs.stats();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", Version.VERSION);
    m.put("source", fs.source().describe());
    m.put("mountpoint", fs.config().mountpoint().toString());
    m.put("pid", ProcessHandle.current().pid());
    m.put("started", fs.started().toString());
    m.put("uptime_s", Duration.between(fs.started(), Instant.now()).toSeconds());
    m.put("files", fs.catalog().fileCount());
    m.put("directories", fs.catalog().directoryCount());
    m.put("bytes", fs.catalog().totalBytes());
    m.put("catalog_heap_bytes", fs.catalog().heapBytes());
    m.put("open_handles", fs.openHandles());
    m.put("opens", s.opens.sum());
    m.put("reads", s.reads.sum());
    m.put("bytes_read", s.bytesRead.sum());
    m.put("source_reads", s.sourceReads.sum());
    m.put("source_bytes", s.sourceBytes.sum());
    m.put("errors", fs.errors().snapshot());
    try {
      return JSON.writeValueAsString(m) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
