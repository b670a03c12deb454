/**
 * The persistent cache: an LMDB environment on local disk with a single writer thread, the RAM tier
 * in front of it, and {@link org.hintfs.fs.store.TieredCache}, which puts policy, RAM, disk and the
 * fetcher together behind one read call.
 */
package org.hintfs.fs.store;
