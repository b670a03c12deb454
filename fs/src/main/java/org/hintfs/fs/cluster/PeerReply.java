package org.hintfs.fs.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * What a home sends for one unit: {@code [crc32c:4][version length:2][version][payload]}. The
 * asking member checks the CRC32C of the payload, the source version against its own listing and
 * the length before a byte is served: bytes from a peer are trusted no more than bytes from disk.
 */
final class PeerReply {
  private PeerReply() {}

  static byte[] encode(byte[] payload, String version) {
    byte[] v = version.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(4 + 2 + v.length + payload.length);
    CRC32C crc = new CRC32C();
    crc.update(payload);
    b.putInt((int) crc.getValue()).putShort((short) v.length).put(v).put(payload);
    return b.array();
  }

  /**
   * The payload, checked.
   *
   * @throws IOException naming what did not match: the caller then reads the source
   */
  static byte[] verify(byte[] reply, String version, int length) throws IOException {
    if (reply == null || reply.length < 6) {
      throw new IOException("malformed reply from the home");
    }
    ByteBuffer b = ByteBuffer.wrap(reply);
    int crc = b.getInt();
    int vlen = b.getShort() & 0xffff;
    if (reply.length < 6 + vlen) {
      throw new IOException("malformed reply from the home");
    }
    String v = new String(reply, 6, vlen, StandardCharsets.UTF_8);
    if (!v.equals(version)) {
      throw new IOException("the home has version " + v + ", this mount lists " + version);
    }
    int start = 6 + vlen;
    if (reply.length - start != length) {
      throw new IOException(
          "the home sent " + (reply.length - start) + " bytes, the listing says " + length);
    }
    CRC32C c = new CRC32C();
    c.update(reply, start, length);
    if ((int) c.getValue() != crc) {
      throw new IOException("CRC32C mismatch in the home's reply");
    }
    return Arrays.copyOfRange(reply, start, reply.length);
  }
}
