package org.hintfs.fs.serve;

import java.io.IOException;

/** A file operation on a directory. */
public final class IsDirectoryException extends IOException {
  IsDirectoryException(String path) {
    super("is a directory: " + path);
  }
}
