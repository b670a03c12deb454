package org.hintfs.fs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The release of this build and the commit it was built from, read from {@code build.properties},
 * which the build writes (fs/pom.xml): the version is the poms', the commit git's short hash, with
 * "-dirty" when the tree had changes, or "unknown" when the build ran outside a git checkout.
 */
public final class Version {
  private Version() {}

  /** The release, "0.1.0"; "unknown" only when the classes were not built by Maven. */
  public static final String VERSION;

  /** The commit this build was made from, "ba9f87ede699" or "ba9f87ede699-dirty"; or "unknown". */
  public static final String COMMIT;

  static {
    Properties p = new Properties();
    try (InputStream in = Version.class.getResourceAsStream("build.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    VERSION = known(p.getProperty("version"));
    COMMIT = known(p.getProperty("commit"));
  }

  /** "0.1.0 (commit ba9f87ede699)": what {@code --version} and {@code status} print. */
  public static String describe() {
    return VERSION + " (commit " + COMMIT + ")";
  }

  /** The value, or "unknown" when missing or left unfiltered ("${hintfs.commit}"). */
  static String known(String value) {
    return value == null || value.isBlank() || value.contains("${") ? "unknown" : value.strip();
  }
}
