package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which Java the real launcher runs: the newest >= 25 installed (read from the JDKs' {@code
 * release} files), {@code JAVA} as an override, never one older than 17; and the daemon of a real
 * mount runs the same one, as {@code status} says. Every machine this project builds on has Java 17
 * and Java 25 installed: a machine without them fails here rather than skipping.
 */
class JavaChoiceIT {
  static final List<Path> JVM_DIRS =
      List.of(Path.of("/usr/lib/jvm"), Path.of("/opt/java"), Path.of("/usr/java"));

  @TempDir Path tmp;

  /** The newest installed JDK >= 25, and a JDK 17. */
  static Path jdk25;

  static String jdk25Version;
  static Path jdk17;

  /** Mountpoints to unmount after each test. */
  final List<Path> mounted = new ArrayList<>();

  @BeforeAll
  static void findJdks() throws IOException {
    List<Path> jdks = new ArrayList<>();
    for (Path root : JVM_DIRS) {
      if (Files.isDirectory(root)) {
        try (Stream<Path> s = Files.list(root)) {
          s.filter(d -> Files.isExecutable(d.resolve("bin/java")) && version(d).isPresent())
              .forEach(jdks::add);
        }
      }
    }
    jdk25 =
        jdks.stream()
            .filter(d -> feature(version(d).get()) >= 25)
            .max(Comparator.comparing(d -> key(version(d).get())))
            .orElseThrow(
                () ->
                    new AssertionError(
                        "no Java 25 or newer in "
                            + JVM_DIRS
                            + ": this test needs one (CI machines have Temurin 25 in /usr/lib/jvm)"));
    jdk25Version = version(jdk25).get();
    jdk17 =
        jdks.stream()
            .filter(d -> feature(version(d).get()) == 17)
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no Java 17 in " + JVM_DIRS + ": this test needs one"));
  }

  @AfterEach
  void unmount() {
    mounted.forEach(Hintfs::unmountQuietly);
  }

  /** JAVA_VERSION from a JDK's release file. */
  static Optional<String> version(Path jdk) {
    try {
      return Files.readAllLines(jdk.resolve("release")).stream()
          .filter(l -> l.startsWith("JAVA_VERSION="))
          .map(l -> l.substring("JAVA_VERSION=".length()).replace("\"", ""))
          .findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  static int feature(String version) {
    return Integer.parseInt(version.split("[.+-]")[0]);
  }

  static String key(String version) {
    StringBuilder b = new StringBuilder();
    String[] p = version.split("[.+-]");
    for (int i = 0; i < 4; i++) {
      b.append(
          String.format("%05d", i < p.length && p[i].matches("\\d+") ? Integer.parseInt(p[i]) : 0));
    }
    return b.toString();
  }

  /**
   * Runs the launcher with this environment: the test's own, less every variable that steers the
   * choice, plus {@code env}.
   */
  static Hintfs.Result launcher(Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Hintfs.LAUNCHER.toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    Map<String, String> e = pb.environment();
    for (String k :
        List.of(
            "JAVA",
            "JAVA_HOME",
            "HINTFS_JVM_DIRS",
            "HINTFS_JAVA_OPTS",
            "HINTFS_AOT",
            "HINTFS_AOT_DIR",
            "JAVA_TOOL_OPTIONS")) {
      e.remove(k);
    }
    e.putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(cmd + " did not finish in 180 s");
    }
    return new Hintfs.Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  /**
   * A fake JDK: a {@code release} file saying {@code version}, and a bin/java that says "fake JDK
   * NAME ran", records its arguments in {@code args} beside it, and runs the real Java 25.
   */
  Path fakeJdk(Path root, String name, String version) throws IOException {
    Path home = Files.createDirectories(root.resolve(name));
    Files.writeString(
        home.resolve("release"), "IMPLEMENTOR=\"Fake\"\nJAVA_VERSION=\"" + version + "\"\n");
    Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
    Files.writeString(
        java,
        "#!/bin/sh\necho 'fake JDK "
            + name
            + " ran' >&2\nprintf '%s\\n' \"$@\" > '"
            + home.resolve("args")
            + "'\nexec '"
            + jdk25.resolve("bin/java")
            + "' \"$@\"\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    return home;
  }

  @Test
  void prefersJava25_overAJavaHomeOf17() throws Exception {
    Hintfs.Result r = launcher(Map.of("JAVA_HOME", jdk17.toString()), "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out().strip())
        .as("the launcher runs the newest Java >= 25 installed, %s", jdk25)
        .startsWith("hintfs ")
        .contains(", Java " + jdk25Version + ", ")
        .endsWith(", " + jdk25 + ")");
    // And with nothing set at all.
    r = launcher(Map.of(), "--version");
    assertThat(r.out().strip()).contains(", Java " + jdk25Version + ", ");
  }

  @Test
  void javaForcesItsJava() throws Exception {
    Hintfs.Result r = launcher(Map.of("JAVA", jdk17.resolve("bin/java").toString()), "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out().strip()).contains(", Java 17.").endsWith(", " + jdk17 + ")");
    // Over a JAVA_HOME of 25 too.
    r =
        launcher(
            Map.of("JAVA", jdk17.resolve("bin/java").toString(), "JAVA_HOME", jdk25.toString()),
            "--version");
    assertThat(r.out().strip()).contains(", Java 17.");
  }

  @Test
  void picksTheHighestVersionFromTheReleaseFiles_givingItTheFlagsOf24AndNewer() throws Exception {
    Path jdks = Files.createDirectories(tmp.resolve("jdks"));
    fakeJdk(jdks, "a-jdk-25.0.1", "25.0.1");
    Path fake26 = fakeJdk(jdks, "b-jdk-26", "26");
    fakeJdk(jdks, "c-jdk-11", "11.0.2");
    // The installed JDKs first: the first >= 25 found is not the newest.
    Hintfs.Result r =
        launcher(
            Map.of(
                "HINTFS_JVM_DIRS", String.join(":", JVM_DIRS.get(0).toString(), jdks.toString())),
            "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("fake JDK b-jdk-26 ran")
        .doesNotContain("a-jdk")
        .doesNotContain("c-jdk");
    List<String> args = Files.readAllLines(fake26.resolve("args"));
    assertThat(args)
        .contains("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow")
        .containsSubsequence("--add-opens", "java.base/java.nio=ALL-UNNAMED");
    // 25.0.10 is newer than 25.0.3 (numbers, not text), though found after it.
    Path jdks25 = Files.createDirectories(tmp.resolve("jdks25"));
    fakeJdk(jdks25, "jdk-25.0.10", "25.0.10");
    r = launcher(Map.of("HINTFS_JVM_DIRS", JVM_DIRS.get(0) + ":" + jdks25), "--version");
    assertThat(r.out()).contains("fake JDK jdk-25.0.10 ran");
  }

  @Test
  void neverPicksAJavaOlderThan17_andRefusesOneForcedInOneLine() throws Exception {
    Path jdks = Files.createDirectories(tmp.resolve("jdks"));
    Path fake11 = fakeJdk(jdks, "jdk-11", "11.0.2");
    Hintfs.Result r = launcher(Map.of("HINTFS_JVM_DIRS", jdks.toString()), "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).doesNotContain("fake JDK").contains(", Java ");
    // Not as JAVA_HOME either: java on PATH runs it.
    r =
        launcher(
            Map.of("HINTFS_JVM_DIRS", jdks.toString(), "JAVA_HOME", fake11.toString()),
            "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out()).doesNotContain("fake JDK").contains(", Java ");
    // Forced: one line, status 1, and the JVM never started.
    r = launcher(Map.of("JAVA", fake11.resolve("bin/java").toString()), "--version");
    assertThat(r.rc()).as(r.out()).isEqualTo(1);
    assertThat(r.out().lines().toList())
        .singleElement()
        .asString()
        .startsWith("hintfs: ")
        .contains("Java 11", "needs Java 17 or newer", "JAVA=");
    assertThat(fake11.resolve("args")).doesNotExist();
  }

  /** Mounts a small tree with this environment, reads it, and returns the status rows. */
  List<String> mountAndStatus(String name, Map<String, String> env) throws Exception {
    Path src = Files.createDirectories(tmp.resolve(name + "-src/d"));
    for (int i = 0; i < 5; i++) {
      Files.writeString(src.resolve("f" + i), "file " + i + "\n".repeat(1000));
    }
    Path mnt = Files.createDirectories(tmp.resolve(name + "-mnt"));
    Hintfs.Result r =
        launcher(
            env,
            "mount",
            src.getParent().toString(),
            mnt.toString(),
            "--cache-dir",
            tmp.resolve(name + "-cache").toString(),
            "--log-file",
            tmp.resolve(name + ".log").toString());
    mounted.add(mnt);
    assertThat(r.rc()).as(r.out()).isZero();
    for (int i = 0; i < 5; i++) {
      assertThat(Files.readString(mnt.resolve("d/f" + i)))
          .isEqualTo(Files.readString(src.resolve("f" + i)));
    }
    r = launcher(Map.of(), "status", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    List<String> rows = r.out().lines().toList();
    r = launcher(Map.of(), "unmount", mnt.toString());
    assertThat(r.rc()).as(r.out()).isZero();
    return rows;
  }

  static String row(List<String> rows, String name) {
    return rows.stream()
        .filter(l -> l.startsWith(name + ":"))
        .map(l -> l.substring(name.length() + 1).strip())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row " + name + " in " + rows));
  }

  @Test
  void aMountsDaemonRunsTheChosenJava_andStatusSaysWhich() throws Exception {
    List<String> rows =
        mountAndStatus("on17", Map.of("JAVA", jdk17.resolve("bin/java").toString()));
    assertThat(row(rows, "java")).startsWith("17.").contains(" at " + jdk17 + ", ");
    rows = mountAndStatus("on25", Map.of());
    assertThat(row(rows, "java")).startsWith(jdk25Version + " (").contains(" at " + jdk25 + ", ");
    // The flags reached the daemon: Java 25 warns of nothing.
    assertThat(Files.readString(tmp.resolve("on25.log"))).doesNotContain("WARNING");
  }

  /** Classes of hintfs that a {@code --version} run loaded from an AOT cache or CDS archive. */
  static long fromTheCache(Map<String, String> env) throws Exception {
    Map<String, String> e = new java.util.HashMap<>(env);
    e.put("JAVA_TOOL_OPTIONS", "-Xlog:class+load=info");
    Hintfs.Result r = launcher(e, "--version");
    assertThat(r.rc()).as(r.out()).isZero();
    return r.out()
        .lines()
        .filter(l -> l.contains(" org.hintfs.") && l.contains("shared objects file"))
        .count();
  }

  @Test
  void theAotCache_isBuiltOncePerJava_andEveryLaterDaemonStartsWithIt() throws Exception {
    // A directory that does not exist yet is made (the JVM alone fails to write into it).
    Path dir = tmp.resolve("aot").resolve("not-made-yet");
    Map<String, String> on25 = Map.of("HINTFS_AOT_DIR", dir.toString());
    assertThat(fromTheCache(on25)).as("no cache built yet").isZero();
    Hintfs.Result r = launcher(on25, "aot-cache");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out().strip())
        .matches(
            "hintfs: AOT cache for Java 25 written in \\d+ s: "
                + java.util.regex.Pattern.quote(dir.toString())
                + "/hintfs-java25-\\d+\\.aot \\(\\d+ MiB\\)");
    // Classes come from it (Java 25 loads the cached classes at start).
    assertThat(fromTheCache(on25)).isGreaterThan(100);
    // Not with HINTFS_AOT=0, nor for other options (their checksum names another cache).
    assertThat(fromTheCache(Map.of("HINTFS_AOT_DIR", dir.toString(), "HINTFS_AOT", "0"))).isZero();
    assertThat(fromTheCache(Map.of("HINTFS_AOT_DIR", dir.toString(), "HINTFS_JAVA_OPTS", "-Xss2m")))
        .isZero();
    // A mount's daemon starts with it and says so.
    List<String> rows = mountAndStatus("aot", on25);
    assertThat(row(rows, "java")).contains(", AOT cache " + dir + "/hintfs-java25-");
    assertThat(Files.readString(tmp.resolve("aot.log"))).doesNotContain("[warning][aot]");
    // Java 17: a CDS archive of the same run's classes.
    Map<String, String> on17 =
        Map.of("HINTFS_AOT_DIR", dir.toString(), "JAVA", jdk17.resolve("bin/java").toString());
    r = launcher(on17, "aot-cache");
    assertThat(r.rc()).as(r.out()).isZero();
    assertThat(r.out().strip())
        .startsWith("hintfs: AOT cache for Java 17 written in ")
        .endsWith(" MiB)");
    assertThat(fromTheCache(on17)).isPositive();
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s.map(f -> f.getFileName().toString()).sorted().toList())
          .hasSize(2)
          .allMatch(n -> n.matches("hintfs-java(25-\\d+\\.aot|17-\\d+\\.jsa)"));
    }
  }
}
