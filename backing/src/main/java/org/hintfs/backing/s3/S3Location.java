package org.hintfs.backing.s3;

/** A bucket and a prefix ("" or ending in '/'). */
record S3Location(String bucket, String prefix) {
  /** Parses {@code s3://bucket[/prefix][/]}. */
  static S3Location parse(String spec) {
    if (!spec.startsWith("s3://")) {
      throw new IllegalArgumentException("not an s3:// URL: " + spec);
    }
    String rest = spec.substring("s3://".length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash + 1);
    if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new IllegalArgumentException(
          "'"
              + bucket
              + "' in "
              + spec
              + " is not a valid bucket name (3-63 of a-z, 0-9, '.', '-')");
    }
    while (prefix.startsWith("/")) {
      prefix = prefix.substring(1);
    }
    if (!prefix.isEmpty() && !prefix.endsWith("/")) {
      prefix = prefix + "/";
    }
    if (prefix.contains("//")) {
      throw new IllegalArgumentException("the prefix in " + spec + " has an empty segment ('//')");
    }
    return new S3Location(bucket, prefix);
  }
}
