package org.hintfs.fs.serve;

/**
 * The threads that serve kernel requests, as the FUSE loop reports them: how many there are now,
 * the most there were, the bound, and how often a request found none free at the bound.
 */
public interface RequestThreads {
  /** None yet: the mount has not started serving. */
  RequestThreads NONE =
      new RequestThreads() {
        @Override
        public int alive() {
          return 0;
        }

        @Override
        public int peak() {
          return 0;
        }

        @Override
        public int max() {
          return 0;
        }

        @Override
        public long atMax() {
          return 0;
        }

        @Override
        public int readers() {
          return 0;
        }

        @Override
        public long stalls() {
          return 0;
        }
      };

  /** Request threads alive now. */
  int alive();

  /** The most that were alive at once. */
  int peak();

  /** The most there may be ({@code --fuse-max-threads}). */
  int max();

  /** Times a request left no thread free and none could be started (at the bound). */
  long atMax();

  /** The threads the load asks for now to read and serve requests (not waiting on the source). */
  int readers();

  /** Times every reading thread was found held by a request that did not say it would wait. */
  long stalls();
}
