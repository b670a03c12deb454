package org.hintfs.backing;

import java.io.IOException;

/** The source could not be reached or answered with a server error after all retries. */
public class SourceUnavailableException extends IOException {
  private final boolean retried;

  public SourceUnavailableException(String message, Throwable cause) {
    this(message, cause, false);
  }

  public SourceUnavailableException(String message) {
    this(message, null, false);
  }

  /**
   * @param retried true when the source already retried for its whole retry time, so callers should
   *     not retry again
   */
  public SourceUnavailableException(String message, Throwable cause, boolean retried) {
    super(message, cause);
    this.retried = retried;
  }

  /** True when the source has already retried this for as long as it may. */
  public boolean retried() {
    return retried;
  }
}
