package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MainTest {
  private static String stdout(String... args) {
    PrintStream old = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      assertThat(Main.run(args)).isZero();
    } finally {
      System.setOut(old);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void completionCoversEveryCommandAndPolicyNames() {
    String script = stdout("generate-completion");
    assertThat(script).contains("complete -F");
    for (String cmd :
        new String[] {
          "mount", "unmount", "status", "prefetch", "pin", "unpin", "evict", "policy"
        }) {
      assertThat(script).contains(cmd);
    }
    assertThat(script).contains("shade").contains("clairvoyant");
  }

  @Test
  void everyCommandHasHelpWithExamples() {
    for (String cmd :
        new String[] {
          "mount", "unmount", "status", "prefetch", "pin", "unpin", "evict", "policy", "simulate"
        }) {
      String help = stdout(cmd, "--help");
      assertThat(help).as(cmd).contains("Usage: hintfs " + cmd).contains("Examples:");
    }
  }
}
