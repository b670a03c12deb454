package org.hintfs.fs.control;

/** A control line that is rejected whole; the message says what was wrong and what is right. */
public final class InvalidHintException extends IllegalArgumentException {
  public InvalidHintException(String message) {
    super(message);
  }
}
