package org.hintfs.fs.stream;

/** Process trees for tests that name their streams rather than trace them. */
public final class TestTrees {
  private TestTrees() {}

  /** Every process is alive and a child of init: no open is traced to a writer by ancestry. */
  public static final ProcessTree ALL_ALIVE =
      new ProcessTree() {
        @Override
        public long parent(long pid) {
          return 1;
        }

        @Override
        public boolean alive(long pid) {
          return true;
        }
      };
}
