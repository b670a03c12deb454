/**
 * The control protocol: lines a trainer writes to {@code /.hintfs/control} (dataset, losses,
 * importance, epoch, neighbours, substitution, policy, trace), parsed and checked as they are
 * written, applied off the FUSE thread; and the state they build.
 */
package org.hintfs.fs.control;
