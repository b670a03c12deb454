package org.hintfs.fs.serve;

import java.io.IOException;

/** The handle is not open (a bug in the kernel or in us). */
public final class BadHandleException extends IOException {
  BadHandleException(long fh) {
    super("no open file with handle " + fh);
  }
}
