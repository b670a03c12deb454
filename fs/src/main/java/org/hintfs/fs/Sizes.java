package org.hintfs.fs;

import java.util.Locale;

/**
 * Parses the sizes users type: {@code 20G}, {@code 512M}, {@code 1.5T}, {@code 4096}, {@code 10%}.
 */
public final class Sizes {
  private Sizes() {}

  /**
   * Bytes for a size spec; {@code %} is a share of {@code wholeBytes}. Units are binary (K = 1024)
   * and case-insensitive, with an optional trailing "B" or "iB".
   *
   * @throws IllegalArgumentException saying what is wrong and what would be right
   */
  public static long parse(String spec, long wholeBytes) {
    String s = spec.strip().toUpperCase(Locale.ROOT);
    try {
      if (s.endsWith("%")) {
        double pct = Double.parseDouble(s.substring(0, s.length() - 1));
        if (pct < 0 || pct > 100) {
          throw new IllegalArgumentException("a percentage must be between 0 and 100: " + spec);
        }
        return (long) (wholeBytes * pct / 100);
      }
      if (s.endsWith("IB")) {
        s = s.substring(0, s.length() - 2);
      } else if (s.endsWith("B")) {
        s = s.substring(0, s.length() - 1);
      }
      long mult = 1;
      if (!s.isEmpty()) {
        int u = "KMGTP".indexOf(s.charAt(s.length() - 1));
        if (u >= 0) {
          mult = 1L << (10 * (u + 1));
          s = s.substring(0, s.length() - 1);
        }
      }
      double v = Double.parseDouble(s);
      if (v < 0) {
        throw new NumberFormatException();
      }
      return (long) (v * mult);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "not a size: '" + spec + "' (use bytes or K/M/G/T, e.g. 20G, or a share like 10%)");
    }
  }
}
