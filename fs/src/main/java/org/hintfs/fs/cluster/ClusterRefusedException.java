package org.hintfs.fs.cluster;

/** This mount could not join its cluster; the message is one line that says why. */
public final class ClusterRefusedException extends Exception {
  public ClusterRefusedException(String message) {
    super(message);
  }

  public ClusterRefusedException(String message, Throwable cause) {
    super(message, cause);
  }
}
