package org.hintfs.fs.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.hintfs.policy.Policies;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code hintfs policy MOUNTPOINT [NAME]}. */
@Command(
    name = "policy",
    mixinStandardHelpOptions = true,
    description = "Show the cache policy of a mount, or switch it while it runs.",
    footer = {
      "",
      "Examples:",
      "  hintfs policy /mnt/imagenet",
      "  hintfs policy /mnt/imagenet shade"
    })
final class PolicyCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "MOUNTPOINT")
  Path mountpoint;

  @Parameters(
      index = "1",
      arity = "0..1",
      paramLabel = "NAME",
      description = "${COMPLETION-CANDIDATES}",
      completionCandidates = PolicyNames.class)
  String name;

  @Override
  public Integer call() {
    ControlClient c = ControlClient.forMountpoint(mountpoint);
    if (name == null) {
      System.out.println(c.stats().path("policy").asText());
      return 0;
    }
    if (!Policies.names().contains(name)) {
      throw new UserError(
          "unknown policy '" + name + "': choose one of " + String.join(", ", Policies.names()));
    }
    c.send(List.of("policy " + name));
    long deadline = System.currentTimeMillis() + 30_000;
    String now;
    while (!(now = c.stats().path("policy").asText()).startsWith(name)) {
      if (System.currentTimeMillis() > deadline) {
        throw new UserError(
            "the daemon did not switch to " + name + " in 30 s (it runs " + now + ")");
      }
      ControlClient.sleep(20);
    }
    System.out.println("policy: " + now);
    return 0;
  }
}
