package org.hintfs.policy;

/**
 * What the hints tell the policies, shared by all of them: the importance scores, the future order
 * when a sampler's seed or an explicit order is known, and each sample's class.
 *
 * @param samples number of dense sample ids
 * @param importance every sample's latest score
 * @param nextUse the known future order, or null
 * @param classOf each sample's class (ImageFolder label), or null if unknown
 */
public record PolicyContext(int samples, Importance importance, NextUse nextUse, int[] classOf) {

  /** A context with no hints: no scores yet, no known order, no classes. */
  public static PolicyContext plain(int samples) {
    return new PolicyContext(samples, new Importance(samples), null, null);
  }
}
