package org.hintfs.fs.control;

/**
 * A control write whose lines were all accepted, but whose reader line ({@code seed}, {@code
 * epoch}, {@code dataset}, {@code order}) the applier had not applied within the write's bound. The
 * line stays queued and is applied in order; the writer sees {@code EINPROGRESS}, not a success
 * that would claim it was applied.
 */
public final class StillApplyingException extends RuntimeException {
  public StillApplyingException(long waitedMs) {
    super(
        "accepted, still applying after "
            + waitedMs
            + " ms (applied in order; /.hintfs/stats hints.pending)");
  }
}
