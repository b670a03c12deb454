package org.hintfs.fs.cluster;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.jgroups.Message;
import org.jgroups.auth.AuthToken;

/**
 * JGroups AUTH's proof that a joining member holds the cluster's secret, without sending it: a
 * fresh 16-byte nonce and its HMAC-SHA256 under the secret. (Bound to the sender's address instead,
 * members refused each other's merge messages.) The encryption key (SYM_ENCRYPT, below AUTH, so
 * tokens travel encrypted) is drawn from the same secret: a member without it can neither join nor
 * read a message.
 */
public final class SharedSecret extends AuthToken {
  private byte[] secret; // this member's; never sent
  private byte[] nonce; // a received token's
  private byte[] mac; // a received token's proof

  /** AUTH makes the received token with this constructor, then {@link #readFrom}. */
  public SharedSecret() {}

  SharedSecret(byte[] secret) {
    this.secret = secret.clone();
  }

  /**
   * A short public tag of the key ("open" without a secret): 24 bits of a hash of the derived key,
   * shown in the member's name so that a member with another secret can be told so. It says nothing
   * usable about the secret.
   */
  static String tag(byte[] secret) {
    if (secret == null) {
      return "open";
    }
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update("hintfs key tag v1".getBytes(StandardCharsets.UTF_8));
      d.update(aesKey(secret).getEncoded());
      return java.util.HexFormat.of().formatHex(d.digest(), 0, 3);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** AES-128 key for SYM_ENCRYPT: SHA-256 of a label and the secret, cut to 16 bytes. */
  static SecretKey aesKey(byte[] secret) throws GeneralSecurityException {
    MessageDigest d = MessageDigest.getInstance("SHA-256");
    d.update("hintfs cluster key v1".getBytes(StandardCharsets.UTF_8));
    d.update(secret);
    return new SecretKeySpec(Arrays.copyOf(d.digest(), 16), "AES");
  }

  private byte[] hmac(byte[] message) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(secret, "HmacSHA256"));
      return m.doFinal(message);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String getName() {
    return getClass().getName();
  }

  @Override
  public boolean authenticate(AuthToken token, Message msg) {
    return token instanceof SharedSecret t
        && t.nonce != null
        && t.mac != null
        && MessageDigest.isEqual(hmac(t.nonce), t.mac);
  }

  @Override
  public void writeTo(DataOutput out) throws IOException {
    byte[] n = new byte[16];
    RANDOM.nextBytes(n);
    out.write(n);
    out.write(hmac(n));
  }

  @Override
  public void readFrom(DataInput in) throws IOException {
    nonce = new byte[16];
    in.readFully(nonce);
    mac = new byte[32];
    in.readFully(mac);
  }

  @Override
  public int size() {
    return 16 + 32;
  }

  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
}
