/**
 * The trace simulator: traces (recorded from a mount or generated), the generators, and the replay
 * of a trace through any policy at any cache size, with substitution when asked.
 */
package org.hintfs.policy.sim;
