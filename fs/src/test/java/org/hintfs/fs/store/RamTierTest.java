package org.hintfs.fs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
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

  /** {@code n} bytes that say which unit and which write they are: [id, gen, id ^ gen ...]. */
  private static byte[] pattern(int id, int gen, int n) {
    byte[] b = new byte[n];
    b[0] = (byte) id;
    b[1] = (byte) gen;
    for (int i = 2; i < n; i++) {
      b[i] = (byte) (id ^ gen ^ i);
    }
    return b;
  }

  @Test
  void entriesLetGo_freeTheirNativeMemory_andWhatIsHeldIsWhatTheTierHolds() {
    RamTier ram = new RamTier(10 * (1000 + RamTier.ENTRY_OVERHEAD));
    for (int id = 0; id < 1000; id++) {
      ram.put(unit(id), pattern(id, 0, 1000));
    }
    ram.cleanUp();
    int held = 0;
    for (int id = 0; id < 1000; id++) {
      if (ram.contains(id, 0)) {
        held++;
        assertArrayEquals(pattern(id, 0, 1000), ram.peek(id, 0));
      }
    }
    assertTrue(held > 0 && held <= 10, "held " + held);
    assertEquals(held * 1000L, ram.nativeBytes(), "evicted entries were freed, held ones not");
    int some = (int) (ram.coldest(1).iterator().next() >>> 32);
    ram.put(unit(some), pattern(some, 1, 500)); // replaced: the old copy is freed
    assertEquals((held - 1) * 1000L + 500, ram.nativeBytes());
    ram.evict(some, 0);
    assertEquals((held - 1) * 1000L, ram.nativeBytes());
    ram.promote(unit(5000), pattern(5000, 0, 1000));
    assertArrayEquals(pattern(5000, 0, 1000), ram.take(5000, 0));
    assertFalse(ram.contains(5000, 0), "a promoted entry leaves as its read takes it");
    assertEquals((held - 1) * 1000L, ram.nativeBytes());
    ram.clear();
    assertEquals(0, ram.nativeBytes());
    assertNull(ram.peek(0, 0));
  }

  @Test
  void memoryAReaderStillCopiesFrom_isFreedByThatReader_notUnderIt() {
    AtomicLong held = new AtomicLong();
    NativeBytes e = NativeBytes.copyOf(pattern(3, 0, 4096), held);
    assertTrue(e.acquire(), "a reader starts copying");
    e.release(); // the tier lets the entry go meanwhile
    assertTrue(e.live());
    assertEquals(4096, held.get(), "not freed under the reader");
    assertArrayEquals(pattern(3, 0, 4096), e.copy());
    e.release(); // the reader is done: the last reference
    assertFalse(e.live());
    assertEquals(0, held.get());
    assertNull(e.copy(), "a reader that comes later gets a miss");
    assertFalse(e.acquire());
  }

  @Test
  void readersRacingEvictionsAndReplacements_getTheBytesOfOneWrite_orAMiss() throws Exception {
    int units = 8;
    int size = 64 * 1024;
    RamTier ram = new RamTier(4L * (size + RamTier.ENTRY_OVERHEAD)); // room for half the units
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<long[]>> readers = new ArrayList<>();
      Future<?> writer =
          pool.submit(
              () -> {
                for (int gen = 0; gen < 20_000; gen++) {
                  int id = gen % units;
                  if (gen % 3 == 0) {
                    ram.evict(id, 0);
                  } else {
                    ram.put(unit(id), pattern(id, gen, size));
                  }
                }
                return null;
              });
      for (int r = 0; r < 3; r++) {
        readers.add(
            pool.submit(
                () -> {
                  long hits = 0;
                  long misses = 0;
                  while (!writer.isDone()) {
                    for (int id = 0; id < units; id++) {
                      byte[] b = ram.peek(id, 0);
                      if (b == null) {
                        misses++;
                        continue;
                      }
                      assertEquals(size, b.length);
                      assertArrayEquals(pattern(id, b[1] & 0xff, size), b, "unit " + id);
                      hits++;
                    }
                  }
                  return new long[] {hits, misses};
                }));
      }
      writer.get();
      long hits = 0;
      for (Future<long[]> f : readers) {
        hits += f.get()[0];
      }
      assertTrue(hits > 0, "the readers found entries to copy");
    } finally {
      pool.shutdownNow();
    }
    ram.clear();
    assertEquals(0, ram.nativeBytes(), "every copy freed once readers and tier let go");
  }
}
