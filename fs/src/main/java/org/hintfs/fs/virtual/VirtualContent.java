package org.hintfs.fs.virtual;

import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.hintfs.fs.control.HintState;
import org.hintfs.fs.store.TieredCache;

/** The content of the generated files under {@code /.hintfs}, made at open. */
public final class VirtualContent {
  /** The longest a read of stats or cached waits for the hints written before it to apply. */
  static final long APPLIED_WAIT_MS = 2000;

  private VirtualContent() {}

  /** The bytes of {@code v} now. */
  public static byte[] render(
      VirtualFile v, HintState hints, TieredCache cache, Supplier<String> statsJson) {
    if (v == VirtualFile.STATS || v == VirtualFile.CACHED) {
      // Read your writes: what a reader wrote to the control file before shows in what it reads.
      hints.awaitApplied(APPLIED_WAIT_MS);
    }
    String text =
        switch (v) {
          case STATS -> statsJson.get();
          case ERRORS -> hints.errorsText();
          case CACHED -> cachedText(hints, cache);
          default -> "";
        };
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** The #index of every dataset sample cached now, one per line. */
  private static String cachedText(HintState hints, TieredCache cache) {
    if (hints.view() == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    for (int id : cache.index().cachedIds()) {
      int s = hints.sampleOf(id);
      if (s >= 0) {
        sb.append('#').append(s).append('\n');
      }
    }
    return sb.toString();
  }
}
