package org.hintfs.fs.catalog;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An immutable tree of the dataset's files and directories in primitive arrays.
 *
 * <p>Layout: entries are numbered breadth-first, so the children of every directory occupy one
 * contiguous id range, sorted by the UTF-8 bytes of their names (which is Unicode code-point order,
 * the order Python's {@code sorted()} uses). Entry 0 is the root. Names and version tags live in
 * two byte pools indexed by id, so a name is {@code names[nameStart[id] .. nameStart[id + 1])}.
 * Looking a path up costs one probe of a hash table per component ({@code byName}: the parent and
 * the name's bytes, open addressing); no object exists per file. A binary search among a
 * directory's children took ~11 steps at ImageNet's 1,281 per class, each a cache miss or two in
 * arrays of megabytes: 9% of the FUSE threads' CPU over a cached pass, every open and getattr.
 *
 * <p>Heap per file: {@code parent}, {@code nameStart}, {@code tagStart}, {@code mtimeSeconds} (4
 * bytes each), {@code size} (8) and one bit saying file or directory = 24 bytes, plus the name and
 * tag bytes themselves, and the lookup table's 4 bytes per slot at three quarters full or less (4-8
 * bytes per entry; see {@link #heapBytes()}). Child ranges are kept for directories only: they are
 * numbered breadth-first, so the children of the k-th directory (in id order) start where the
 * (k-1)-th's end, and one int per directory ({@code dirFirstChild}) describes every range.
 * Modification times are kept to the second (S3 lists them to the second; a local source's
 * sub-second part is dropped), unsigned, so they reach the year 2106. A source that keeps modes and
 * owners (a local or NFS directory) adds 4 bytes per entry ({@link Owners}).
 */
public final class Catalog implements org.hintfs.policy.DirectoryTree {
  /** Id of the root directory. */
  public static final int ROOT = 0;

  private final int[] parent;
  private final int[] nameStart;
  private final byte[] names;
  private final int[] tagStart;
  private final byte[] tags;
  private final long[] size;
  private final int[] mtimeSeconds; // unsigned
  private final long[] isDir; // one bit per entry
  private final int[] dirIds; // the directories' ids, ascending
  private final int[] dirFirstChild; // per directory, its first child; then the entry count
  private final Owners owners; // null: the source keeps no modes or owners

  /**
   * Open addressing by {@link #hash} of (parent, name): each slot 0 (empty) or an entry's id in its
   * low bits ({@code idMask}) and the hash's high bits above them, so a probe that cannot match is
   * told without reading the entry's parent or name. The root (id 0) is never in it.
   */
  private final int[] byName;

  private final int idMask;
  private final int fileCount;
  private final long totalBytes;

  /**
   * @param dirIds the directories' ids in ascending order (the root first)
   * @param dirFirstChild for the k-th directory the id of its first child, then (at index {@code
   *     dirIds.length}) the number of entries: the k-th directory's children are {@code
   *     dirFirstChild[k] .. dirFirstChild[k + 1]}
   * @throws IllegalArgumentException if the directory arrays do not describe breadth-first ranges
   */
  Catalog(
      int[] parent,
      int[] nameStart,
      byte[] names,
      int[] tagStart,
      byte[] tags,
      long[] size,
      int[] mtimeSeconds,
      int[] dirIds,
      int[] dirFirstChild,
      Owners owners) {
    int n = parent.length;
    if (owners != null && owners.entryCount() != n) {
      throw new IllegalArgumentException("owners for " + owners.entryCount() + " of " + n);
    }
    if (dirIds.length == 0
        || dirIds[0] != ROOT
        || dirFirstChild.length != dirIds.length + 1
        || dirFirstChild[dirIds.length] != n) {
      throw new IllegalArgumentException("directory ranges do not cover " + n + " entries");
    }
    long[] bits = new long[(n + 63) >>> 6];
    for (int k = 0; k < dirIds.length; k++) {
      int d = dirIds[k];
      if (d < 0 || d >= n || (k > 0 && d <= dirIds[k - 1])) {
        throw new IllegalArgumentException("directory ids out of order at " + k);
      }
      if (dirFirstChild[k] < 1 || dirFirstChild[k] > dirFirstChild[k + 1]) {
        throw new IllegalArgumentException("directory ranges out of order at " + k);
      }
      bits[d >>> 6] |= 1L << d;
    }
    this.parent = parent;
    this.nameStart = nameStart;
    this.names = names;
    this.tagStart = tagStart;
    this.tags = tags;
    this.size = size;
    this.mtimeSeconds = mtimeSeconds;
    this.isDir = bits;
    this.dirIds = dirIds;
    this.dirFirstChild = dirFirstChild;
    this.owners = owners;
    int idBits = 32 - Integer.numberOfLeadingZeros(n);
    this.idMask = idBits >= 32 ? -1 : (1 << idBits) - 1;
    int cap = 2;
    while (cap < (1 << 30) && (long) cap * 3 < 4L * (n - 1)) {
      cap <<= 1;
    }
    this.byName = new int[cap];
    for (int id = 1; id < n; id++) {
      int h = hash(parent[id], names, nameStart[id], nameStart[id + 1]);
      int i = h & (cap - 1);
      while (byName[i] != 0) {
        i = (i + 1) & (cap - 1);
      }
      byName[i] = (h & ~idMask) | id;
    }
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      if (!isDirectory(i)) {
        bytes += size[i];
      }
    }
    this.fileCount = n - dirIds.length;
    this.totalBytes = bytes;
  }

  /** Seconds since the epoch as the catalog keeps them: unsigned 32 bits, clamped. */
  static int toSeconds(long millis) {
    long s = Math.floorDiv(millis, 1000);
    return (int) Math.max(0, Math.min(0xFFFF_FFFFL, s));
  }

  /** Number of entries, directories and the root included. */
  public int entryCount() {
    return parent.length;
  }

  /** Number of regular files. */
  public int fileCount() {
    return fileCount;
  }

  /** Number of directories, the root included. */
  public int directoryCount() {
    return parent.length - fileCount;
  }

  /** Sum of all file sizes. */
  public long totalBytes() {
    return totalBytes;
  }

  /** True for directories. */
  @Override
  public boolean isDirectory(int id) {
    return (isDir[id >>> 6] & (1L << id)) != 0;
  }

  /** File size in bytes (0 for directories). */
  public long size(int id) {
    return size[id];
  }

  /** Modification time as listed, to the second (the milliseconds are 0). */
  public long mtimeMillis(int id) {
    return Integer.toUnsignedLong(mtimeSeconds[id]) * 1000;
  }

  /**
   * The modes and owners the source keeps for its entries (a local or NFS directory's), or null
   * when it keeps none (an object store).
   */
  public Owners owners() {
    return owners;
  }

  /** The parent's id (the root is its own parent). */
  public int parent(int id) {
    return parent[id];
  }

  /** Number of children of a directory. */
  @Override
  public int childCount(int id) {
    if (!isDirectory(id)) {
      return 0;
    }
    int k = Arrays.binarySearch(dirIds, id);
    return dirFirstChild[k + 1] - dirFirstChild[k];
  }

  /** Id of the {@code i}-th child (in name order) of a directory. */
  @Override
  public int child(int dir, int i) {
    return dirFirstChild[Arrays.binarySearch(dirIds, dir)] + i;
  }

  /** The entry's own name ("" for the root). */
  @Override
  public String name(int id) {
    return new String(names, nameStart[id], nameStart[id + 1] - nameStart[id], UTF_8);
  }

  /**
   * A fingerprint of the listing: every entry's name, parent, size and version tag, hashed. Two
   * catalogs with the same fingerprint give every path the same id (members of a cluster rely on it
   * when they name samples by id).
   */
  public String fingerprint() {
    long h = 1125899906842597L;
    for (int id = 0; id < entryCount(); id++) {
      h = 31 * h + parent(id);
      h = 31 * h + (isDirectory(id) ? -1 : size(id));
      h = 31 * h + name(id).hashCode();
      h = 31 * h + versionTag(id).hashCode();
    }
    return entryCount() + " entries, listing " + Long.toHexString(h);
  }

  /** The version tag the source listed for a file. */
  public String versionTag(int id) {
    return new String(tags, tagStart[id], tagStart[id + 1] - tagStart[id], UTF_8);
  }

  /** The path relative to the dataset root, '/'-separated ("" for the root). */
  public String path(int id) {
    if (id == ROOT) {
      return "";
    }
    int depth = 0;
    for (int i = id; i != ROOT; i = parent[i]) {
      depth++;
    }
    int[] chain = new int[depth];
    for (int i = id, k = depth - 1; i != ROOT; i = parent[i], k--) {
      chain[k] = i;
    }
    StringBuilder sb = new StringBuilder();
    for (int k = 0; k < depth; k++) {
      if (k > 0) {
        sb.append('/');
      }
      sb.append(name(chain[k]));
    }
    return sb.toString();
  }

  /**
   * Resolves a path such as {@code /train/cat/1.jpg} or {@code train/cat/1.jpg}.
   *
   * @return the entry id, or -1 if there is no such entry
   */
  public int lookup(String path) {
    int id = ROOT;
    int start = 0;
    int len = path.length();
    while (start < len) {
      int slash = path.indexOf('/', start);
      int end = slash < 0 ? len : slash;
      if (end > start) {
        id = childNamed(id, path, start, end);
        if (id < 0) {
          return -1;
        }
      }
      start = end + 1;
    }
    return id;
  }

  /**
   * The child of {@code dir} named by {@code path}'s chars {@code [from, to)}, or -1. Every open
   * and getattr resolves its path here: an ASCII name (a dataset's usual one) is compared char by
   * char with the stored UTF-8 bytes, which for ASCII are the same; no substring and no encoding is
   * made (they were most of a lookup's cost). Any other name is encoded and looked up as before.
   */
  private int childNamed(int dir, String path, int from, int to) {
    for (int i = from; i < to; i++) {
      if (path.charAt(i) >= 0x80) {
        return childNamed(dir, path.substring(from, to));
      }
    }
    return search(dir, null, path, from, to);
  }

  /**
   * The child of {@code dir} whose name is {@code key} (UTF-8), or, with {@code key} null, the
   * ASCII chars {@code s[from, to)}; -1 if there is none.
   */
  private int search(int dir, byte[] key, String s, int from, int to) {
    int h = key == null ? hashAscii(dir, s, from, to) : hash(dir, key, 0, key.length);
    int mask = byName.length - 1;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int e = byName[i];
      if (e == 0) {
        return -1;
      }
      int id = e & idMask;
      if ((e & ~idMask) == (h & ~idMask)
          && parent[id] == dir
          && (key == null
              ? compareAscii(nameStart[id], nameStart[id + 1], s, from, to) == 0
              : Arrays.equals(names, nameStart[id], nameStart[id + 1], key, 0, key.length))) {
        return id;
      }
    }
  }

  /** The hash of a name's UTF-8 bytes {@code b[from, to)} under directory {@code dir}. */
  private static int hash(int dir, byte[] b, int from, int to) {
    int h = dir * 0x9E3779B9;
    for (int i = from; i < to; i++) {
      h = 31 * h + (b[i] & 0xFF);
    }
    return mix(h);
  }

  /** {@link #hash} of ASCII chars {@code s[from, to)}: for ASCII a char is its UTF-8 byte. */
  private static int hashAscii(int dir, String s, int from, int to) {
    int h = dir * 0x9E3779B9;
    for (int i = from; i < to; i++) {
      h = 31 * h + s.charAt(i);
    }
    return mix(h);
  }

  /** Murmur3's finalizer: every bit of the result depends on every bit of {@code h}. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85EBCA6B;
    h ^= h >>> 13;
    h *= 0xC2B2AE35;
    return h ^ (h >>> 16);
  }

  /**
   * {@code names[a, b)} against the ASCII chars {@code s[from, to)}, as {@link
   * Arrays#compareUnsigned(byte[], int, int, byte[], int, int)} compares their UTF-8 bytes.
   */
  private int compareAscii(int a, int b, String s, int from, int to) {
    int n = Math.min(b - a, to - from);
    for (int i = 0; i < n; i++) {
      int x = names[a + i] & 0xFF;
      int y = s.charAt(from + i);
      if (x != y) {
        return x - y;
      }
    }
    return (b - a) - (to - from);
  }

  /** The child of {@code dir} called {@code name}, or -1. */
  public int childNamed(int dir, String name) {
    return isDirectory(dir) ? search(dir, name.getBytes(UTF_8), null, 0, 0) : -1;
  }

  /** Bytes of heap the arrays hold (array headers ignored). */
  public long heapBytes() {
    long n = parent.length;
    return n * (4 + 4 + 4 + 4 + 8)
        + 8
        + 8L * isDir.length
        + 4L * (dirIds.length + dirFirstChild.length + byName.length)
        + names.length
        + tags.length
        + (owners == null ? 0 : owners.heapBytes());
  }

  private static final java.nio.charset.Charset UTF_8 = StandardCharsets.UTF_8;

  /** "HFC3": directory-only child ranges, mtimes in seconds, and the entries' owners. */
  private static final int FILE_MAGIC = 0x48464333;

  /**
   * Writes the catalog to {@code file} atomically (a temporary file renamed over it), tagged with
   * the source it lists and closed by a CRC32C of everything before it.
   */
  public void save(java.nio.file.Path file, String source) throws java.io.IOException {
    java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    try (java.io.DataOutputStream out =
        new java.io.DataOutputStream(
            new java.util.zip.CheckedOutputStream(
                new java.io.BufferedOutputStream(java.nio.file.Files.newOutputStream(tmp), 1 << 16),
                crc))) {
      out.writeInt(FILE_MAGIC);
      out.writeUTF(source);
      int n = parent.length;
      out.writeInt(n);
      out.writeInt(dirIds.length);
      out.writeInt(names.length);
      out.writeInt(tags.length);
      for (int i = 0; i < n; i++) {
        out.writeInt(parent[i]);
        out.writeLong(size[i]);
        out.writeInt(mtimeSeconds[i]);
      }
      for (int i = 0; i <= n; i++) {
        out.writeInt(nameStart[i]);
        out.writeInt(tagStart[i]);
      }
      for (int k = 0; k < dirIds.length; k++) {
        out.writeInt(dirIds[k]);
      }
      for (int k = 0; k <= dirIds.length; k++) {
        out.writeInt(dirFirstChild[k]);
      }
      out.write(names);
      out.write(tags);
      int classes = owners == null ? 0 : owners.classCount();
      out.writeInt(classes);
      for (int c = 0; c < classes; c++) {
        out.writeInt(owners.classMode(c));
        out.writeInt(owners.classUid(c));
        out.writeInt(owners.classGid(c));
      }
      for (int i = 0; classes > 0 && i < n; i++) {
        out.writeInt(owners.classOf(i));
      }
      out.flush();
      out.writeInt((int) crc.getValue());
    }
    java.nio.file.Files.move(
        tmp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * Reads a catalog saved by {@link #save} for {@code source}.
   *
   * @throws java.io.IOException if the file is missing, damaged, or lists another source
   */
  public static Catalog load(java.nio.file.Path file, String source) throws java.io.IOException {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    try (java.io.DataInputStream in =
        new java.io.DataInputStream(
            new java.util.zip.CheckedInputStream(
                new java.io.BufferedInputStream(java.nio.file.Files.newInputStream(file), 1 << 16),
                crc))) {
      int magic = in.readInt();
      if ((magic & ~0xFF) == (FILE_MAGIC & ~0xFF) && magic < FILE_MAGIC) { // "HFC1", "HFC2"
        throw new java.io.IOException("catalog " + file + " was saved by an older hintfs");
      }
      if (magic != FILE_MAGIC) {
        throw new java.io.IOException("not a hintfs catalog: " + file);
      }
      String saved = in.readUTF();
      if (!saved.equals(source)) {
        throw new java.io.IOException("catalog " + file + " lists " + saved + ", not " + source);
      }
      int n = in.readInt();
      int dirs = in.readInt();
      int namesLen = in.readInt();
      int tagsLen = in.readInt();
      if (n < 1 || dirs < 1 || dirs > n || namesLen < 0 || tagsLen < 0) {
        throw new java.io.IOException("damaged catalog " + file);
      }
      int[] parent = new int[n];
      long[] size = new long[n];
      int[] mtime = new int[n];
      int[] nameStart = new int[n + 1];
      int[] tagStart = new int[n + 1];
      int[] dirIds = new int[dirs];
      int[] dirFirstChild = new int[dirs + 1];
      for (int i = 0; i < n; i++) {
        parent[i] = in.readInt();
        size[i] = in.readLong();
        mtime[i] = in.readInt();
      }
      for (int i = 0; i <= n; i++) {
        nameStart[i] = in.readInt();
        tagStart[i] = in.readInt();
      }
      for (int k = 0; k < dirs; k++) {
        dirIds[k] = in.readInt();
      }
      for (int k = 0; k <= dirs; k++) {
        dirFirstChild[k] = in.readInt();
      }
      byte[] names = in.readNBytes(namesLen);
      byte[] tags = in.readNBytes(tagsLen);
      int classes = in.readInt();
      if (classes < 0 || classes > n) {
        throw new java.io.IOException("damaged catalog " + file);
      }
      Owners owners = null;
      if (classes > 0) {
        int[] mode = new int[classes];
        int[] uid = new int[classes];
        int[] gid = new int[classes];
        for (int c = 0; c < classes; c++) {
          mode[c] = in.readInt();
          uid[c] = in.readInt();
          gid[c] = in.readInt();
        }
        int[] classOf = new int[n];
        for (int i = 0; i < n; i++) {
          classOf[i] = in.readInt();
        }
        owners = new Owners(classOf, mode, uid, gid);
      }
      int expected = (int) crc.getValue();
      if (names.length != namesLen || tags.length != tagsLen || in.readInt() != expected) {
        throw new java.io.IOException("damaged catalog " + file + " (checksum)");
      }
      try {
        return new Catalog(
            parent, nameStart, names, tagStart, tags, size, mtime, dirIds, dirFirstChild, owners);
      } catch (IllegalArgumentException e) {
        throw new java.io.IOException("damaged catalog " + file + " (" + e.getMessage() + ")", e);
      }
    } catch (java.io.EOFException e) {
      throw new java.io.IOException("damaged catalog " + file + " (truncated)", e);
    }
  }
}
