package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.hintfs.backing.s3.S3Options;
import org.hintfs.fs.MountConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class MountCommandTest {
  private static MountCommand parse(String... args) {
    MountCommand c = new MountCommand();
    new CommandLine(c).parseArgs(args);
    return c;
  }

  @Test
  void aClusterSecretFileOthersMayRead_isRefusedInOneLine_asSshRefusesSuchAKey(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
    java.nio.file.Path secret =
        java.nio.file.Files.writeString(tmp.resolve("secret"), "0123456789abcdef0123456789abcdef");
    java.nio.file.Files.setPosixFilePermissions(
        secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    String[] args = {
      "s3://b", "/mnt", "--cluster", "job", "--cluster-secret-file", secret.toString()
    };
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> parse(args).clusterConfig())
        .isInstanceOf(UserError.class)
        .hasMessage(
            "--cluster-secret-file "
                + secret
                + " may be read by other users (mode 0644): chmod 600 "
                + secret);
    java.nio.file.Files.setPosixFilePermissions(
        secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    assertThat(parse(args).clusterConfig().secretFile()).isEqualTo(secret);
  }

  @Test
  void s3Connections_leaveRoomForEveryFetchAndSixtyFourMore_unlessGiven() {
    assertThat(parse("s3://b", "/mnt").s3Connections())
        .isEqualTo(
            Math.max(S3Options.DEFAULT_MAX_CONNECTIONS, MountConfig.DEFAULT_MAX_FETCHES + 64));
    assertThat(parse("s3://b", "/mnt", "--max-fetches", "512").s3Connections()).isEqualTo(576);
    assertThat(parse("s3://b", "/mnt", "--max-fetches", "8").s3Connections())
        .isEqualTo(S3Options.DEFAULT_MAX_CONNECTIONS);
    assertThat(parse("s3://b", "/mnt", "--max-fetches", "4096").s3Connections()).isEqualTo(4096);
    assertThat(
            parse("s3://b", "/mnt", "--max-fetches", "512", "--s3-connections", "100")
                .s3Connections())
        .isEqualTo(100);
  }

  @Test
  void maxFetches_setsTheFetchPermitsAndThePrefetchThreads() {
    MountConfig c = MountConfig.builder("/src", java.nio.file.Path.of("/mnt")).fetches(300).build();
    assertThat(c.maxFetches()).isEqualTo(300);
    assertThat(c.prefetchThreads()).isEqualTo(300);
    MountConfig d = MountConfig.builder("/src", java.nio.file.Path.of("/mnt")).build();
    assertThat(d.maxFetches()).isEqualTo(MountConfig.DEFAULT_MAX_FETCHES);
    assertThat(d.prefetchThreads()).isEqualTo(MountConfig.DEFAULT_MAX_FETCHES);
  }

  @Test
  void writeQueue_auto_isAThirtySecondOfMemory_atMostAnEighthOfTheHeap_within128MAnd512M() {
    long g = 1L << 30;
    long m = 1L << 20;
    assertThat(MountConfig.autoWriteQueueBytes(24 * g, 6 * g)).isEqualTo(512 * m);
    assertThat(MountConfig.autoWriteQueueBytes(8 * g, 2 * g)).isEqualTo(256 * m);
    assertThat(MountConfig.autoWriteQueueBytes(2 * g, 512 * m)).isEqualTo(128 * m);
    assertThat(MountConfig.autoWriteQueueBytes(64 * g, 3 * g)).isEqualTo(384 * m); // the heap's
    assertThat(MountConfig.autoWriteQueueBytes(0, 4 * g)).isEqualTo(128 * m); // memory unknown
    assertThat(parse("s3://b", "/mnt").writeQueueBytes())
        .isEqualTo(MountConfig.autoWriteQueueBytes())
        .isBetween(128 * m, 512 * m);
    assertThat(parse("s3://b", "/mnt", "--write-queue", "64M").writeQueueBytes()).isEqualTo(64 * m);
    for (String bad : new String[] {"0", "10%", "lots"}) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> parse("s3://b", "/mnt", "--write-queue", bad).writeQueueBytes())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--write-queue must be")
          .hasMessageContaining("'" + bad + "'");
    }
  }

  @Test
  void blockSize_isAPowerOfTwoFrom1MTo16M_8MByDefault() {
    assertThat(MountConfig.parseBlockSize(parse("s3://b", "/mnt").blockSize)).isEqualTo(8 << 20);
    assertThat(MountConfig.parseBlockSize(parse("s3://b", "/mnt", "--block-size", "1M").blockSize))
        .isEqualTo(1 << 20);
    assertThat(MountConfig.parseBlockSize("16MiB")).isEqualTo(16 << 20);
    for (String bad : new String[] {"0", "512K", "32M", "3M", "10%", "big"}) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> MountConfig.parseBlockSize(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "--block-size must be a power of two from 1M to 16M (e.g. 8M), not '%s'", bad);
    }
  }
}
