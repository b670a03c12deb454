package org.hintfs.fs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.hintfs.fs.catalog.Catalog;
import org.junit.jupiter.api.Test;

class RamTierTest {
  private static Unit unit(int id) {
    return new Unit((Catalog) null, id, 0, 1000, false);
  }

  @Test
  void promotedEntriesTheTierEvictsAreForgotten() {
    RamTier ram = new RamTier(11_040); // ten 1,000-byte units, with their overhead
    for (int id = 0; id < 1000; id++) {
      ram.promote(unit(id), new byte[1000]);
    }
    ram.cleanUp();
    int held = 0;
    for (int id = 0; id < 1000; id++) {
      held += ram.contains(id, 0) ? 1 : 0;
    }
    assertTrue(held <= 10, "held " + held);
    assertEquals(held, ram.promotedCount(), "a mark for every entry held, none for the evicted");
  }

  @Test
  void anEvictedPromotedEntryIsForgotten() {
    RamTier ram = new RamTier(10_000);
    ram.promote(unit(7), new byte[1000]);
    ram.evict(7, 0);
    assertEquals(0, ram.promotedCount());
  }

  @Test
  void askingWhetherAnEntryIsHeldIsNotAnAccess() {
    RamTier ram = new RamTier(200_000);
    for (int id = 0; id < 50; id++) {
      ram.put(unit(id), new byte[1000]);
    }
    ram.cleanUp();
    List<Long> before = new ArrayList<>(ram.coldest(50));
    for (int round = 0; round < 20; round++) {
      for (long k : before.subList(0, 10)) {
        ram.contains((int) (k >>> 32), 0);
      }
    }
    ram.cleanUp();
    assertEquals(before, new ArrayList<>(ram.coldest(50)), "the eviction order is unchanged");
  }

  @Test
  void anEntryWeighsItsHeapNotOnlyItsBytes() {
    RamTier ram = new RamTier(100 * (256 + RamTier.ENTRY_OVERHEAD));
    for (int id = 0; id < 1000; id++) {
      ram.put(new Unit((Catalog) null, id, 0, 256, false), new byte[256]);
    }
    ram.cleanUp();
    int held = 0;
    for (int id = 0; id < 1000; id++) {
      held += ram.contains(id, 0) ? 1 : 0;
    }
    assertTrue(held <= 100, "held " + held + " 256-byte entries in room for 100");
  }
}
