package org.hintfs.it;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/**
 * For the benchmarks: a disk that has stopped taking writes, as LMDB's writer sees it. Opens the
 * cache's environment from a second process and holds its write lock (an open write transaction)
 * until the file {@code RELEASE} appears or {@code SECONDS} pass: the daemon's writer waits in its
 * commit as on a stalled disk, while its read transactions go on (LMDB's readers never wait for the
 * writer). {@code drop_caches}, {@code fsfreeze} and cgroup v1 throttles cannot do this here:
 * fsfreeze also stops the readers' lock-table writes, and v1 throttles leave buffered writeback.
 *
 * <p>{@code java -cp hintfs.jar:tests/target/test-classes org.hintfs.it.LmdbWriteLockHolder DIR
 * SECONDS RELEASE} prints "held" once it holds the lock.
 */
public final class LmdbWriteLockHolder {
  private LmdbWriteLockHolder() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long until = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
    Path release = Path.of(args[2]);
    // A map smaller than the data is grown by LMDB to what the file holds.
    try (Env<ByteBuffer> env =
            Env.create().setMaxDbs(2).setMaxReaders(1024).open(dir.toFile(), EnvFlags.MDB_NOTLS);
        Txn<ByteBuffer> txn = env.txnWrite()) {
      System.out.println("held");
      System.out.flush();
      while (System.nanoTime() < until && !Files.exists(release)) {
        Thread.sleep(50);
      }
      txn.abort();
    }
    System.out.println("released");
  }
}
