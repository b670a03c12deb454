/**
 * Prefetching by the predicted read order: the order a sampler's seed implies, the position of the
 * reader in it, and the fetches kept a window ahead.
 */
package org.hintfs.fs.prefetch;
