/**
 * The trace simulator: traces (recorded from a mount or generated), the generators, and the replay
 * of a trace through any policy at any cache size, with substitution when asked; and the cluster
 * simulator, a data-parallel job's reads over N nodes' caches, alone or as one cluster of homes.
 */
package org.hintfs.policy.sim;
