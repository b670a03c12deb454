/**
 * Pure Java, no I/O: what the cache admits, keeps, evicts and substitutes, the sampler replay and
 * the trace simulator. Nothing here imports another hintfs module.
 */
package org.hintfs.policy;
