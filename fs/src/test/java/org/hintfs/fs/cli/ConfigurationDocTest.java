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
  }
}
