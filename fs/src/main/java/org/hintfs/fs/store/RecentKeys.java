package org.hintfs.fs.store;

import org.hintfs.fs.catalog.Catalog;

/**
 * The disk keys of whole files used lately, by catalog id. A cached open needs its file's key
 * several times: the prefetcher's read-ahead before it, the open's own page-in advice, each READ's
 * copy out of the map; each computed it anew (the path built from the catalog, its SHA-256, the
 * version tag built and hashed). One computation now serves them all while the file's slot holds
 * it. Direct-mapped (an id's low bits pick its slot; another id taking the slot only costs a
 * recomputation), exact (a slot names its id), and its entries immutable, so a racing reader sees a
 * whole entry, never a torn one. A mount's catalog never changes, so neither does an id's key.
 */
final class RecentKeys {
  /** 16,384 slots, ~1.6 MB: far more than the files between a prefetch and its open's READs. */
  private static final int SLOTS = 1 << 14;

  private record Known(int id, CacheKey key, long versionHash) {}

  private final Catalog catalog;
  private final Known[] slots = new Known[SLOTS];

  RecentKeys(Catalog catalog) {
    this.catalog = catalog;
  }

  /** The unit of whole file {@code id} ({@code length} bytes), its key and version hash known. */
  Unit whole(int id, int length) {
    int s = id & (SLOTS - 1);
    Known k = slots[s];
    if (k != null && k.id == id) {
      return new Unit(catalog, id, 0, length, false, k.key, k.versionHash);
    }
    Unit u = new Unit(catalog, id, 0, length, false);
    slots[s] = new Known(id, u.key(), u.versionHash());
    return u;
  }
}
