package org.hintfs.backing.s3;

/** Version tags of S3 objects: the ETag (quotes and a weak marker stripped) and the size. */
final class ETags {
  private ETags() {}

  /** The version tag of an object: {@code etag:size}. */
  static String versionTag(String etag, long size) {
    return stripQuotes(etag) + ":" + size;
  }

  /** The ETag part of a version tag ({@code etag:size}). */
  static String etagOf(String versionTag) {
    int colon = versionTag.lastIndexOf(':');
    return colon < 0 ? versionTag : versionTag.substring(0, colon);
  }

  static String stripQuotes(String etag) {
    if (etag == null) {
      return "";
    }
    String e = etag.strip();
    if (e.startsWith("W/")) {
      e = e.substring(2);
    }
    if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
      e = e.substring(1, e.length() - 1);
    }
    return e;
  }
}
