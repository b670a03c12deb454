package org.hintfs.fs.cli;

/** Sizes and durations the way people read them. */
final class Human {
  private Human() {}

  static String bytes(long b) {
    if (b < 1024) {
      return b + " B";
    }
    String units = "KMGTPE";
    double v = b;
    int u = -1;
    while (v >= 1024 && u < units.length() - 1) {
      v /= 1024;
      u++;
    }
    return String.format("%.1f %siB", v, units.charAt(u));
  }

  static String duration(long seconds) {
    long h = seconds / 3600;
    long m = (seconds % 3600) / 60;
    long s = seconds % 60;
    return h > 0 ? String.format("%dh%02dm%02ds", h, m, s) : String.format("%dm%02ds", m, s);
  }
}
