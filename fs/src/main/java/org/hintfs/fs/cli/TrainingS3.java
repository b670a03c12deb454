package org.hintfs.fs.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;

/**
 * Just enough of S3 for the AOT training run ({@link AotTrainCommand}) to drive the real S3 client
 * through a listing and its GETs in this JVM, with no network: ListObjectsV2 (prefix, delimiter,
 * start-after, max-keys, continuation) and GET with Range and If-Match over one directory's files.
 * It checks no signature. Never a test double: hintfs' tests run against S3Proxy.
 */
final class TrainingS3 implements AutoCloseable {
  private final HttpServer server;
  private final String bucket;
  private final TreeMap<String, Path> objects = new TreeMap<>();

  TrainingS3(String bucket, String prefix, Path dir) throws IOException {
    this.bucket = bucket;
    try (var s = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
        objects.put(prefix + dir.relativize(p).toString().replace('\\', '/'), p);
      }
    }
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setExecutor(Executors.newFixedThreadPool(8, r -> daemon(r)));
    server.createContext("/", this::handle);
    server.start();
  }

  private static Thread daemon(Runnable r) {
    Thread t = new Thread(r, "training-s3");
    t.setDaemon(true);
    return t;
  }

  String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      String path = x.getRequestURI().getRawPath();
      Map<String, String> q = query(x.getRequestURI().getRawQuery());
      if (System.getenv("HINTFS_TRAINING_S3_DEBUG") != null) {
        System.err.println("training-s3: " + x.getRequestMethod() + " " + x.getRequestURI());
      }
      String b = "/" + bucket;
      if (path.equals(b) || path.equals(b + "/")) {
        if (q.containsKey("location")) {
          send(x, 200, xml("<LocationConstraint>us-east-1</LocationConstraint>"));
        } else {
          send(x, 200, list(q));
        }
        return;
      }
      String key = URLDecoder.decode(path.substring(b.length() + 1), StandardCharsets.UTF_8);
      Path file = path.startsWith(b + "/") ? objects.get(key) : null;
      if (file == null) {
        send(x, 404, xml("<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>"));
        return;
      }
      byte[] all = Files.readAllBytes(file);
      String etag = etag(file);
      x.getResponseHeaders().add("ETag", "\"" + etag + "\"");
      x.getResponseHeaders().add("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT");
      String match = x.getRequestHeaders().getFirst("If-Match");
      if (match != null && !match.replace("\"", "").equals(etag)) {
        send(x, 412, xml("<Error><Code>PreconditionFailed</Code></Error>"));
        return;
      }
      String range = x.getRequestHeaders().getFirst("Range");
      int from = 0;
      int to = all.length - 1;
      if (range != null && range.startsWith("bytes=")) {
        String[] r = range.substring(6).split("-", 2);
        from = Integer.parseInt(r[0]);
        if (!r[1].isEmpty()) {
          to = Math.min(to, Integer.parseInt(r[1]));
        }
        x.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + to + "/" + all.length);
      }
      byte[] body = java.util.Arrays.copyOfRange(all, from, Math.max(from, to + 1));
      if (x.getRequestMethod().equals("HEAD")) {
        x.getResponseHeaders().add("Content-Length", Integer.toString(all.length));
        x.sendResponseHeaders(200, -1);
        return;
      }
      send(x, range != null ? 206 : 200, body);
    }
  }

  private byte[] list(Map<String, String> q) throws IOException {
    String prefix = q.getOrDefault("prefix", "");
    String delimiter =
        q.get("delimiter") == null || q.get("delimiter").isEmpty() ? null : q.get("delimiter");
    String after = q.getOrDefault("continuation-token", q.getOrDefault("start-after", ""));
    int max = Integer.parseInt(q.getOrDefault("max-keys", "1000"));
    TreeSet<String> entries = new TreeSet<>();
    for (String k : objects.tailMap(prefix, true).keySet()) {
      if (!k.startsWith(prefix)) {
        break;
      }
      int cut = delimiter == null ? -1 : k.indexOf(delimiter, prefix.length());
      entries.add(cut < 0 ? k : k.substring(0, cut + delimiter.length()));
    }
    List<String> page = new ArrayList<>();
    for (String e : entries.tailSet(after, false)) {
      if (page.size() == max) {
        break;
      }
      page.add(e);
    }
    boolean truncated =
        !page.isEmpty() && !entries.tailSet(page.get(page.size() - 1), false).isEmpty();
    StringBuilder s =
        new StringBuilder("<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    s.append("<Name>")
        .append(bucket)
        .append("</Name><Prefix>")
        .append(esc(prefix))
        .append("</Prefix>");
    s.append("<KeyCount>").append(page.size()).append("</KeyCount><MaxKeys>").append(max);
    s.append("</MaxKeys><IsTruncated>").append(truncated).append("</IsTruncated>");
    if (truncated) {
      s.append("<NextContinuationToken>").append(esc(page.get(page.size() - 1)));
      s.append("</NextContinuationToken>");
    }
    for (String e : page) {
      if (delimiter != null && e.endsWith(delimiter)) {
        s.append("<CommonPrefixes><Prefix>").append(esc(e)).append("</Prefix></CommonPrefixes>");
      } else {
        Path f = objects.get(e);
        s.append("<Contents><Key>").append(esc(e)).append("</Key>");
        s.append("<LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>\"");
        s.append(etag(f)).append("\"</ETag><Size>").append(Files.size(f));
        s.append("</Size><StorageClass>STANDARD</StorageClass></Contents>");
      }
    }
    return xml(s.append("</ListBucketResult>").toString());
  }

  private static String etag(Path f) throws IOException {
    return Long.toHexString(Files.size(f)) + "-" + Long.toHexString(f.getFileName().hashCode());
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static byte[] xml(String body) {
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + body).getBytes(StandardCharsets.UTF_8);
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new HashMap<>();
    if (raw != null) {
      for (String kv : raw.split("&")) {
        int eq = kv.indexOf('=');
        String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
        q.put(k, eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return q;
  }

  private static void send(HttpExchange x, int status, byte[] body) throws IOException {
    x.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream o = x.getResponseBody()) {
      o.write(body);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
