package org.hintfs.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A foreground mount, as a container's or a unit's main process, stopped by SIGTERM. */
class ForegroundStopIT {
  @TempDir Path tmp;

  @Test
  void sigtermUnmountsAndExitsZero_leavingNoDeadEndpoint() throws Exception {
    Path src = Files.createDirectories(tmp.resolve("src/a"));
    Files.writeString(src.resolve("x.jpg"), "bytes");
    Path mnt = Files.createDirectories(tmp.resolve("mnt"));
    Process p =
        new ProcessBuilder(
                Hintfs.LAUNCHER.toString(),
                "mount",
                "--foreground",
                tmp.resolve("src").toString(),
                mnt.toString(),
                "--cache-dir",
                tmp.resolve("cache").toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("log").toFile())
            .start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.exists(mnt.resolve("a/x.jpg"))) {
        assertThat(p.isAlive()).as(Files.readString(tmp.resolve("log"))).isTrue();
        assertThat(System.nanoTime()).as("mounted within 60 s").isLessThan(deadline);
        Thread.sleep(100);
      }
      assertThat(Files.readString(mnt.resolve("a/x.jpg"))).isEqualTo("bytes");
      p.destroy(); // SIGTERM: podman stop, kubectl delete, systemctl stop
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exited within 30 s").isTrue();
      String log = Files.readString(tmp.resolve("log"));
      // Before, the JVM's own handler exited 143 with the mount left as a dead endpoint.
      assertThat(p.exitValue()).as(log).isZero();
      assertThat(Hintfs.isMounted(mnt)).as(log).isFalse();
      assertThat(log).contains("SIGTERM: unmounting " + mnt);
    } finally {
      p.destroyForcibly();
      if (Hintfs.isMounted(mnt)) {
        Hintfs.exec(List.of("umount", "-l", mnt.toString()), 30);
      }
    }
  }
}
