package org.hintfs.fs.store;

/**
 * The free-space floor of the cache's disk ({@code --cache-min-free}): a size, or a share of the
 * disk's size. The cache never grows its file into the last {@link #bytesOf} bytes of the disk.
 *
 * @param bytes the floor as a size (used when {@code share} is 0)
 * @param share the floor as a share of the disk's size, 0 to 1 (0: {@code bytes} is the floor)
 */
public record MinFree(long bytes, double share) {
  /**
   * 5% of the disk, as mountpoint-s3 keeps free under its cache: room for the node's logs and
   * checkpoints, and for LMDB's copy-on-write pages of the next commits.
   */
  public static final MinFree DEFAULT = new MinFree(0, 0.05);

  /** No floor: the cache may fill the disk (it stops storing when a write is refused). */
  public static final MinFree NONE = new MinFree(0, 0);

  /** The floor in bytes on a disk of {@code total} bytes. */
  public long bytesOf(long total) {
    return share > 0 ? (long) (total * share) : bytes;
  }

  /**
   * Parses {@code 5%}, {@code 10G}, {@code 0}.
   *
   * @throws IllegalArgumentException with a one-line reason
   */
  public static MinFree parse(String s) {
    String t = s.strip();
    try {
      if (t.endsWith("%")) {
        double p = Double.parseDouble(t.substring(0, t.length() - 1));
        if (p >= 0 && p < 100) {
          return new MinFree(0, p / 100);
        }
      } else {
        return new MinFree(org.hintfs.fs.Sizes.parse(t, 0), 0);
      }
    } catch (IllegalArgumentException e) {
      // said below
    }
    throw new IllegalArgumentException(
        "--cache-min-free must be a size (e.g. 10G) or a share of the disk below 100% (e.g. 5%),"
            + " not '"
            + s
            + "'");
  }

  @Override
  public String toString() {
    return share > 0
        ? java.math.BigDecimal.valueOf(share * 100).stripTrailingZeros().toPlainString() + "%"
        : Long.toString(bytes);
  }
}
