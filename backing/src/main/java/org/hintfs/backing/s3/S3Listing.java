package org.hintfs.backing.s3;

import io.minio.ListObjectsArgs;
import io.minio.MinioClient;
import io.minio.Result;
import io.minio.messages.Item;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.hintfs.backing.SourceObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ListObjectsV2 over a prefix, paginated: the first level with a delimiter, then each sub-prefix
 * recursively on its own thread, resuming after the last key seen when a page fails.
 */
final class S3Listing {
  private static final Logger log = LoggerFactory.getLogger(S3Listing.class);
  private static final int LIST_THREADS = 16;

  private final MinioClient client;
  private final String bucket;
  private final String prefix;
  private final String describe;
  private final S3Retries retries;
  final LongAdder listPages = new LongAdder();

  S3Listing(MinioClient client, String bucket, String prefix, String describe, S3Retries retries) {
    this.client = client;
    this.bucket = bucket;
    this.prefix = prefix;
    this.describe = describe;
    this.retries = retries;
  }

  /** Lists every object under the prefix into {@code sink} (called from one thread at a time). */
  void list(Consumer<SourceObject> sink) throws IOException {
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
      throw new InterruptedIOException("interrupted while listing " + describe);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("listing " + describe + " failed: " + e.getCause(), e.getCause());
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
    retries.call(
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
      sink.accept(
          SourceObject.file(rel, item.size(), ETags.versionTag(item.etag(), item.size()), mtime));
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
}
