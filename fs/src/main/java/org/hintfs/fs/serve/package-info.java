/**
 * The filesystem service: resolves paths against the catalog, keeps the open-file table and serves
 * reads (the open and miss paths, the warm-up at mount), with no FUSE types in sight, so it can be
 * tested without a mount. Its counters ({@link org.hintfs.fs.serve.MountStats}) and errors ({@link
 * org.hintfs.fs.serve.ErrorTable}) are read by {@code fs.metrics}, never written there.
 */
package org.hintfs.fs.serve;
