package org.hintfs.fs.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Tests: whole files read through {@link HintFs} as the FUSE adapter reads them, 128 KiB a call.
 */
public final class HintFsReads {
  private HintFsReads() {}

  /** Everything an open handle reads, from offset 0. */
  public static byte[] whole(HintFs fs, long fh) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long off = 0;
    int n;
    while ((n = fs.read(fh, off, 131_072, out::write)) > 0) {
      off += n;
    }
    return out.toByteArray();
  }

  /** Opens {@code path} for process {@code pid} (0: unknown), reads it whole and releases it. */
  public static byte[] file(HintFs fs, String path, long pid) throws IOException {
    long fh = fs.open(path, false, pid);
    try {
      return whole(fs, fh);
    } finally {
      fs.release(fh, pid);
    }
  }

  /**
   * Writes {@code text} to the control file as process {@code pid} and waits (up to 5 s) until the
   * mount has applied it.
   */
  public static void control(HintFs fs, String text, long pid) throws Exception {
    long fh = fs.open("/.hintfs/control", true, pid);
    try {
      fs.write(fh, text.getBytes(StandardCharsets.UTF_8), pid);
    } finally {
      fs.release(fh, pid);
      fs.hints().awaitApplied(5_000);
    }
  }

  /** {@code .hintfs/stats}, parsed. */
  public static JsonNode stats(HintFs fs, long pid) throws IOException {
    return new ObjectMapper().readTree(file(fs, "/.hintfs/stats", pid));
  }

  /**
   * Writes a two-class ImageFolder under {@code src}: {@code train/cat} and {@code train/dog},
   * files {@code 00.jpg}-{@code 09.jpg} of {@code pad + i} dashes after their name. Returns the
   * cats' bytes, in order.
   */
  public static List<byte[]> catsAndDogs(Path src, int pad) throws IOException {
    List<byte[]> cats = new ArrayList<>();
    for (String cls : new String[] {"cat", "dog"}) {
      Path d = Files.createDirectories(src.resolve("train").resolve(cls));
      for (int i = 0; i < 10; i++) {
        byte[] b = (cls + i + "-".repeat(pad + i)).getBytes(StandardCharsets.UTF_8);
        Files.write(d.resolve(String.format("%02d.jpg", i)), b);
        if (cls.equals("cat")) {
          cats.add(b);
        }
      }
    }
    return cats;
  }
}
