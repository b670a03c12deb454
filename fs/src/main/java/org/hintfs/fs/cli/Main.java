package org.hintfs.fs.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the {@code hintfs} command. */
@Command(
    name = "hintfs",
    mixinStandardHelpOptions = true,
    versionProvider = Main.VersionProvider.class,
    description =
        "A read-only FUSE filesystem that caches a training dataset by the trainer's hints.",
    subcommands = {
      MountCommand.class,
      UnmountCommand.class,
      StatusCommand.class,
      PrefetchCommand.class,
      PrefetchCommand.Pin.class,
      EvictCommand.Unpin.class,
      EvictCommand.class,
      PolicyCommand.class,
      RefreshCommand.class,
      SimulateCommand.class,
      AotTrainCommand.class,
      CommandLine.HelpCommand.class,
      picocli.AutoComplete.GenerateCompletion.class
    },
    footer = {
      "",
      "Examples:",
      "  hintfs mount /data/imagenet /mnt/imagenet",
      "  hintfs status /mnt/imagenet",
      "  hintfs prefetch /mnt/imagenet/val",
      "  hintfs policy /mnt/imagenet shade",
      "  hintfs unmount /mnt/imagenet",
      "  source <(hintfs generate-completion)   # bash/zsh completion"
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "name a command");
  }

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    int status = 1;
    try {
      status = run(args);
    } finally {
      // Always: the cluster's JGroups threads are not daemon threads, and a daemon whose close
      // failed must still end rather than hold its ports.
      System.exit(status);
    }
  }

  /** Runs the command line and returns its exit status (for tests). */
  public static int run(String... args) {
    CommandLine cli = new CommandLine(new Main());
    // The descriptions are written to 100 columns (the project's line width): at picocli's default
    // of 80 their lines broke in the middle.
    cli.setUsageHelpWidth(100);
    cli.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          if (e instanceof UserError) {
            cmd.getErr().println("hintfs: " + e.getMessage());
            return 1;
          }
          throw e;
        });
    return cli.execute(args);
  }

  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {line()};
    }

    /**
     * "hintfs 0.1.0 (commit ba9f87ede699, Java 17.0.13, Debian,
     * /usr/lib/jvm/java-17-openjdk-amd64)": the release, the commit it was built from and the JVM
     * running it, on one line for scripts.
     */
    static String line() {
      return "hintfs "
          + org.hintfs.fs.Version.VERSION
          + " (commit "
          + org.hintfs.fs.Version.COMMIT
          + ", "
          + java()
          + ")";
    }

    /** "Java 25.0.3, Eclipse Adoptium, /usr/lib/jvm/temurin-25-jdk-amd64": the JVM running this. */
    static String java() {
      return "Java "
          + System.getProperty("java.version")
          + ", "
          + System.getProperty("java.vendor")
          + ", "
          + System.getProperty("java.home");
    }
  }
}
