package org.hintfs.fs.fuse;

import jnr.ffi.Pointer;
import jnr.ffi.Struct;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * Sets the {@code direct_io} and {@code keep_cache} bits of libfuse2's {@code fuse_file_info}.
 *
 * <p>jnr-fuse 0.5.8 declares these fields at the wrong offset. In libfuse2 on LP64 the struct is
 * {@code int flags; unsigned long fh_old; int writepage; unsigned direct_io:1, keep_cache:1, ...;
 * uint64_t fh; ...}: flags at 0, fh_old at 8, writepage at 16, and the bit-field word at byte 20,
 * with direct_io in bit 0 and keep_cache in bit 1 (GCC allocates bit-fields from the low bit on
 * x86-64).
 */
final class FileInfoFlags {
  private static final int BITFIELD_OFFSET = 20;
  private static final int DIRECT_IO = 1;
  private static final int KEEP_CACHE = 1 << 1;

  private FileInfoFlags() {}

  /** Reads and writes bypass the page cache for this handle; the kernel does not clip to size. */
  static void setDirectIo(FuseFileInfo fi) {
    set(fi, DIRECT_IO, KEEP_CACHE);
  }

  /** The page cache keeps this file's pages across opens. */
  static void setKeepCache(FuseFileInfo fi) {
    set(fi, KEEP_CACHE, DIRECT_IO);
  }

  private static void set(FuseFileInfo fi, int on, int off) {
    Pointer p = Struct.getMemory(fi);
    int word = p.getInt(BITFIELD_OFFSET);
    p.putInt(BITFIELD_OFFSET, (word | on) & ~off);
  }
}
