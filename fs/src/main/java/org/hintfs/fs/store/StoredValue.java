package org.hintfs.fs.store;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The layout of a value in the {@code data} database: a 32-byte header, then the payload.
 *
 * <pre>
 * 0  int   magic "HFS1"
 * 4  int   payload length
 * 8  long  path check (bytes 16-23 of the path's SHA-256; see {@link CacheKey})
 * 16 long  version hash of the source object the payload was read from
 * 24 int   CRC32C of the payload
 * 28 int   reserved (0)
 * </pre>
 *
 * Every read checks all of it; any mismatch means the entry is not served.
 */
final class StoredValue {
  static final int HEADER = 32;
  private static final int MAGIC = 0x48465331; // "HFS1"

  private StoredValue() {}

  /** What a read of an entry found. */
  enum Check {
    OK,
    /** The entry is from another version of the object: stale, not damaged. */
    STALE,
    /** Header or checksum wrong: damaged on disk. */
    CORRUPT
  }

  static void write(ByteBuffer dst, CacheKey key, long versionHash, byte[] payload) {
    write(dst, key, versionHash, crc(payload), payload);
  }

  /** The CRC32C a stored value's header carries for {@code payload}. */
  static int crc(byte[] payload) {
    CRC32C crc = new CRC32C();
    crc.update(payload);
    return (int) crc.getValue();
  }

  /** {@link #write}, its CRC32C ({@link #crc}) computed before. */
  static void write(ByteBuffer dst, CacheKey key, long versionHash, int crc, byte[] payload) {
    header(dst, key, versionHash, crc, payload.length).put(payload);
  }

  /**
   * How much of a payload in native memory is copied before its CRC32C is taken over what landed,
   * while it is still in the CPU's cache.
   */
  static final int CHECK_PIECE = 64 << 10;

  /**
   * {@link #write} of a payload in native memory: copied from where it lies {@link #CHECK_PIECE} at
   * a time, each piece's CRC32C taken over the copy it just made (in cache: about half the cost of
   * a pass over 4 MiB that has left it), the header last. With {@code vouched} (the CRC32C the
   * caller took over the bytes it vouches for) no CRC32C is taken: the header carries that one, and
   * a copy that is not those bytes reads as damaged.
   */
  static void write(
      ByteBuffer dst, CacheKey key, long versionHash, NativeBytes payload, Integer vouched) {
    int at = dst.position();
    int body = at + HEADER;
    int length = payload.length();
    long to = NativeSink.address(dst) + body;
    CRC32C crc = new CRC32C();
    ByteBuffer landed = dst.duplicate();
    boolean copied =
        payload.copyTo(
            0,
            length,
            (from, n) -> {
              for (int done = 0; done < n; done += CHECK_PIECE) {
                int k = Math.min(CHECK_PIECE, n - done);
                MEMORY.copyMemory(from + done, to + done, k);
                if (vouched == null) {
                  crc.update(landed.limit(body + done + k).position(body + done));
                }
              }
            });
    if (!copied) {
      throw new IllegalStateException("a queued payload was freed before it was written");
    }
    header(dst, key, versionHash, vouched != null ? vouched : (int) crc.getValue(), length);
    dst.position(body + length);
  }

  private static final com.kenai.jffi.MemoryIO MEMORY = com.kenai.jffi.MemoryIO.getInstance();

  private static ByteBuffer header(
      ByteBuffer dst, CacheKey key, long versionHash, int crc, int length) {
    return dst.putInt(MAGIC)
        .putInt(length)
        .putLong(key.pathCheck())
        .putLong(versionHash)
        .putInt(crc)
        .putInt(0);
  }

  /**
   * Checks a stored value (header, then CRC32C in place) and copies its payload out.
   *
   * @param expectedLength the payload length the catalog implies, or -1 to accept any
   * @param out receives the payload when the check is {@link Check#OK}
   */
  static Check read(
      ByteBuffer v, CacheKey key, long versionHash, int expectedLength, byte[][] out) {
    Check c = checkHeader(v, key, versionHash, expectedLength);
    if (c != Check.OK) {
      return c;
    }
    if (!payloadIntact(v)) {
      return Check.CORRUPT;
    }
    int p = v.position();
    byte[] payload = new byte[v.getInt(p + 4)];
    v.get(p + HEADER, payload);
    out[0] = payload;
    return Check.OK;
  }

  /**
   * Checks a stored value in place (header, then CRC32C of the payload where it lies: in LMDB's map
   * nothing is copied) and hands {@code n} payload bytes from {@code offset} to {@code sink}, only
   * if the check is {@link Check#OK}. The caller keeps {@code v}'s transaction open until this
   * returns, so the pages checked are the pages copied. With {@code seen} (may be null), the CRC32C
   * is computed only if it has not checked this stored value whole before ({@link MappedBlock}).
   */
  static Check checkAndCopy(
      ByteBuffer v,
      CacheKey key,
      long versionHash,
      int expectedLength,
      long offset,
      int n,
      NativeSink sink,
      MappedBlock seen) {
    Check c = checkHeader(v, key, versionHash, expectedLength);
    if (c != Check.OK) {
      return c;
    }
    int p = v.position();
    long at = NativeSink.address(v) + p;
    int crc = v.getInt(p + 24);
    if (seen == null || !seen.checked(at, crc)) {
      if (!payloadIntact(v)) {
        return Check.CORRUPT;
      }
      if (seen != null) {
        seen.checkedAt(at, crc);
      }
    }
    int len = v.getInt(p + 4);
    if (offset < 0 || n < 0 || offset + n > len) {
      throw new IndexOutOfBoundsException("bytes " + offset + "+" + n + " of " + len);
    }
    sink.put(NativeSink.address(v) + p + HEADER + offset, n);
    return Check.OK;
  }

  /**
   * True if the payload's CRC32C is the header's, computed where the value lies (a direct buffer:
   * the intrinsic reads LMDB's map itself). The caller's transaction keeps those pages stable.
   */
  private static boolean payloadIntact(ByteBuffer v) {
    int p = v.position();
    ByteBuffer payload = v.duplicate();
    payload.position(p + HEADER);
    CRC32C crc = new CRC32C();
    crc.update(payload);
    return (int) crc.getValue() == v.getInt(p + 24);
  }

  private static Check checkHeader(
      ByteBuffer v, CacheKey key, long versionHash, int expectedLength) {
    if (v.remaining() < HEADER || v.getInt(v.position()) != MAGIC) {
      return Check.CORRUPT;
    }
    int p = v.position();
    int len = v.getInt(p + 4);
    if (len != v.remaining() - HEADER || v.getLong(p + 8) != key.pathCheck()) {
      return Check.CORRUPT;
    }
    if (v.getLong(p + 16) != versionHash || (expectedLength >= 0 && len != expectedLength)) {
      return Check.STALE;
    }
    return Check.OK;
  }

  /**
   * Bytes an entry occupies in LMDB with 4 KiB pages. A value above LMDB's node limit (about half a
   * page) goes to overflow pages of its own: {@code (16-byte page header + value) / 4096}, rounded
   * up, whole pages. A smaller value shares a leaf page: its node costs the value, the key and an
   * 8-byte node header, plus a 2-byte slot pointer.
   */
  static long charge(int payloadLength) {
    long v = (long) HEADER + payloadLength;
    if (v > 2_000) {
      return ((16 + v + 4095) / 4096) * 4096;
    }
    return v + CacheKey.LENGTH + 8 + 2;
  }
}
