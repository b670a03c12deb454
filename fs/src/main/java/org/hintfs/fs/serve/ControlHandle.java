package org.hintfs.fs.serve;

import java.io.ByteArrayOutputStream;
import org.hintfs.fs.control.ControlInput;

/**
 * A handle on the control file. It owns its line buffer: every complete line written is parsed and
 * applied at once for the writer's stream; a trailing piece waits for the rest, or for release.
 * Reads see the content rendered at open.
 */
final class ControlHandle implements Handle {
  private final String path;
  private final byte[] content;
  private final ControlInput control;
  private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
  private volatile long writer; // the pid that last wrote (0: none yet)

  ControlHandle(String path, byte[] content, ControlInput control) {
    this.path = path;
    this.content = content;
    this.control = control;
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public long size() {
    return content.length;
  }

  byte[] content() {
    return content;
  }

  /** Takes bytes written by {@code pid}: what the write did. */
  ControlInput.Written write(byte[] data, long pid) {
    writer = pid;
    return control.write(partial, data, pid);
  }

  /** The handle is closed: an unfinished last line is applied now, for its writer. */
  void release(long pid) {
    control.finish(partial, writer != 0 ? writer : pid);
  }
}
