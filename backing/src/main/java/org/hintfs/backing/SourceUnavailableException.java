package org.hintfs.backing;

import java.io.IOException;

/** The source could not be reached or answered with a server error after all retries. */
public class SourceUnavailableException extends IOException {
  public SourceUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }

  public SourceUnavailableException(String message) {
    super(message);
  }
}
