import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/**
 * Issue 26: cold reads in one process, no FUSE: every value of a hintfs LMDB cache (MODE lmdb: a
 * read transaction, the value copied out of the map, CRC32C over it) or every file under a
 * directory (MODE files: read whole, CRC32C), in a seeded random order from THREADS threads.
 * It lists what to read, prints "ready", waits for a line on stdin (the caller drops the page
 * cache then), reads, and prints "MODE THREADS items/s MB/s".
 * Usage: java -cp hintfs.jar:. LmdbColdBench lmdb|files PATH THREADS
 */
public class LmdbColdBench {
  public static void main(String[] a) throws Exception {
    String mode = a[0];
    Path p = Path.of(a[1]);
    int threads = Integer.parseInt(a[2]);
    List<Object> items = new ArrayList<>();
    Env<ByteBuffer> env = null;
    Dbi<ByteBuffer> db = null;
    if (mode.equals("lmdb")) {
      env =
          Env.create()
              .setMapSize(1L << 34)
              .setMaxDbs(2)
              .setMaxReaders(1024)
              .open(p.toFile(), EnvFlags.MDB_NOTLS, EnvFlags.MDB_RDONLY_ENV);
      db = env.openDbi("data");
      try (Txn<ByteBuffer> t = env.txnRead();
          CursorIterable<ByteBuffer> it = db.iterate(t)) {
        for (CursorIterable.KeyVal<ByteBuffer> kv : it) {
          ByteBuffer k = ByteBuffer.allocateDirect(kv.key().remaining());
          items.add(k.put(kv.key()).flip());
        }
      }
    } else {
      try (var s = Files.walk(p)) {
        s.filter(Files::isRegularFile).forEach(items::add);
      }
    }
    Collections.shuffle(items, new Random(7));
    System.out.println("ready " + items.size());
    System.out.flush();
    new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    AtomicInteger next = new AtomicInteger();
    AtomicLong bytes = new AtomicLong();
    Env<ByteBuffer> e = env;
    Dbi<ByteBuffer> d = db;
    long t0 = System.nanoTime();
    Thread[] ts = new Thread[threads];
    for (int i = 0; i < threads; i++) {
      ts[i] =
          new Thread(
              () -> {
                int k;
                while ((k = next.getAndIncrement()) < items.size()) {
                  byte[] out;
                  if (items.get(k) instanceof ByteBuffer key) {
                    try (Txn<ByteBuffer> t = e.txnRead()) {
                      ByteBuffer v = d.get(t, key);
                      out = new byte[v.remaining()];
                      v.get(out);
                    }
                  } else {
                    try {
                      out = Files.readAllBytes((Path) items.get(k));
                    } catch (java.io.IOException x) {
                      throw new java.io.UncheckedIOException(x);
                    }
                  }
                  CRC32C c = new CRC32C();
                  c.update(out);
                  bytes.addAndGet(out.length + (c.getValue() == 42 ? 1 : 0));
                }
              });
      ts[i].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    double s = (System.nanoTime() - t0) / 1e9;
    System.out.printf("%s %d %.0f %.0f%n", mode, threads, items.size() / s, bytes.get() / s / 1e6);
  }
}
