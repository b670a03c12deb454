package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code mount-scripts/hintfs} launcher, as a user would. */
final class Hintfs {
  /** The repository root (failsafe passes it; fall back to the parent of tests/). */
  static final Path ROOT =
      Path.of(
          System.getProperty("hintfs.root", Path.of("").toAbsolutePath().getParent().toString()));

  static final Path LAUNCHER = ROOT.resolve("mount-scripts/hintfs");

  private Hintfs() {}

  /** Exit status and combined output of one command. */
  record Result(int rc, String out) {}

  /** Runs {@code hintfs args...}. */
  static Result run(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(LAUNCHER.toString());
    cmd.addAll(List.of(args));
    return exec(cmd, 180);
  }

  /** Runs {@code hintfs args...} with {@code env} added to this process's environment. */
  static Result runWithEnv(Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(LAUNCHER.toString());
    cmd.addAll(List.of(args));
    return exec(cmd, env, 180);
  }

  static Result exec(List<String> cmd, long timeoutSeconds)
      throws IOException, InterruptedException {
    return exec(cmd, Map.of(), timeoutSeconds);
  }

  static Result exec(List<String> cmd, Map<String, String> env, long timeoutSeconds)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(cmd + " did not finish in " + timeoutSeconds + " s");
    }
    return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  /**
   * Mounts and asserts success. Unless the test names one, the cache lives beside the mountpoint
   * (never in the user's ~/.cache).
   */
  static void mount(Path source, Path mountpoint, String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("mount", source.toString(), mountpoint.toString()));
    args.addAll(List.of(extra));
    if (!args.contains("--cache-dir") && !args.contains("--no-disk-cache")) {
      args.add("--cache-dir");
      args.add(mountpoint.resolveSibling(mountpoint.getFileName() + "-cache").toString());
    }
    Result r = run(args.toArray(String[]::new));
    assertThat(r.rc()).as(r.out()).isZero();
  }

  /** Mounts an S3 source with these credentials and asserts success; the cache beside it. */
  static void mountS3(Map<String, String> env, String source, Path mountpoint, String... extra)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("mount", source, mountpoint.toString()));
    args.addAll(List.of(extra));
    if (!args.contains("--cache-dir") && !args.contains("--no-disk-cache")) {
      args.add("--cache-dir");
      args.add(mountpoint.resolveSibling(mountpoint.getFileName() + "-cache").toString());
    }
    Result r = runWithEnv(env, args.toArray(String[]::new));
    assertThat(r.rc()).as(r.out()).isZero();
  }

  /** Unmounts if mounted; safe in @AfterEach. */
  static void unmountQuietly(Path mountpoint) {
    try {
      if (isMounted(mountpoint)) {
        Result r = run("unmount", mountpoint.toString());
        if (r.rc() != 0) {
          exec(List.of("umount", "-l", mountpoint.toString()), 30);
        }
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  static boolean isMounted(Path mountpoint) throws IOException {
    String mp = " " + mountpoint.toAbsolutePath().normalize() + " ";
    return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
        .anyMatch(l -> l.contains(mp) && l.contains("fuse.hintfs"));
  }

  /** PIDs of hintfs daemons serving this mountpoint. */
  static List<Long> daemonsFor(Path mountpoint) {
    String mp = mountpoint.toAbsolutePath().normalize().toString();
    return ProcessHandle.allProcesses()
        .filter(
            p ->
                p.info().arguments().map(a -> List.of(a).contains(mp)).orElse(false)
                    && p.info().commandLine().orElse("").contains("org.hintfs"))
        .map(ProcessHandle::pid)
        .toList();
  }
}
