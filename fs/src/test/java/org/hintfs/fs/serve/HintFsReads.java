package org.hintfs.fs.serve;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

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
}
