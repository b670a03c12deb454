package org.hintfs.fs;

/** The errno values hintfs answers with (Linux numbering; FUSE callbacks return the negative). */
public enum Errno {
  EPERM(1),
  ENOENT(2),
  EIO(5),
  EBADF(9),
  EACCES(13),
  ENOTDIR(20),
  EISDIR(21),
  EINVAL(22),
  ENOSPC(28),
  EROFS(30),
  ENOSYS(38),
  ETIMEDOUT(110),
  EINPROGRESS(115),
  ESTALE(116);

  private final int value;

  Errno(int value) {
    this.value = value;
  }

  /** The positive errno number. */
  public int value() {
    return value;
  }
}
