/**
 * The job across nodes: each daemon of a job is a member of one embedded Infinispan cluster
 * (JGroups underneath). A distributed cache with one owner per key names each sample's home; the
 * bytes stay in the home's own tiered cache, and other members ask the home for them through
 * Infinispan's cluster executor. Membership, failure detection, hashing and transfer are the
 * engine's.
 */
package org.hintfs.fs.cluster;
