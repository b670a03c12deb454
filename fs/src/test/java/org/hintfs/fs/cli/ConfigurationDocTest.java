package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** docs/CONFIGURATION.md names every option `hintfs mount --help` shows. */
class ConfigurationDocTest {
  @Test
  void everyMountOptionInTheHelpIsDocumented() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "CONFIGURATION.md"));
    var spec = new CommandLine(new MountCommand()).getCommandSpec();
    int shown = 0;
    for (OptionSpec o : spec.options()) {
      if (o.hidden()) {
        continue;
      }
      shown++;
      for (String name : o.names()) {
        assertThat(doc).as("docs/CONFIGURATION.md names %s", name).contains("`" + name);
      }
    }
    assertThat(shown).isGreaterThan(20);
    // And every snake-case option the mount(8) helper takes is on the page in its -o form.
    String helper = Files.readString(Path.of("..", "mount-scripts", "mount.hintfs"));
    var cases = java.util.regex.Pattern.compile("(?m)^    ([a-z_0-9|]+)\\)").matcher(helper);
    int forms = 0;
    while (cases.find()) {
      for (String key : cases.group(1).split("\\|")) {
        assertThat(doc).as("docs/CONFIGURATION.md gives -o %s", key).contains("`" + key);
        forms++;
      }
    }
    assertThat(forms).isGreaterThan(15);
    // And every -o form the page gives is one the helper takes (libfuse refuses the others), or
    // libfuse's own.
    var given =
        java.util.regex.Pattern.compile("\\| `--[a-z-]+[^`]*` \\| `([a-z_0-9]+)[=`]").matcher(doc);
    int taken = 0;
    while (given.find()) {
      if (given.group(1).equals("nonempty")) {
        continue; // --allow-nonempty: libfuse2's own -o nonempty
      }
      assertThat(helper)
          .as("mount-scripts/mount.hintfs takes -o %s", given.group(1))
          .containsPattern("(?m)(^ +|\\|)" + given.group(1) + "[|)]");
      taken++;
    }
    assertThat(taken).isGreaterThan(15);
  }
}
