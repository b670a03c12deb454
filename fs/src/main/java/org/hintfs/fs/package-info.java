/**
 * The filesystem service: resolves paths against the catalog, keeps the open-file table and serves
 * reads, with no FUSE types in sight, so it can be tested without a mount. The FUSE adapter lives
 * in {@code fs.fuse}, the CLI and daemon in {@code fs.cli}.
 */
package org.hintfs.fs;
