package org.hintfs.fs.cli;

import java.util.Iterator;
import org.hintfs.policy.Policies;

/** The registered policy names, for --help and shell completion. */
final class PolicyNames implements Iterable<String> {
  @Override
  public Iterator<String> iterator() {
    return Policies.names().iterator();
  }
}
