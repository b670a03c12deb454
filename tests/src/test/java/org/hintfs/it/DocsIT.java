package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a newcomer reads holds to its promises: BENCHMARKS.md is one page whose every table names a
 * command that is in the repository and that tests/bench/run.sh runs; the docs speak of the
 * product, not of its development's milestones; the CHANGELOG has a section for the poms' release.
 */
class DocsIT {
  private static final Path ROOT = Hintfs.ROOT;

  /** "the twelfth stop", "this stop", "stop 12": words for a development milestone. */
  private static final Pattern MILESTONE =
      Pattern.compile(
          "(?i)\\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh"
              + "|twelfth) (stop|session)s?\\b|\\b(this|last|next|an earlier|a later) (stop|session)\\b"
              + "|\\bstop \\d+\\b|\\bnot committed\\b");

  private static String read(String path) throws Exception {
    return Files.readString(ROOT.resolve(path));
  }

  /** The page's "## " sections: title, then body. */
  private static List<String[]> sections(String page) {
    List<String[]> out = new ArrayList<>();
    String[] parts = page.split("(?m)^## ");
    for (int i = 1; i < parts.length; i++) {
      int nl = parts[i].indexOf('\n');
      out.add(new String[] {parts[i].substring(0, nl), parts[i].substring(nl + 1)});
    }
    return out;
  }

  @Test
  void benchmarks_isOnePage_whoseEveryTableNamesACommittedCommandThatRunShRuns() throws Exception {
    String page = read("BENCHMARKS.md");
    assertThat(page.lines().count()).as("BENCHMARKS.md lines").isLessThan(500);
    Hintfs.Result list =
        Hintfs.exec(List.of(ROOT.resolve("tests/bench/run.sh").toString(), "--list"), Map.of(), 30);
    assertThat(list.rc()).as(list.out()).isZero();
    Pattern script = Pattern.compile("tests/bench/([A-Za-z0-9_.-]+\\.(?:sh|java|py))");
    for (String[] s : sections(page)) {
      boolean hasTable = s[1].contains("\n| --- ");
      Matcher m = script.matcher(s[1]);
      boolean named = false;
      while (m.find()) {
        named = true;
        assertThat(ROOT.resolve(m.group())).as("%s names %s", s[0], m.group()).isRegularFile();
        if (m.group(1).endsWith(".sh")) {
          assertThat(list.out()).as("run.sh --list runs %s", m.group()).contains(m.group());
        }
      }
      if (hasTable) {
        assertThat(named || s[1].contains("`hintfs simulate "))
            .as("a table in '%s' names the command that made it", s[0])
            .isTrue();
      }
    }
    // A figure names no file under /tmp (only the lock every benchmark takes).
    assertThat(page.replace("/tmp/hintfs-bench.lock", "")).doesNotContain("/tmp/");
  }

  @Test
  void benchmarksChangelogAndDocs_nameNoDevelopmentMilestone() throws Exception {
    List<Path> pages =
        new ArrayList<>(List.of(ROOT.resolve("BENCHMARKS.md"), ROOT.resolve("CHANGELOG.md")));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).forEach(pages::add);
    }
    for (Path p : pages) {
      Matcher m = MILESTONE.matcher(Files.readString(p));
      assertThat(m.find() ? m.group() : null).as("a milestone named in %s", p).isNull();
    }
  }

  @Test
  void changelog_hasADatedSectionForThePomsRelease_belowUnreleased() throws Exception {
    String log = read("CHANGELOG.md");
    int unreleased = log.indexOf("\n## [Unreleased]\n");
    Matcher release =
        Pattern.compile(
                "\n## \\["
                    + Pattern.quote(org.hintfs.fs.Version.VERSION)
                    + "\\] - \\d{4}-\\d{2}-\\d{2}\n")
            .matcher(log);
    assertThat(unreleased).as("an Unreleased section").isPositive();
    assertThat(release.find()).as("a section for %s", org.hintfs.fs.Version.VERSION).isTrue();
    assertThat(release.start()).as("Unreleased comes first").isGreaterThan(unreleased);
  }
}
