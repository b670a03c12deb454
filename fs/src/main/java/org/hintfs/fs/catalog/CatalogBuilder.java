package org.hintfs.fs.catalog;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hintfs.backing.SourceObject;

/**
 * Collects a source listing, in any order and with duplicates, and lays it out as a {@link
 * Catalog}.
 *
 * <p>Files are held in growable primitive arrays while the listing streams in; only directories
 * (thousands, not millions) are objects. {@link #build()} numbers entries breadth-first with each
 * directory's children sorted by UTF-8 name bytes.
 */
public final class CatalogBuilder {
  private static final int NO_PARENT = -1;

  /** Per-directory scratch state; directories are few, so objects are fine here. */
  private static final class Dir {
    final byte[] name;
    long mtime;
    int owner = Owners.NONE;
    final List<Dir> subdirs = new ArrayList<>();
    int[] files = new int[4];
    int fileCount;

    Dir(byte[] name) {
      this.name = name;
    }

    void addFile(int f) {
      if (fileCount == files.length) {
        files = Arrays.copyOf(files, fileCount * 2);
      }
      files[fileCount++] = f;
    }
  }

  private final Map<String, Dir> dirs = new HashMap<>();
  private final Dir root = new Dir(new byte[0]);

  private byte[] namePool = new byte[1 << 16];
  private int namePoolLen;
  private byte[] tagPool = new byte[1 << 16];
  private int tagPoolLen;
  private int[] fNameStart = new int[1024];
  private int[] fNameLen = new int[1024];
  private int[] fTagStart = new int[1024];
  private int[] fTagLen = new int[1024];
  private long[] fSize = new long[1024];
  private long[] fMtime = new long[1024];
  private int[] fOwner = new int[1024];
  private final Owners.Classes ownerClasses = new Owners.Classes();
  private int files;

  /** A builder with an empty root. */
  public CatalogBuilder() {
    dirs.put("", root);
  }

  /** Adds one listed object. If a path is listed twice, the later entry wins. */
  public CatalogBuilder add(SourceObject o) {
    String path = trimSlashes(o.path());
    int owner = o.hasOwner() ? ownerClasses.of(o.mode(), o.uid(), o.gid()) : Owners.NONE;
    if (o.directory()) {
      Dir d = dir(path);
      d.mtime = o.mtimeMillis();
      d.owner = owner;
      return this;
    }
    if (path.isEmpty()) {
      throw new IllegalArgumentException("a file cannot be the dataset root");
    }
    int slash = path.lastIndexOf('/');
    Dir parent = dir(slash < 0 ? "" : path.substring(0, slash));
    int f = files++;
    grow();
    byte[] name = path.substring(slash + 1).getBytes(StandardCharsets.UTF_8);
    fNameStart[f] = appendName(name);
    fNameLen[f] = name.length;
    parent.addFile(f);
    byte[] tag = o.versionTag().getBytes(StandardCharsets.UTF_8);
    fTagStart[f] = appendTag(tag);
    fTagLen[f] = tag.length;
    fSize[f] = o.size();
    fMtime[f] = o.mtimeMillis();
    fOwner[f] = owner;
    return this;
  }

  /** Lays the collected entries out breadth-first. */
  public Catalog build() {
    int total = files + dirs.size();
    int[] parent = new int[total];
    int[] nameStart = new int[total + 1];
    int[] tagStart = new int[total + 1];
    long[] size = new long[total];
    int[] mtime = new int[total];
    int[] owner = ownerClasses.isEmpty() ? null : new int[total];
    int[] dirIds = new int[dirs.size()];
    int[] dirFirstChild = new int[dirs.size() + 1];
    int dirsLaid = 0;
    byte[] names = new byte[namePoolLen + dirNameBytes()];
    byte[] tags = new byte[tagPoolLen];
    int namesLen = 0;
    int tagsLen = 0;

    // Breadth-first: a directory's children get consecutive ids when the directory is dequeued.
    ArrayDeque<Dir> queue = new ArrayDeque<>();
    Map<Dir, Integer> dirId = new HashMap<>();
    queue.add(root);
    dirId.put(root, 0);
    parent[0] = 0;
    mtime[0] = Catalog.toSeconds(root.mtime);
    if (owner != null) {
      owner[0] = root.owner;
    }
    nameStart[0] = 0;
    tagStart[0] = 0;
    nameStart[1] = 0;
    tagStart[1] = 0;
    int next = 1;
    while (!queue.isEmpty()) {
      Dir d = queue.poll();
      int id = dirId.get(d);
      List<Object> kids = sortedChildren(d);
      dirIds[dirsLaid] = id; // dequeued in id order: ranges follow one another
      dirFirstChild[dirsLaid++] = next;
      for (Object k : kids) {
        int cid = next++;
        parent[cid] = id;
        byte[] name;
        if (k instanceof Dir sub) {
          name = sub.name;
          mtime[cid] = Catalog.toSeconds(sub.mtime);
          if (owner != null) {
            owner[cid] = sub.owner;
          }
          dirId.put(sub, cid);
          queue.add(sub);
        } else {
          int f = (Integer) k;
          name = null;
          size[cid] = fSize[f];
          mtime[cid] = Catalog.toSeconds(fMtime[f]);
          if (owner != null) {
            owner[cid] = fOwner[f];
          }
          System.arraycopy(tagPool, fTagStart[f], tags, tagsLen, fTagLen[f]);
          tagsLen += fTagLen[f];
        }
        if (name != null) {
          System.arraycopy(name, 0, names, namesLen, name.length);
          namesLen += name.length;
        } else {
          int f = (Integer) k;
          System.arraycopy(namePool, fNameStart[f], names, namesLen, fNameLen[f]);
          namesLen += fNameLen[f];
        }
        nameStart[cid + 1] = namesLen;
        tagStart[cid + 1] = tagsLen;
      }
    }
    dirFirstChild[dirsLaid] = next;
    if (next < total) { // a path listed twice: its earlier entries took no id
      parent = Arrays.copyOf(parent, next);
      nameStart = Arrays.copyOf(nameStart, next + 1);
      tagStart = Arrays.copyOf(tagStart, next + 1);
      size = Arrays.copyOf(size, next);
      mtime = Arrays.copyOf(mtime, next);
      owner = owner == null ? null : Arrays.copyOf(owner, next);
    }
    return new Catalog(
        parent,
        nameStart,
        Arrays.copyOf(names, namesLen),
        tagStart,
        Arrays.copyOf(tags, tagsLen),
        size,
        mtime,
        dirIds,
        dirFirstChild,
        owner == null ? null : ownerClasses.build(owner));
  }

  /**
   * The children of {@code d} in name-byte order: a {@link Dir} or a file index (Integer). Among
   * entries with one name a directory wins over a file (S3 may hold both "a" and "a/b"), and of two
   * files the one listed later wins (the sort is stable).
   */
  private List<Object> sortedChildren(Dir d) {
    List<Object> kids = new ArrayList<>(d.subdirs.size() + d.fileCount);
    kids.addAll(d.subdirs);
    for (int i = 0; i < d.fileCount; i++) {
      kids.add(d.files[i]);
    }
    kids.sort(this::compareNames);
    for (int i = 1; i < kids.size(); i++) {
      if (compareNames(kids.get(i - 1), kids.get(i)) == 0) {
        kids.remove(kids.get(i - 1) instanceof Dir ? i : i - 1);
        i--;
      }
    }
    return kids;
  }

  private int compareNames(Object a, Object b) {
    byte[] aa = a instanceof Dir da ? da.name : namePool;
    int as = a instanceof Dir ? 0 : fNameStart[(Integer) a];
    int ae = a instanceof Dir ? aa.length : as + fNameLen[(Integer) a];
    byte[] bb = b instanceof Dir db ? db.name : namePool;
    int bs = b instanceof Dir ? 0 : fNameStart[(Integer) b];
    int be = b instanceof Dir ? bb.length : bs + fNameLen[(Integer) b];
    return Arrays.compareUnsigned(aa, as, ae, bb, bs, be);
  }

  private Dir dir(String path) {
    Dir d = dirs.get(path);
    if (d != null) {
      return d;
    }
    int slash = path.lastIndexOf('/');
    Dir parent = dir(slash < 0 ? "" : path.substring(0, slash));
    d = new Dir(path.substring(slash + 1).getBytes(StandardCharsets.UTF_8));
    parent.subdirs.add(d);
    dirs.put(path, d);
    return d;
  }

  private int dirNameBytes() {
    int n = 0;
    for (Dir d : dirs.values()) {
      n += d.name.length;
    }
    return n;
  }

  private int appendName(byte[] b) {
    if (namePoolLen + b.length > namePool.length) {
      namePool = Arrays.copyOf(namePool, Math.max(namePool.length * 2, namePoolLen + b.length));
    }
    System.arraycopy(b, 0, namePool, namePoolLen, b.length);
    int at = namePoolLen;
    namePoolLen += b.length;
    return at;
  }

  private int appendTag(byte[] b) {
    if (tagPoolLen + b.length > tagPool.length) {
      tagPool = Arrays.copyOf(tagPool, Math.max(tagPool.length * 2, tagPoolLen + b.length));
    }
    System.arraycopy(b, 0, tagPool, tagPoolLen, b.length);
    int at = tagPoolLen;
    tagPoolLen += b.length;
    return at;
  }

  private void grow() {
    if (files <= fSize.length) {
      return;
    }
    int cap = fSize.length * 2;
    fNameStart = Arrays.copyOf(fNameStart, cap);
    fNameLen = Arrays.copyOf(fNameLen, cap);
    fTagStart = Arrays.copyOf(fTagStart, cap);
    fTagLen = Arrays.copyOf(fTagLen, cap);
    fSize = Arrays.copyOf(fSize, cap);
    fMtime = Arrays.copyOf(fMtime, cap);
    fOwner = Arrays.copyOf(fOwner, cap);
  }

  private static String trimSlashes(String p) {
    int s = 0;
    int e = p.length();
    while (s < e && p.charAt(s) == '/') {
      s++;
    }
    while (e > s && p.charAt(e - 1) == '/') {
      e--;
    }
    return p.substring(s, e);
  }
}
