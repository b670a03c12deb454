package org.hintfs.fs.serve;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes every open of a dataset sample in the simulator's trace format ({@code <epoch> <sample>
 * <size> <class> stream=<id>}), appending, so a real run can be replayed through every policy
 * offline. What is written reaches the file within a second: a daemon that dies loses at most the
 * last second of its trace.
 */
public final class TraceRecorder implements AutoCloseable {
  private final BufferedWriter out;
  private boolean dirty;
  private final java.util.concurrent.ScheduledExecutorService flusher =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread th = new Thread(r, "trace-flush");
            th.setDaemon(true);
            return th;
          });

  TraceRecorder(Path file) throws IOException {
    boolean fresh = !Files.exists(file) || Files.size(file) == 0;
    out =
        Files.newBufferedWriter(
            file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    if (fresh) {
      out.write(
          "# hintfs trace v1: <epoch> <sample> <size> <class> stream=<id>, recorded by a mount\n");
    }
    flusher.scheduleWithFixedDelay(
        this::flush, 500, 500, java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  private synchronized void flush() {
    if (dirty) {
      dirty = false;
      try {
        out.flush();
      } catch (IOException e) {
        // A trace is a diagnostic: losing a line never fails a read.
      }
    }
  }

  synchronized void read(int epoch, int sample, long size, int cls, int stream) {
    dirty = true;
    try {
      out.write(epoch + " " + sample + " " + size + " " + cls);
      out.write(stream < 0 ? "\n" : " stream=" + stream + "\n");
    } catch (IOException e) {
      // A trace is a diagnostic: losing a line never fails a read.
    }
  }

  /** A batch of losses or scores (samples outside the dataset, -1, are left out). */
  public synchronized void scores(boolean losses, int[] samples, float[] values) {
    StringBuilder sb = new StringBuilder(losses ? "loss" : "importance");
    int n = 0;
    for (int k = 0; k < samples.length; k++) {
      if (samples[k] >= 0) {
        sb.append(' ').append(samples[k]).append('=').append(values[k]);
        n++;
      }
    }
    if (n > 0) {
      dirty = true;
      try {
        out.write(sb.append('\n').toString());
      } catch (IOException e) {
        // A trace is a diagnostic: losing a line never fails a read.
      }
    }
  }

  @Override
  public void close() throws IOException {
    flusher.shutdownNow();
    synchronized (this) {
      out.close();
    }
  }
}
