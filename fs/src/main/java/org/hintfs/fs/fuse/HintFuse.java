package org.hintfs.fs.fuse;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.provider.ClosureManager;
import jnr.ffi.types.dev_t;
import jnr.ffi.types.gid_t;
import jnr.ffi.types.mode_t;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import jnr.ffi.types.uid_t;
import org.hintfs.fs.Errno;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.serve.HintFs;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * jnr-fuse callbacks over {@link HintFs}. Each callback is one try block: the work is delegated,
 * every Throwable is mapped to an errno by the filesystem's {@link org.hintfs.fs.serve.ErrorTable}.
 *
 * <p>Every write-type operation answers EROFS. The mount is not {@code -o ro}, so that files under
 * {@code /.hintfs} can take writes later.
 */
public final class HintFuse extends FuseStubFS {
  private static final int O_ACCMODE = 3;
  private static final int O_RDONLY = 0;
  private static final int W_OK = 2;
  private static final long BLOCK = 4096;

  /** What Python's io layer sizes its buffer by: one full libfuse2 read (128 KiB). */
  private static final long PREFERRED_IO_SIZE = 128 * 1024;

  private final HintFs fs;
  private final Ownership ownership;

  /**
   * One {@link FileStat} and one {@link FuseFileInfo} per FUSE thread, pointed at each call's
   * memory. jnr-fuse's own callbacks make new ones for every call (some 20 objects each, a few
   * percent of the FUSE threads' CPU on cached opens); a callback is never entered twice at once on
   * one thread, so one of each per thread serves every call.
   */
  private static final ThreadLocal<FileStat> STATS = new ThreadLocal<>();

  private static final ThreadLocal<FuseFileInfo> INFOS = new ThreadLocal<>();

  /** An adapter over a filesystem service, its entries the source's or the mounting user's. */
  public HintFuse(HintFs fs) {
    this(fs, Ownership.ofMountingUser());
  }

  /** An adapter over a filesystem service, showing modes and owners as {@code ownership} says. */
  public HintFuse(HintFs fs, Ownership ownership) {
    this.fs = fs;
    this.ownership = ownership;
    // The callbacks of every cached open (getattr, open, read, release) with reused structs.
    fuseOperations.getattr.set((path, stbuf) -> getattr(path, stat(stbuf)));
    fuseOperations.open.set((path, fi) -> open(path, info(fi)));
    byHandleRead =
        (path, buf, size, off, fi) -> {
          try {
            return fs.read(info(fi).fh.get(), off, (int) size, new ReplySink(buf));
          } catch (Throwable t) {
            return fail("read", path.getString(0), t);
          }
        };
    byHandleRelease =
        (path, fi) -> {
          try {
            release(info(fi));
            return 0;
          } catch (Throwable t) {
            return fail("release", path.getString(0), t);
          }
        };
    ClosureManager closures = fuseOperations.getRuntime().getClosureManager();
    readCallback = closures.getClosurePointer(ByHandleRead.class, byHandleRead);
    releaseCallback = closures.getClosurePointer(ByHandleRelease.class, byHandleRelease);
    fuseOperations.read.getMemory().putPointer(fuseOperations.read.offset(), readCallback);
    fuseOperations.release.getMemory().putPointer(fuseOperations.release.offset(), releaseCallback);
  }

  /**
   * libfuse's read, its path left undecoded: a read is served by its handle, and jnr-fuse's own
   * callback decoded every READ's path into a String (2% of the daemon's CPU over a large file's
   * first read: 8,192 READs a GiB). The path is decoded only for an error's record.
   */
  public interface ByHandleRead {
    @Delegate
    int read(Pointer path, Pointer buf, @size_t long size, @off_t long offset, Pointer fi);
  }

  /** libfuse's release, its path left undecoded (as {@link ByHandleRead}). */
  public interface ByHandleRelease {
    @Delegate
    int release(Pointer path, Pointer fi);
  }

  /** Held here: libfuse calls them for as long as the mount lives. */
  final ByHandleRead byHandleRead;

  final ByHandleRelease byHandleRelease;

  private final Pointer readCallback;
  private final Pointer releaseCallback;

  /** True if libfuse's operations hold the by-handle read and release. */
  boolean servesByHandle() {
    Pointer ops = fuseOperations.read.getMemory();
    return ops.getAddress(fuseOperations.read.offset()) == readCallback.address()
        && ops.getAddress(fuseOperations.release.offset()) == releaseCallback.address();
  }

  /** This thread's {@link FileStat}, over {@code memory}. */
  static FileStat stat(Pointer memory) {
    return reuse(STATS, memory, FileStat::of);
  }

  /** This thread's {@link FuseFileInfo}, over {@code memory}. */
  static FuseFileInfo info(Pointer memory) {
    return reuse(INFOS, memory, FuseFileInfo::of);
  }

  /**
   * This thread's struct of its kind, pointed at {@code memory}; made on the thread's first call.
   */
  private static <T extends Struct> T reuse(
      ThreadLocal<T> mine, Pointer memory, java.util.function.Function<Pointer, T> make) {
    T s = mine.get();
    if (s == null) {
      s = make.apply(memory);
      mine.set(s);
    } else {
      s.useMemory(memory);
    }
    return s;
  }

  /**
   * Mounts and serves requests on Java threads until unmounted: {@code idleThreads} wait for
   * requests, and more start while all are busy, up to {@code maxThreads} (see {@link
   * JavaThreadLoop} for why not libfuse's own threads, and how the pool grows).
   */
  public void serve(
      java.nio.file.Path mountpoint, String[] fuseArgs, int idleThreads, int maxThreads)
      throws InterruptedException {
    JavaThreadLoop.run(
        Struct.getMemory(fuseOperations),
        Struct.size(fuseOperations),
        mountpoint,
        fuseArgs,
        idleThreads,
        maxThreads,
        fs::servedBy);
  }

  @Override
  public int getattr(String path, FileStat stat) {
    try {
      fillStat(fs.resolve(path), stat);
      return 0;
    } catch (Throwable t) {
      return fail("getattr", path, t);
    }
  }

  /**
   * Modes and owners: a dataset entry's from {@link Ownership}; {@code /.hintfs} is the mount
   * owner's: its directory 0555, the control file 0644 (the owner writes hints), the generated
   * files 0400 (the mount's state, other jobs' stream paths among it, is the owner's to read).
   */
  private void fillStat(int id, FileStat stat) {
    Catalog c = fs.catalog();
    boolean dir = fs.isDirectory(id);
    int mode;
    if (id >= 0) {
      mode = ownership.mode(c.owners(), id, dir);
      stat.st_uid.set(ownership.uid(c.owners(), id));
      stat.st_gid.set(ownership.gid(c.owners(), id));
    } else {
      mode = dir ? 0555 : id == org.hintfs.fs.virtual.VirtualFile.CONTROL.id() ? 0644 : 0400;
      stat.st_uid.set(ownership.ownerUid());
      stat.st_gid.set(ownership.ownerGid());
    }
    stat.st_mode.set((dir ? FileStat.S_IFDIR : FileStat.S_IFREG) | mode);
    stat.st_nlink.set(dir ? 2 : 1);
    long size = id >= 0 ? c.size(id) : 0;
    stat.st_size.set(size);
    stat.st_blocks.set((size + 511) / 512);
    stat.st_blksize.set(PREFERRED_IO_SIZE);
    long mtime = id >= 0 ? c.mtimeMillis(id) : fs.started().toEpochMilli();
    setTime(stat.st_mtim, mtime);
    setTime(stat.st_ctim, mtime);
    setTime(stat.st_atim, mtime);
  }

  private static void setTime(Timespec ts, long millis) {
    ts.tv_sec.set(Math.floorDiv(millis, 1000));
    ts.tv_nsec.set(TimeUnit.MILLISECONDS.toNanos(Math.floorMod(millis, 1000)));
  }

  @Override
  public int readdir(
      String path, Pointer buf, FuseFillDir filter, @off_t long offset, FuseFileInfo fi) {
    try {
      int dir = fs.resolve(path);
      Runtime rt = Runtime.getSystemRuntime();
      FileStat st = FileStat.of(Memory.allocateDirect(rt, Struct.size(new FileStat(rt))));
      st.st_mode.set(FileStat.S_IFDIR | 0555);
      filter.apply(buf, cString("."), Struct.getMemory(st), 0);
      filter.apply(buf, cString(".."), Struct.getMemory(st), 0);
      fs.list(
          dir,
          (id, name, isDir) -> {
            // st_mode gives the entry's d_type, so scandir().is_dir() needs no lookup.
            st.st_mode.set(isDir ? FileStat.S_IFDIR | 0555 : FileStat.S_IFREG | 0444);
            return filter.apply(buf, cString(name), Struct.getMemory(st), 0) == 0;
          });
      return 0;
    } catch (Throwable t) {
      return fail("readdir", path, t);
    }
  }

  /** UTF-8 with the terminating NUL libfuse expects (jnr-fuse's own helper uses neither). */
  private static ByteBuffer cString(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    byte[] z = new byte[b.length + 1];
    System.arraycopy(b, 0, z, 0, b.length);
    return ByteBuffer.wrap(z);
  }

  @Override
  public int open(String path, FuseFileInfo fi) {
    try {
      boolean forWrite = (fi.flags.get() & O_ACCMODE) != O_RDONLY;
      if ((forWrite || isUnderHintfs(path)) && !ownership.isOwner(getContext().uid.get())) {
        // The kernel refuses them first when it checks modes (default_permissions).
        throw new java.nio.file.AccessDeniedException(
            path, null, "only the mount's owner and root write hints or read its state");
      }
      long fh = fs.open(path, forWrite, getContext().pid.get());
      fi.fh.set(fh);
      if (fs.isDirectIo(fh)) {
        FileInfoFlags.setDirectIo(fi);
      } else {
        FileInfoFlags.setKeepCache(fi);
      }
      return 0;
    } catch (Throwable t) {
      return fail("open", path, t);
    }
  }

  private static final String HINTFS_DIR = "/" + org.hintfs.fs.virtual.VirtualFile.DIR_NAME;

  /** True for {@code /.hintfs/...}: no substring made, every open asks. */
  private static boolean isUnderHintfs(String path) {
    return path.startsWith(HINTFS_DIR)
        && (path.length() == HINTFS_DIR.length() || path.charAt(HINTFS_DIR.length()) == '/');
  }

  @Override
  public int read(
      String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
    try {
      // A read that spans two cache blocks arrives in two pieces: each goes after the last.
      return fs.read(fi.fh.get(), offset, (int) size, new ReplySink(buf));
    } catch (Throwable t) {
      return fail("read", path, t);
    }
  }

  /** Fills libfuse's reply buffer; a hit in LMDB's map is copied into it directly (one memcpy). */
  private static final class ReplySink implements HintFs.ByteSink {
    private final Pointer buf;
    private long at;

    ReplySink(Pointer buf) {
      this.buf = buf;
    }

    @Override
    public void put(byte[] src, int off, int len) {
      buf.put(at, src, off, len);
      at += len;
    }

    @Override
    public void putNative(long address, int len) {
      com.kenai.jffi.MemoryIO.getInstance().copyMemory(address, buf.address() + at, len);
      at += len;
    }
  }

  @Override
  public int release(String path, FuseFileInfo fi) {
    try {
      release(fi);
      return 0;
    } catch (Throwable t) {
      return fail("release", path, t);
    }
  }

  private void release(FuseFileInfo fi) {
    // The caller's pid matters to a control handle only (its last line is applied for it): the
    // context is not asked for on every release.
    fs.release(fi.fh.get(), () -> getContext().pid.get());
  }

  @Override
  public int statfs(String path, Statvfs st) {
    try {
      Catalog c = fs.catalog();
      st.f_bsize.set(BLOCK);
      st.f_frsize.set(BLOCK);
      st.f_blocks.set((c.totalBytes() + BLOCK - 1) / BLOCK);
      st.f_bfree.set(0);
      st.f_bavail.set(0);
      st.f_files.set(c.entryCount());
      st.f_ffree.set(0);
      st.f_favail.set(0);
      st.f_namemax.set(255);
      return 0;
    } catch (Throwable t) {
      return fail("statfs", path, t);
    }
  }

  @Override
  public int access(String path, int mask) {
    try {
      int id = fs.resolve(path);
      return (mask & W_OK) != 0 && id != org.hintfs.fs.virtual.VirtualFile.CONTROL.id()
          ? readOnly()
          : 0;
    } catch (Throwable t) {
      return fail("access", path, t);
    }
  }

  // Every write-type operation: EROFS.

  @Override
  public int mknod(String path, @mode_t long mode, @dev_t long rdev) {
    return readOnly();
  }

  @Override
  public int mkdir(String path, @mode_t long mode) {
    return readOnly();
  }

  @Override
  public int unlink(String path) {
    return readOnly();
  }

  @Override
  public int rmdir(String path) {
    return readOnly();
  }

  @Override
  public int symlink(String oldpath, String newpath) {
    return readOnly();
  }

  @Override
  public int rename(String oldpath, String newpath) {
    return readOnly();
  }

  @Override
  public int link(String oldpath, String newpath) {
    return readOnly();
  }

  @Override
  public int chmod(String path, @mode_t long mode) {
    return readOnly();
  }

  @Override
  public int chown(String path, @uid_t long uid, @gid_t long gid) {
    return readOnly();
  }

  @Override
  public int truncate(String path, @off_t long size) {
    try {
      fs.truncate(path);
      return 0;
    } catch (Throwable t) {
      return fail("truncate", path, t);
    }
  }

  @Override
  public int write(
      String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
    try {
      byte[] data = new byte[(int) size];
      buf.get(0, data, 0, data.length);
      return fs.write(fi.fh.get(), data, getContext().pid.get());
    } catch (Throwable t) {
      return fail("write", path, t);
    }
  }

  @Override
  public int create(String path, @mode_t long mode, FuseFileInfo fi) {
    return readOnly();
  }

  @Override
  public int setxattr(String path, String name, Pointer value, @size_t long size, int flags) {
    return readOnly();
  }

  @Override
  public int removexattr(String path, String name) {
    return readOnly();
  }

  @Override
  public int utimens(String path, Timespec[] timespec) {
    return readOnly();
  }

  @Override
  public int fallocate(
      String path, int mode, @off_t long off, @off_t long length, FuseFileInfo fi) {
    return readOnly();
  }

  private int readOnly() {
    fs.errors().count(Errno.EROFS);
    return -Errno.EROFS.value();
  }

  private int fail(String op, String path, Throwable t) {
    return -fs.errors().record(op, path, t).value();
  }
}
