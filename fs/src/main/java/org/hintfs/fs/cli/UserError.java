package org.hintfs.fs.cli;

/** Bad input or a failed precondition: printed as one line, never as a stack trace. */
final class UserError extends RuntimeException {
  UserError(String message) {
    super(message);
  }
}
