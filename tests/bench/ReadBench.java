import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Reads every file under a directory once, in a seeded random order, with N threads; prints
 * "files_per_s bytes_per_s files". Run with the source launcher: java ReadBench.java DIR N SEED
 */
public class ReadBench {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int threads = Integer.parseInt(args[1]);
    long seed = Long.parseLong(args[2]);
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(dir)) {
      s.filter(Files::isRegularFile).forEach(files::add);
    }
    Collections.sort(files);
    Collections.shuffle(files, new Random(seed));
    AtomicInteger next = new AtomicInteger();
    AtomicLong bytes = new AtomicLong();
    Thread[] ts = new Thread[threads];
    long t0 = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      ts[t] =
          new Thread(
              () -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                int i;
                while ((i = next.getAndIncrement()) < files.size()) {
                  try (FileChannel ch = FileChannel.open(files.get(i), StandardOpenOption.READ)) {
                    long n = 0;
                    int r;
                    buf.clear();
                    while ((r = ch.read(buf)) > 0) {
                      n += r;
                      buf.clear();
                    }
                    bytes.addAndGet(n);
                  } catch (IOException e) {
                    throw new RuntimeException(files.get(i) + ": " + e, e);
                  }
                }
              });
      ts[t].start();
    }
    for (Thread t : ts) {
      t.join();
    }
    double s = (System.nanoTime() - t0) / 1e9;
    System.out.printf("%.1f %.0f %d%n", files.size() / s, bytes.get() / s, files.size());
  }
}
