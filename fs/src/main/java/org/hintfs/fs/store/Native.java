package org.hintfs.fs.store;

/** The libc calls the store makes through jnr-ffi (madvise, mallopt, malloc, posix_fadvise). */
final class Native {
  /** The libc functions used. */
  public interface LibC {
    int madvise(long addr, long length, int advice);

    int mallopt(int param, int value);

    /**
     * Memory not cleared: jffi's {@code MemoryIO.allocateMemory(size, false)} cleared what it
     * allocated all the same (a 4 MiB block cost a memset as long as its fetch's copy). Freed with
     * jffi's {@code freeMemory}, which is libc's free.
     */
    long malloc(long size);

    int open(String path, int flags);

    int close(int fd);

    /** Returns the error number itself (0 on success), not -1 and errno. */
    int posix_fadvise(int fd, long offset, long len, int advice);
  }

  /** open(2) flags (x86-64 and aarch64 Linux alike). */
  static final int O_RDONLY = 0;

  static final int O_CLOEXEC = 0x80000;

  static final int POSIX_FADV_DONTNEED = 4;

  static final int MADV_WILLNEED = 3;
  static final long PAGE = 4096;
  static final LibC LIBC = jnr.ffi.LibraryLoader.create(LibC.class).load("c");

  /** glibc's mallopt parameters (malloc.h). */
  static final int M_TRIM_THRESHOLD = -1;

  static final int M_MMAP_THRESHOLD = -3;

  /** glibc's largest mmap threshold on 64 bits: blocks below it are reused from the heap. */
  static final int MMAP_THRESHOLD = 32 << 20;

  /** Free heap glibc keeps before it returns memory to the kernel. */
  static final int TRIM_THRESHOLD = 128 << 20;

  private static volatile boolean mallocTuned;

  private Native() {}

  /**
   * Has glibc keep the buffers LMDB's writer allocates for a large value and frees after its commit
   * (without MDB_WRITEMAP, each value over a page is copied into a malloc'd run of pages: 4 MiB for
   * a block of a large file): by default glibc maps such a buffer afresh and unmaps or trims it
   * after each commit, so every block's copy faulted in 1,024 new zeroed pages. With an mmap
   * threshold of 32 MiB and a trim threshold of 128 MiB they are reused from the writer's arena.
   * Once per process; false (and nothing changed) where the C library has no mallopt (musl).
   */
  static synchronized boolean keepLargeAllocations() {
    if (mallocTuned) {
      return true;
    }
    try {
      mallocTuned =
          LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
              && LIBC.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1;
    } catch (RuntimeException | LinkageError e) {
      mallocTuned = false;
    }
    return mallocTuned;
  }
}
