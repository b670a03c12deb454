package org.hintfs.fs.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.Errno;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.mount.Mount;
import org.hintfs.fs.serve.HintFs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import ru.serce.jnrfuse.struct.FuseFileInfo;

/**
 * The read and release callbacks libfuse calls with the path undecoded: served by the handle, the
 * path read only for an error's record, and installed in the operations libfuse is given.
 */
class HintFuseTest {
  @TempDir Path tmp;

  @Test
  void readAndReleaseGoByTheHandle_thePathOnlyNamesAnError() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("src/cls"));
    byte[] big = new byte[300_000];
    new Random(5).nextBytes(big);
    Files.write(root.resolve("big.bin"), big);
    LocalDirSource src = new LocalDirSource(tmp.resolve("src"));
    HintFs fs =
        Mount.create(
            src,
            Mount.listCatalog(src),
            MountConfig.defaults("x", tmp.resolve("mnt")).withCache(tmp.resolve("cache"), "100%"));
    HintFuse fuse = new HintFuse(fs);
    Runtime rt = Runtime.getSystemRuntime();

    // Both slots of libfuse's operations hold the by-handle callbacks, not jnr-fuse's own.
    assertThat(fuse.servesByHandle()).isTrue();

    // A path that would not decode as a file of this mount: the handle alone decides.
    Pointer path = Memory.allocateDirect(rt, 64);
    path.putString(0, "/not/the/file", 64, StandardCharsets.UTF_8);
    Pointer fiMem = Memory.allocateDirect(rt, 64);
    FuseFileInfo fi = FuseFileInfo.of(fiMem);
    fi.fh.set(fs.open("/cls/big.bin", false));
    Pointer buf = Memory.allocateDirect(rt, 131_072);
    byte[] got = new byte[big.length];
    int at = 0;
    int n;
    while ((n = fuse.byHandleRead.read(path, buf, 131_072, at, fiMem)) > 0) {
      buf.get(0, got, at, n);
      at += n;
    }
    assertThat(n).isZero();
    assertThat(at).isEqualTo(big.length);
    assertThat(got).isEqualTo(big);
    assertThat(fuse.byHandleRelease.release(path, fiMem)).isZero();
    assertThat(fs.openHandles()).isZero();

    // A handle that is gone: an errno, counted, and no crash decoding the path for the record.
    int err = fuse.byHandleRead.read(path, buf, 4096, 0, fiMem);
    assertThat(err).isNegative();
    Errno e =
        Arrays.stream(Errno.values()).filter(x -> x.value() == -err).findFirst().orElseThrow();
    assertThat(fs.errors().snapshot()).containsEntry(e.name(), 1L);
  }
}
