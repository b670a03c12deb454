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
 * Looking a path up costs one binary search per component; no object exists per file.
 *
 * <p>Heap per file: {@code parent}, {@code nameStart}, {@code tagStart}, {@code mtimeSeconds} (4
 * bytes each), {@code size} (8) and one bit saying file or directory = 24 bytes, plus the name and
 * tag bytes themselves (see {@link #heapBytes()}). Child ranges are kept for directories only: they
 * are numbered breadth-first, so the children of the k-th directory (in id order) start where the
 * (k-1)-th's end, and one int per directory ({@code dirFirstChild}) describes every range.
 * Modification times are kept to the second (S3 lists them to the second; a local source's
 * sub-second part is dropped), unsigned, so they reach the year 2106.
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
      int[] dirFirstChild) {
    int n = parent.length;
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
   * ASCII chars {@code s[from, to)}; -1 if there is none. The children are sorted by their bytes.
   */
  private int search(int dir, byte[] key, String s, int from, int to) {
    if (!isDirectory(dir)) {
      return -1;
    }
    int k = Arrays.binarySearch(dirIds, dir);
    int lo = dirFirstChild[k];
    int hi = dirFirstChild[k + 1] - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c =
          key == null
              ? compareAscii(nameStart[mid], nameStart[mid + 1], s, from, to)
              : Arrays.compareUnsigned(
                  names, nameStart[mid], nameStart[mid + 1], key, 0, key.length);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
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
        + 4L * (dirIds.length + dirFirstChild.length)
        + names.length
        + tags.length;
  }

  private static final java.nio.charset.Charset UTF_8 = StandardCharsets.UTF_8;

  /** "HFC2": the layout with directory-only child ranges and mtimes in seconds. */
  private static final int FILE_MAGIC = 0x48464332;

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
      if (magic == FILE_MAGIC - 1) {
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
      int expected = (int) crc.getValue();
      if (names.length != namesLen || tags.length != tagsLen || in.readInt() != expected) {
        throw new java.io.IOException("damaged catalog " + file + " (checksum)");
      }
      try {
        return new Catalog(
            parent, nameStart, names, tagStart, tags, size, mtime, dirIds, dirFirstChild);
      } catch (IllegalArgumentException e) {
        throw new java.io.IOException("damaged catalog " + file + " (" + e.getMessage() + ")", e);
      }
    } catch (java.io.EOFException e) {
      throw new java.io.IOException("damaged catalog " + file + " (truncated)", e);
    }
  }
}
