package org.hintfs.fs;

/** The version of this build. */
public final class Version {
  private Version() {}

  /** From the jar manifest when packaged, else "dev". */
  public static final String VERSION =
      java.util.Objects.requireNonNullElse(
          Version.class.getPackage().getImplementationVersion(), "dev");
}
