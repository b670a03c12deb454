package org.hintfs.fs;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes every open of a dataset sample in the simulator's trace format ({@code <epoch> <sample>
 * <size> <class>}), appending, so a real run can be replayed through every policy offline.
 */
final class TraceRecorder implements AutoCloseable {
  private final BufferedWriter out;

  TraceRecorder(Path file) throws IOException {
    boolean fresh = !Files.exists(file) || Files.size(file) == 0;
    out =
        Files.newBufferedWriter(
            file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    if (fresh) {
      out.write("# hintfs trace v1: <epoch> <sample> <size> <class>, recorded by a mount\n");
    }
  }

  synchronized void read(int epoch, int sample, long size, int cls) {
    try {
      out.write(epoch + " " + sample + " " + size + " " + cls + "\n");
    } catch (IOException e) {
      // A trace is a diagnostic: losing a line never fails a read.
    }
  }

  /** A batch of losses or scores (samples outside the dataset, -1, are left out). */
  synchronized void scores(boolean losses, int[] samples, float[] values) {
    StringBuilder sb = new StringBuilder(losses ? "loss" : "importance");
    int n = 0;
    for (int k = 0; k < samples.length; k++) {
      if (samples[k] >= 0) {
        sb.append(' ').append(samples[k]).append('=').append(values[k]);
        n++;
      }
    }
    if (n > 0) {
      try {
        out.write(sb.append('\n').toString());
      } catch (IOException e) {
        // A trace is a diagnostic: losing a line never fails a read.
      }
    }
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }
}
