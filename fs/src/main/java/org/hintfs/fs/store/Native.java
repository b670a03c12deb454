package org.hintfs.fs.store;

/** The libc call the store makes through jnr-ffi (madvise). */
final class Native {
  /** The libc functions used. */
  public interface LibC {
    int madvise(long addr, long length, int advice);
  }

  static final int MADV_WILLNEED = 3;
  static final long PAGE = 4096;
  static final LibC LIBC = jnr.ffi.LibraryLoader.create(LibC.class).load("c");

  private Native() {}
}
