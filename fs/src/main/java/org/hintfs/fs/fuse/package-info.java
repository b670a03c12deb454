/**
 * The FUSE adapter over jnr-fuse (libfuse2): maps each kernel request to {@link
 * org.hintfs.fs.serve.HintFs}, catches every Throwable at the boundary and answers an errno from
 * {@link org.hintfs.fs.serve.ErrorTable}. It does no work of its own.
 */
package org.hintfs.fs.fuse;
