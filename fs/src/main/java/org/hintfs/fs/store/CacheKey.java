package org.hintfs.fs.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The LMDB key of one cached object or block: 16 bytes of SHA-256 of the path, then the block index
 * (4 bytes, big-endian). Two keys are equal when their bytes are (the pending-write table's key).
 * LMDB keys are limited to 511 bytes, paths are not, hence a hash; 128 bits make a collision among
 * 10^8 paths about 10^-23 likely. Bytes 16-23 of the same digest go into the value header, so an
 * entry found under a key is also checked against the path.
 */
record CacheKey(byte[] key, long pathCheck) {
  static final int LENGTH = 20;

  static CacheKey of(String path, int block) {
    return of(path, block, 0);
  }

  /**
   * The key of block {@code block} of a file cut in blocks of {@code blockSize}; 0 for a whole
   * file, block 0 and the first block size (4 MiB), whose keys are as they always were. Any other
   * size salts the digest (the path, a NUL no path holds, the size): a build that knows no block
   * size but 4 MiB finds none of these blocks, where under its own key it would serve other bytes
   * of the file; a mount of another size drops them ({@link Units#cutAsHere}).
   */
  static CacheKey of(String path, int block, int blockSize) {
    return of(path, block, blockSize == 0 ? null : "\0" + blockSize);
  }

  /**
   * The key of the page in slot {@code slot} of a file cut in blocks of {@code blockSize} and pages
   * of {@code pageSize} ({@link Units}): salted with both, since the slot numbers of pages follow
   * the blocks, and no block's salt ({@code "\0" + size}) is a page's ({@code "\0page"...}).
   */
  static CacheKey ofPage(String path, int slot, int pageSize, int blockSize) {
    return of(path, slot, "\0page " + pageSize + " of " + blockSize);
  }

  private static CacheKey of(String path, int block, String salt) {
    byte[] d;
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(path.getBytes(StandardCharsets.UTF_8));
      if (salt != null) {
        sha.update(salt.getBytes(StandardCharsets.US_ASCII));
      }
      d = sha.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    byte[] k = new byte[LENGTH];
    System.arraycopy(d, 0, k, 0, 16);
    ByteBuffer.wrap(k, 16, 4).putInt(block);
    return new CacheKey(k, ByteBuffer.wrap(d, 16, 8).getLong());
  }

  /** A 64-bit hash of a version tag, as stored in headers (FNV-1a: stable across JVMs). */
  static long versionHash(String tag) {
    long h = 0xcbf29ce484222325L;
    for (byte b : tag.getBytes(StandardCharsets.UTF_8)) {
      h ^= (b & 0xff);
      h *= 0x100000001b3L;
    }
    return h;
  }

  /** The key's bytes into {@code dst} (a direct buffer the caller reuses), flipped for reading. */
  ByteBuffer into(ByteBuffer dst) {
    dst.clear();
    dst.put(key).flip();
    return dst;
  }

  /** Equal keys name the same entry: the bytes decide ({@link #pathCheck} follows from them). */
  @Override
  public boolean equals(Object o) {
    return o instanceof CacheKey k && java.util.Arrays.equals(key, k.key);
  }

  /** The digest's first bytes: already uniform, and the block in the low bits. */
  @Override
  public int hashCode() {
    return ByteBuffer.wrap(key).getInt(0) ^ ByteBuffer.wrap(key).getInt(16);
  }

  @Override
  public String toString() {
    return java.util.HexFormat.of().formatHex(key);
  }
}
