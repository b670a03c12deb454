package org.hintfs.policy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * What a cache holds and how much room it takes: the admission and eviction protocol shared by the
 * mount's cache and the simulator, so the two cannot drift. Pure bookkeeping, no I/O and no lock of
 * its own: the caller serialises every call (the mount under its cache's monitor).
 *
 * <p>Each sample is charged what its stored units occupy; {@code used} is their sum and never
 * exceeds {@code capacity}. The rules:
 *
 * <ul>
 *   <li>a unit larger than the whole capacity is never stored;
 *   <li>free space takes anything; when storing a sample's first unit would cost a victim, the
 *       policy is asked ({@link CachePolicy#admit}), except for a pinned or held sample;
 *   <li>room is made by evicting the policy's victims, never a pinned or held sample (passed over
 *       and given back to the policy after) and never the sample being stored.
 * </ul>
 *
 * Pinned: an admin's {@code pin}, until unpinned. Held: fetched for a reader who will come (owed
 * substitution samples), until that sample's next access.
 *
 * <p>Guests: in a cluster, a copy of a sample another member is home to. The job reads a homed
 * sample from its home's cache, so a home must not lose its samples to copies that only save this
 * node a hop: a guest is stored only in room that no homed sample needs (free space, or another
 * guest's), and room for a homed sample is taken from the guests first. A guest is staged for one
 * of this node's readers (fetched ahead from its home) and read once an epoch: guests already read
 * leave first, oldest read first, then those not read yet, oldest stored first (two lists of their
 * own: no scan of the policy's order to find one). With read guests kept last, as an LRU keeps
 * them, the samples staged for the next reads were the ones evicted (cluster-bench: local opens of
 * 0.4-0.5 in epochs 1-2).
 */
public final class Residency {
  /** What the owner does when a sample enters or leaves (its stored bytes, its listeners). */
  public interface Events {
    /** The sample's first unit is now stored. */
    void added(int sample);

    /** The sample is being evicted whole: drop its stored units. */
    void evicting(int sample);
  }

  private final long[] charged;
  private final BitSet pinned = new BitSet();
  private final BitSet held = new BitSet();

  /** Guests not read since they were stored, oldest first. */
  private final java.util.LinkedHashSet<Integer> guests = new java.util.LinkedHashSet<>();

  /** Bytes charged to guests. */
  private long guestBytes;

  /** Guests read since they were stored, oldest read first: the first to go. */
  private final java.util.LinkedHashSet<Integer> readGuests = new java.util.LinkedHashSet<>();

  private final Events events;
  private CachePolicy policy;
  private long capacity;
  private long used;

  /** An empty cache of {@code capacity} bytes over samples {@code 0..samples-1}. */
  public Residency(int samples, CachePolicy policy, long capacity, Events events) {
    this.charged = new long[samples];
    this.policy = policy;
    this.capacity = capacity;
    this.events = events;
  }

  /**
   * Stores a unit of {@code charge} bytes of {@code sample} if the rules allow.
   *
   * @return true if it is now charged (the caller stores the bytes), false if not stored
   */
  public boolean admit(int sample, long charge) {
    return admit(sample, charge, false);
  }

  /**
   * Stores a unit as {@link #admit(int, long)} does; a {@code guest} (a copy of a sample another
   * member is home to) only in free room or in room other guests give up.
   *
   * @return true if it is now charged (the caller stores the bytes), false if not stored
   */
  public boolean admit(int sample, long charge, boolean guest) {
    boolean first = charged[sample] == 0;
    if (charge > capacity) {
      return false;
    }
    boolean kept = pinned.get(sample) || held.get(sample);
    // A homed sample asks the policy only for room the guests cannot give: their room is its.
    if (first
        && used - guestBytes + charge > capacity
        && !kept
        && !guest
        && !policy.admit(sample)) {
      return false;
    }
    if (!first) {
      policy.recordAccess(sample, true); // keep the sample being filled away from the victim slot
    }
    boolean roomFromGuests = evictGuests(charge, sample);
    if (guest && !kept && first && !roomFromGuests) {
      return false; // never a homed sample's room
    }
    if (!makeRoom(charge, sample)) {
      return false;
    }
    if (first && guest && !kept) {
      guests.add(sample);
    } else if (!guest) {
      dropGuest(sample); // stored as this node's own now (its home moved here)
    }
    if (isGuest(sample)) {
      guestBytes += charge;
    }
    if (first) {
      policy.added(sample);
      events.added(sample);
    }
    charged[sample] += charge;
    used += charge;
    return true;
  }

  /**
   * Whether {@link #admit(int, long)} would store a unit of {@code charge} bytes of {@code sample}
   * now (a homed sample; nothing changes): free room takes it, else the policy decides.
   */
  public boolean wouldAdmit(int sample, long charge) {
    if (charge > capacity) {
      return false;
    }
    if (charged[sample] != 0 || pinned.get(sample) || held.get(sample)) {
      return true;
    }
    return used - guestBytes + charge <= capacity || policy.admit(sample);
  }

  /** Records a unit found stored at startup (no admission, no events). */
  public void restore(int sample, long charge) {
    if (charged[sample] == 0) {
      policy.added(sample);
    }
    charged[sample] += charge;
    used += charge;
  }

  /**
   * Takes {@code charge} bytes of {@code sample} off (a unit dropped as damaged or stale).
   *
   * @return true if nothing of the sample is left charged (it has left the cache)
   */
  public boolean release(int sample, long charge) {
    if (charged[sample] == 0) {
      return false;
    }
    long c = Math.min(charge, charged[sample]);
    if (isGuest(sample)) {
      guestBytes -= c;
    }
    charged[sample] -= c;
    used -= c;
    if (charged[sample] > 0) {
      return false;
    }
    policy.removed(sample);
    dropGuest(sample);
    return true;
  }

  private void dropGuest(int sample) {
    if (guests.remove(sample) || readGuests.remove(sample)) {
      guestBytes -= charged[sample];
    }
  }

  /** Evicts {@code sample} whole (an admin's evict, or a victim); also unpins and unholds it. */
  public void evict(int sample) {
    pinned.clear(sample);
    held.clear(sample);
    if (charged[sample] > 0) {
      remove(sample);
    }
  }

  /**
   * Evicts guests, least recently used first, until {@code need} more bytes fit or none is left.
   *
   * @return true if that much room is free now
   */
  private boolean evictGuests(long need, int keep) {
    for (var list : List.of(readGuests, guests)) {
      while (used + need > capacity) {
        int victim = -1;
        for (int g : list) {
          if (g != keep && !pinned.get(g) && !held.get(g)) {
            victim = g;
            break;
          }
        }
        if (victim < 0) {
          break;
        }
        remove(victim);
      }
    }
    return used + need <= capacity;
  }

  /** The sample, if stored as a guest, is this node's own now (its home moved here). */
  public void own(int sample) {
    dropGuest(sample);
  }

  /**
   * The sample, if stored as this node's own, is a guest now (its home moved to another member: a
   * join, a healed partition): it gives its room to homed samples and staged guests first, and
   * stays until that room is needed (its new home may ask for it). Pinned and held samples stay
   * this node's.
   *
   * @return true if it became a guest
   */
  public boolean disown(int sample) {
    if (charged[sample] == 0 || isGuest(sample) || pinned.get(sample) || held.get(sample)) {
      return false;
    }
    readGuests.add(sample);
    guestBytes += charged[sample];
    return true;
  }

  /** True if the sample is stored as a guest (a copy of another member's homed sample). */
  public boolean isGuest(int sample) {
    return guests.contains(sample) || readGuests.contains(sample);
  }

  /** How many samples are stored as guests. */
  public int guestCount() {
    return guests.size() + readGuests.size();
  }

  private void remove(int sample) {
    dropGuest(sample);
    events.evicting(sample);
    used -= charged[sample];
    charged[sample] = 0;
    policy.removed(sample);
  }

  /**
   * Evicts the policy's victims until {@code need} more bytes fit, never a pinned or held sample
   * and never {@code keep}.
   *
   * @return false if that much room cannot be made
   */
  public boolean makeRoom(long need, int keep) {
    List<Integer> passedOver = null;
    try {
      while (used + need > capacity) {
        int v = policy.victim();
        if (v < 0 || v == keep) {
          return false;
        }
        if (pinned.get(v) || held.get(v)) {
          policy.removed(v); // out of the policy while it looks further
          if (passedOver == null) {
            passedOver = new ArrayList<>();
          }
          passedOver.add(v);
          continue;
        }
        remove(v);
      }
      return true;
    } finally {
      if (passedOver != null) {
        for (int v : passedOver) {
          policy.added(v);
        }
      }
    }
  }

  /** Lowers (or raises) the capacity, evicting down to it. */
  public void setCapacity(long bytes) {
    capacity = bytes;
    makeRoom(used - capacity, -1);
  }

  /** Replaces the policy; the new one is told of every sample held now. */
  public void setPolicy(CachePolicy next) {
    for (int s = 0; s < charged.length; s++) {
      if (charged[s] > 0) {
        next.added(s);
      }
    }
    policy = next;
  }

  /** An access of {@code sample} (hit or miss): the policy hears of it, and a hold is done. */
  public void accessed(int sample, boolean hit) {
    policy.recordAccess(sample, hit);
    held.clear(sample);
    if (hit && (guests.remove(sample) || readGuests.remove(sample))) {
      readGuests.add(sample); // read: its reader has it; the first to go
    }
  }

  public CachePolicy policy() {
    return policy;
  }

  public boolean isResident(int sample) {
    return charged[sample] > 0;
  }

  public long used() {
    return used;
  }

  public long capacity() {
    return capacity;
  }

  /** The samples resident now, ascending. */
  public int[] residents() {
    int n = 0;
    for (long c : charged) {
      if (c > 0) {
        n++;
      }
    }
    int[] out = new int[n];
    for (int s = 0, k = 0; s < charged.length; s++) {
      if (charged[s] > 0) {
        out[k++] = s;
      }
    }
    return out;
  }

  public void pin(int sample) {
    pinned.set(sample);
  }

  public void unpin(int sample) {
    pinned.clear(sample);
  }

  public boolean isPinned(int sample) {
    return pinned.get(sample);
  }

  public int[] pinned() {
    return pinned.stream().toArray();
  }

  /** Holds {@code sample} until its next access: admitted and kept like a pinned one. */
  public void hold(int sample) {
    held.set(sample);
  }

  public void releaseHolds() {
    held.clear();
  }

  /** Pinned samples and their charged bytes: {samples, bytes}. */
  public long[] pinnedUsage() {
    return usage(pinned);
  }

  /** Held samples and their charged bytes: {samples, bytes}. */
  public long[] heldUsage() {
    return usage(held);
  }

  private long[] usage(BitSet set) {
    long bytes = 0;
    for (int s = set.nextSetBit(0); s >= 0; s = set.nextSetBit(s + 1)) {
      bytes += charged[s];
    }
    return new long[] {set.cardinality(), bytes};
  }

  /**
   * Checks the bookkeeping: the charges sum to {@code used}, within capacity, and the policy holds
   * exactly the resident samples.
   *
   * @throws IllegalStateException if not
   */
  public void checkInvariants() {
    policy.checkInvariants();
    long sum = 0;
    int resident = 0;
    for (long c : charged) {
      sum += c;
      if (c > 0) {
        resident++;
      }
    }
    if (sum != used || used > capacity || resident != policy.size()) {
      throw new IllegalStateException(
          policy.name()
              + ": used "
              + used
              + ", charges sum to "
              + sum
              + ", capacity "
              + capacity
              + "; "
              + resident
              + " resident but the policy holds "
              + policy.size());
    }
  }
}
