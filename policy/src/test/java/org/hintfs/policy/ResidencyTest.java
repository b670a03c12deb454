package org.hintfs.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Guests (copies of samples other members are home to) never take a homed sample's room. */
class ResidencyTest {
  final List<Integer> evicted = new ArrayList<>();

  Residency lruOf(long capacity) {
    return of(Policies.create("lru", 10), capacity);
  }

  Residency of(CachePolicy policy, long capacity) {
    return new Residency(
        10,
        policy,
        capacity,
        new Residency.Events() {
          @Override
          public void added(int sample) {}

          @Override
          public void evicting(int sample) {
            evicted.add(sample);
          }
        });
  }

  @Test
  void guestsLiveInRoomNoHomedSampleNeeds_andGiveItUpFirst() {
    Residency r = lruOf(3);
    assertThat(r.admit(0, 1, false)).isTrue();
    assertThat(r.admit(1, 1, false)).isTrue();
    assertThat(r.admit(2, 1, true)).isTrue(); // free room: a guest may have it
    assertThat(r.isGuest(2)).isTrue();
    // Full. Another guest takes the room of the least recently used guest (2), not of 0, the
    // least recently used sample of all, which LRU alone would evict.
    assertThat(r.admit(3, 1, true)).isTrue();
    assertThat(evicted).containsExactly(2);
    // A homed sample's room comes from the guests first: 3 goes, 0 and 1 stay.
    assertThat(r.admit(4, 1, false)).isTrue();
    assertThat(evicted).containsExactly(2, 3);
    // No guest left to give room: a guest is refused rather than displace a homed sample.
    assertThat(r.admit(5, 1, true)).isFalse();
    assertThat(evicted).containsExactly(2, 3);
    assertThat(r.isResident(0) && r.isResident(1) && r.isResident(4)).isTrue();
    assertThat(r.guestCount()).isZero();
    // With no guests, homed samples evict by the policy as before: LRU's victim is 0.
    assertThat(r.admit(6, 1, false)).isTrue();
    assertThat(evicted).containsExactly(2, 3, 0);
  }

  @Test
  void aHomedSampleWhoseHomeMovedAway_isAGuest_givingItsRoomFirst_butPinnedOnesStay() {
    Residency r = lruOf(3);
    r.admit(0, 1, false);
    r.admit(1, 1, false);
    r.admit(2, 1, false);
    r.pin(2);
    // The homes moved (a member came back): 1 and 2 belong to another member now.
    assertThat(r.disown(1)).isTrue();
    assertThat(r.disown(2)).isFalse(); // pinned: this node's to keep
    assertThat(r.disown(1)).isFalse(); // a guest already
    assertThat(r.disown(7)).isFalse(); // not stored
    assertThat(r.isGuest(1)).isTrue();
    assertThat(r.guestCount()).isEqualTo(1);
    // A guest staged for a reader takes the moved sample's room, not a homed sample's.
    assertThat(r.admit(3, 1, true)).isTrue();
    assertThat(evicted).containsExactly(1);
    assertThat(r.isResident(0) && r.isResident(2) && r.isResident(3)).isTrue();
  }

  @Test
  void aGuestAlreadyReadLeavesFirst_thenTheOldestUnread_andOneStoredAsHomedIsAGuestNoMore() {
    Residency r = lruOf(3);
    r.admit(0, 1, true);
    r.admit(1, 1, true);
    r.admit(2, 1, true);
    r.accessed(0, true); // 0 was staged for a reader who has read it now
    r.admit(3, 1, true); // staged for the next read: it takes 0's room, not 1's or 2's
    assertThat(evicted).containsExactly(0);
    // Its home moved here: stored again as this node's own, it is no longer a guest.
    r.own(2);
    assertThat(r.isGuest(2)).isFalse();
    r.accessed(3, true);
    r.admit(4, 1, true);
    assertThat(evicted).containsExactly(0, 3); // 3 was read; 1 still waits for its reader
    r.admit(5, 1, true);
    assertThat(evicted).containsExactly(0, 3, 1); // none read: the oldest unread goes
    assertThat(r.guestCount()).isEqualTo(2);
  }

  @Test
  void aHomedSampleTakesTheGuestsRoom_evenWhenThePolicyWouldNotEvictForIt() {
    // Clairvoyant: 0 and 1 (guests, read next) are needed before 2 (homed, read last), so the
    // policy alone would refuse 2 a victim. The guests' room is the homed sample's all the same:
    // refused, it is fetched from the source again when a member asks for it.
    long[] next = {1, 2, 9};
    NextUse clock =
        new NextUse() {
          @Override
          public long after(int sample) {
            return sample < next.length ? next[sample] : NEVER;
          }

          @Override
          public long now() {
            return 0;
          }
        };
    Residency r =
        of(
            Policies.create("clairvoyant", new PolicyContext(10, new Importance(10), clock, null)),
            2);
    assertThat(r.admit(0, 1, true)).isTrue();
    assertThat(r.admit(1, 1, true)).isTrue();
    assertThat(r.admit(2, 1, false)).isTrue();
    assertThat(evicted).containsExactly(0);
    assertThat(r.isResident(2)).isTrue();
    assertThat(r.guestCount()).isEqualTo(1);
    // The guests' bytes are counted right through evictions: with 1 gone, 3 (homed) finds the
    // room without asking the policy either, and 2 stays.
    assertThat(r.admit(3, 1, false)).isTrue();
    assertThat(evicted).containsExactly(0, 1);
    assertThat(r.guestCount()).isZero();
  }
}
