package org.hintfs.policy;

/**
 * What a clairvoyant policy knows of the future: for the sample just accessed, the position of its
 * next access in the known order ({@link #NEVER} if none). Positions only grow.
 */
public interface NextUse {
  /** A position after every real one. */
  long NEVER = Long.MAX_VALUE;

  /** The next access of {@code sample} after the one happening now. */
  long after(int sample);

  /** The position of the access happening now. */
  long now();

  /** False while no order is known (before a seed hint): clairvoyance is off then. */
  default boolean known() {
    return true;
  }
}
