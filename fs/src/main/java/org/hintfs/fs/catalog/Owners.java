package org.hintfs.fs.catalog;

import java.util.Arrays;

/**
 * The permission bits, owner and group a local or NFS source keeps for each catalog entry, by
 * class: a dataset's entries share a handful of (mode, uid, gid) triples, so each entry holds the
 * index of its triple (4 bytes) and the triples are held once. An entry the source gave none for
 * (an object store's, or a directory only implied by its files) is of class {@link #NONE}: the
 * mount's defaults apply to it.
 */
public final class Owners {
  /** The class of an entry with no mode or owner of its own. */
  public static final int NONE = -1;

  private final int[] classOf; // per entry
  private final int[] mode; // per class: the permission bits (07777)
  private final int[] uid;
  private final int[] gid;

  Owners(int[] classOf, int[] mode, int[] uid, int[] gid) {
    if (mode.length != uid.length || mode.length != gid.length) {
      throw new IllegalArgumentException("owner classes of unequal lengths");
    }
    for (int c : classOf) {
      if (c < NONE || c >= mode.length) {
        throw new IllegalArgumentException("owner class " + c + " out of range");
      }
    }
    this.classOf = classOf;
    this.mode = mode;
    this.uid = uid;
    this.gid = gid;
  }

  /** True if the source gave entry {@code id} a mode and an owner. */
  public boolean has(int id) {
    return classOf[id] != NONE;
  }

  /** The permission bits the source keeps for {@code id} (only if {@link #has}). */
  public int mode(int id) {
    return mode[classOf[id]];
  }

  /** The owner's user id (only if {@link #has}). */
  public int uid(int id) {
    return uid[classOf[id]];
  }

  /** The owner's group id (only if {@link #has}). */
  public int gid(int id) {
    return gid[classOf[id]];
  }

  int entryCount() {
    return classOf.length;
  }

  int classCount() {
    return mode.length;
  }

  int classOf(int id) {
    return classOf[id];
  }

  int classMode(int c) {
    return mode[c];
  }

  int classUid(int c) {
    return uid[c];
  }

  int classGid(int c) {
    return gid[c];
  }

  long heapBytes() {
    return 4L * classOf.length + 12L * mode.length;
  }

  /** Collects the triples as a listing streams in. */
  static final class Classes {
    private final java.util.HashMap<Long, Integer> byKey = new java.util.HashMap<>();
    private int[] mode = new int[4];
    private int[] uid = new int[4];
    private int[] gid = new int[4];
    private int count;

    /** The class of (mode, uid, gid), made on its first use. */
    int of(int m, int u, int g) {
      // mode has 12 bits; ids that do not fit in 26 bits each fall back to a search
      long key = ((long) (m & 07777) << 52) | ((long) (u & 0x3FFFFFF) << 26) | (g & 0x3FFFFFF);
      Integer c = byKey.get(key);
      if (c != null && mode[c] == m && uid[c] == u && gid[c] == g) {
        return c;
      }
      for (int i = 0; i < count; i++) {
        if (mode[i] == m && uid[i] == u && gid[i] == g) {
          return i;
        }
      }
      if (count == mode.length) {
        mode = Arrays.copyOf(mode, count * 2);
        uid = Arrays.copyOf(uid, count * 2);
        gid = Arrays.copyOf(gid, count * 2);
      }
      mode[count] = m;
      uid[count] = u;
      gid[count] = g;
      byKey.putIfAbsent(key, count);
      return count++;
    }

    boolean isEmpty() {
      return count == 0;
    }

    /** The table for {@code classOf}, or null when no entry had an owner. */
    Owners build(int[] classOf) {
      if (count == 0) {
        return null;
      }
      return new Owners(
          classOf,
          Arrays.copyOf(mode, count),
          Arrays.copyOf(uid, count),
          Arrays.copyOf(gid, count));
    }
  }
}
