package org.hintfs.fs.serve;

import java.io.IOException;

/** A write-type operation on the read-only dataset. */
public final class ReadOnlyException extends IOException {
  public ReadOnlyException(String path) {
    super("read-only filesystem: " + path);
  }
}
