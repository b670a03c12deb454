package org.hintfs.fs.serve;

/**
 * An open handle. {@link HintFs}'s read, write and release dispatch on its kind: a catalog file
 * ({@link SampleHandle}), a virtual file generated at open ({@link VirtualHandle}), or the control
 * file ({@link ControlHandle}), which also takes writes.
 */
sealed interface Handle permits SampleHandle, VirtualHandle, ControlHandle {
  /** The path it was opened by. */
  String path();

  /** Its size for reads. */
  long size();
}
