package org.hintfs.backing;

import java.io.IOException;

/** The object's version tag differs from the one listed at mount: its bytes are not served. */
public class ObjectChangedException extends IOException {
  public ObjectChangedException(String path, String expected, String actual) {
    super(
        "object changed in the source: " + path + " (listed " + expected + ", now " + actual + ")");
  }
}
