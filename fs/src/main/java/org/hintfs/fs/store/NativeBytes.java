package org.hintfs.fs.store;

import com.kenai.jffi.MemoryIO;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A copy of a unit's bytes in native memory (malloc), for the {@link RamTier}: outside the heap,
 * where no collection copies them (a young collection copied each new entry to a survivor space and
 * then to the old generation, and a full one slid every live entry of the tier).
 *
 * <p>Lifetime: counted references. The tier holds one from {@link #copyOf} until it lets the entry
 * go ({@link #release}, from its removal listener); a reader takes one for the length of its copy
 * ({@link #copy}). The memory is freed when the last is released, so a reader racing an eviction
 * either copies the bytes before they are freed, or finds the count at zero and gets null (a miss):
 * never memory that was freed, nor another entry's bytes.
 */
final class NativeBytes {
  private static final MemoryIO IO = MemoryIO.getInstance();
  private static final VarHandle REFS;

  static {
    try {
      REFS = MethodHandles.lookup().findVarHandle(NativeBytes.class, "refs", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long address; // 0 for an empty unit: nothing allocated
  private final int length;
  private final AtomicLong held; // the owner's count of bytes allocated and not yet freed

  @SuppressWarnings("unused") // through REFS
  private volatile int refs = 1;

  private NativeBytes(long address, int length, AtomicLong held) {
    this.address = address;
    this.length = length;
    this.held = held;
  }

  /**
   * A native copy of {@code b} holding one reference, or null if the memory could not be had (the
   * tier then does without the entry: a RAM tier never fails a read). {@code held} counts its bytes
   * from now until they are freed.
   */
  static NativeBytes copyOf(byte[] b, AtomicLong held) {
    NativeBytes e = allocate(b.length, held);
    if (e != null && b.length > 0) {
      IO.putByteArray(e.address, b, 0, b.length);
    }
    return e;
  }

  /**
   * {@code length} bytes of native memory, not yet written, holding one reference, or null if the
   * memory could not be had; {@code held} counts them from now until they are freed. Filled through
   * {@link #buffer} (a fetch read straight into it) before anyone else may see it.
   */
  static NativeBytes allocate(int length, AtomicLong held) {
    if (length == 0) {
      return new NativeBytes(0, 0, held);
    }
    long a;
    try {
      a = Native.LIBC.malloc(length); // not jffi's allocateMemory, which clears it (Native)
    } catch (OutOfMemoryError e) {
      return null;
    }
    if (a == 0) {
      return null;
    }
    held.addAndGet(length);
    return new NativeBytes(a, length, held);
  }

  /**
   * A direct buffer over the bytes, position 0, limit the length; valid only while the caller holds
   * a reference (it does not keep the memory).
   */
  java.nio.ByteBuffer buffer() {
    return length == 0 ? java.nio.ByteBuffer.allocate(0) : IO.newDirectByteBuffer(address, length);
  }

  /** The unit's length in bytes. */
  int length() {
    return length;
  }

  /** A heap copy of the bytes, or null if they were freed before this reader could take them. */
  byte[] copy() {
    if (!acquire()) {
      return null;
    }
    try {
      byte[] b = new byte[length];
      if (length > 0) {
        IO.getByteArray(address, b, 0, length);
      }
      return b;
    } finally {
      release();
    }
  }

  /**
   * Hands {@code n} bytes from {@code offset} to {@code sink} where they lie, holding a reference
   * for the call; false if they were freed before this reader could take one.
   */
  boolean copyTo(long offset, int n, NativeSink sink) {
    if (offset < 0 || n < 0 || offset + n > length) {
      throw new IndexOutOfBoundsException("bytes " + offset + "+" + n + " of " + length);
    }
    if (!acquire()) {
      return false;
    }
    try {
      if (n > 0) {
        sink.put(address + offset, n);
      }
      return true;
    } finally {
      release();
    }
  }

  /** Takes a reference unless the count already reached zero (the memory is gone). */
  boolean acquire() {
    for (int r = (int) REFS.getVolatile(this); r > 0; r = (int) REFS.getVolatile(this)) {
      if (REFS.compareAndSet(this, r, r + 1)) {
        return true;
      }
    }
    return false;
  }

  /** Gives up a reference; the last one frees the memory. */
  void release() {
    int left = (int) REFS.getAndAdd(this, -1) - 1;
    if (left == 0 && address != 0) {
      IO.freeMemory(address);
      held.addAndGet(-length);
    } else if (left < 0) {
      throw new IllegalStateException("released more often than taken");
    }
  }

  /** True while the memory is held (tests). */
  boolean live() {
    return (int) REFS.getVolatile(this) > 0;
  }
}
