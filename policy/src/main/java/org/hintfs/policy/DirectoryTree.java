package org.hintfs.policy;

/** A read-only directory tree of int nodes, as the mount's catalog holds it. */
public interface DirectoryTree {
  boolean isDirectory(int node);

  int childCount(int dir);

  int child(int dir, int i);

  /** The node's own name. */
  String name(int node);
}
