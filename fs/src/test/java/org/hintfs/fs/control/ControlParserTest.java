package org.hintfs.fs.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.catalog.Catalog;
import org.hintfs.fs.mount.Mount;
import org.hintfs.fs.stream.ProcessTree;
import org.hintfs.fs.stream.Streams;
import org.hintfs.policy.ImageFolderView;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every verb of the control protocol, parsed without a mount: what each accepted line means, and
 * the reason each rejected one gets (the text a writer finds in {@code .hintfs/errors}).
 */
class ControlParserTest {
  @TempDir Path tmp;
  ControlParser parser;
  ImageFolderView view;
  Catalog catalog;

  @BeforeEach
  void setUp() throws Exception {
    // train/c0..c2, four files each: #0..#11 in torchvision's order.
    for (int c = 0; c < 3; c++) {
      Path d = Files.createDirectories(tmp.resolve("src/train/c" + c));
      for (int i = 0; i < 4; i++) {
        Files.write(d.resolve(i + ".jpg"), new byte[] {(byte) c, (byte) i});
      }
    }
    catalog = Mount.listCatalog(new LocalDirSource(tmp.resolve("src")));
    HintState state = new HintState(catalog.entryCount(), new Streams(ProcessTree.PROC, 16, 0));
    parser = new ControlParser(catalog, state);
    view = ((Hint.Dataset) parser.parse("dataset train", null)).view();
  }

  @Test
  void acceptedLines_meanWhatTheProtocolSays() {
    assertThat(view.samples()).isEqualTo(12);
    assertThat(parser.parse("", view)).isNull();
    assertThat(parser.parse("# a comment", view)).isNull();

    Hint.Losses l = (Hint.Losses) parser.parse("loss #0=0.5 train/c1/2.jpg=2.5", view);
    assertThat(l.samples()).containsExactly(view.node(0), view.node(6));
    assertThat(l.losses()).containsExactly(0.5f, 2.5f);
    Hint.Scores sc = (Hint.Scores) parser.parse("importance #11=3", view);
    assertThat(sc.samples()).containsExactly(view.node(11));

    assertThat(parser.parse("epoch 4", view)).isEqualTo(new Hint.Epoch(4));
    assertThat(parser.parse("policy shade", view)).isEqualTo(new Hint.Policy("shade"));
    assertThat(parser.parse("trace on", view)).isEqualTo(new Hint.Trace(true));

    Hint.Seed s = (Hint.Seed) parser.parse("seed 7 epoch 2 world 4 rank 3 drop_last", view);
    assertThat(s.epoch()).isEqualTo(2);
    assertThat(s.spec().seed()).isEqualTo(7);
    assertThat(s.spec().world()).isEqualTo(4);
    assertThat(s.spec().rank()).isEqualTo(3);
    assertThat(s.spec().dropLast()).isTrue();
    assertThat(s.spec().sampler()).isEqualTo("distributed");
    Hint.Seed r = (Hint.Seed) parser.parse("seed 1 sampler random persistent_workers", view);
    assertThat(r.spec().sampler()).isEqualTo("random");
    assertThat(r.spec().persistentWorkers()).isTrue();

    Hint.Order o = (Hint.Order) parser.parse("order #3 #1", view);
    assertThat(o.ids()).containsExactly(view.node(3), view.node(1));
    assertThat(o.append()).isFalse();
    assertThat(((Hint.Order) parser.parse("order+ #2", view)).append()).isTrue();

    Hint.Similar sim = (Hint.Similar) parser.parse("similar #0 #1 #2", view);
    assertThat(sim.neighbours()).containsExactly(view.node(1), view.node(2));

    Hint.Substitution on = (Hint.Substitution) parser.parse("substitution on", view);
    assertThat(on.on()).isTrue();
    assertThat(on.rules().maxFraction()).isEqualTo(0.2);
    assertThat(on.rules().reuse()).isFalse();
    assertThat(on.rules().fromStart()).isFalse();
    Hint.Substitution all =
        (Hint.Substitution) parser.parse("substitution on from-start max 0.5 reuse", view);
    assertThat(all.rules().maxFraction()).isEqualTo(0.5);
    assertThat(all.rules().reuse()).isTrue();
    assertThat(all.rules().fromStart()).isTrue();
    assertThat(((Hint.Substitution) parser.parse("substitution off", view)).on()).isFalse();

    Hint.Admin pin = (Hint.Admin) parser.parse("pin train/c2", view);
    assertThat(pin.verb()).isEqualTo(Hint.AdminVerb.PIN);
    assertThat(pin.files()).hasSize(4);
    assertThat(((Hint.Admin) parser.parse("prefetch cancel", view)).verb())
        .isEqualTo(Hint.AdminVerb.CANCEL);
  }

  record Bad(String line, String reason) {}

  @Test
  void aPackedLine_namesTheFileItsSamplesAndTheirShuffle() {
    Hint h = parser.parse("packed train/c1/2.jpg 0 1 2 seed 1234 epoch 3 persistent_workers", view);
    assertThat(h)
        .isEqualTo(
            new Hint.Packed(
                catalog.lookup("train/c1/2.jpg"), "/train/c1/2.jpg", 0, 1, 2, 1234, 3, true));
  }

  @Test
  void rejectedLines_sayWhy() {
    List<Bad> bad =
        List.of(
            new Bad("frobnicate 1", "unknown hint 'frobnicate'"),
            new Bad("loss", "usage: loss <sample>=<value> ..."),
            new Bad("loss #1", "expected <sample>=<value>, got '#1'"),
            new Bad("loss #1=abc", "not a number: 'abc'"),
            new Bad("loss #1=NaN", "value must be finite"),
            new Bad("loss #12=1", "no sample #12: the dataset has #0 to #11"),
            new Bad("loss #x=1", "not an index: '#x'"),
            new Bad("importance no/such.jpg=1", "no such file in the mount: 'no/such.jpg'"),
            new Bad("epoch -1", "epoch must be a whole number >= 0, not '-1'"),
            new Bad("seed x", "the seed must be a 64-bit integer, not 'x'"),
            new Bad("seed 1 world 0", "world must be at least 1, not 0"),
            new Bad("seed 1 world 2 rank 2", "rank 2 is not in [0, world 2)"),
            new Bad("seed 1 sampler weighted", "sampler is distributed or random, not 'weighted'"),
            new Bad("seed 1 world 2 sampler random", "sampler random has one rank"),
            new Bad("seed 1 shuffle", "unexpected 'shuffle'"),
            new Bad("order", "usage: order <sample> ..."),
            new Bad("similar #1", "usage: similar <sample> <neighbour> ..."),
            new Bad("substitution", "usage: substitution off | substitution on"),
            new Bad("substitution maybe", "expected on or off, not 'maybe'"),
            new Bad("substitution on max 1.5", "max must be in [0, 1], not 1.5"),
            new Bad("substitution on max x", "max must be a number in [0, 1], not 'x'"),
            new Bad("substitution on max", "max needs a fraction in [0, 1]"),
            new Bad("substitution on often", "unknown substitution option 'often'"),
            new Bad("substitution off reuse", "substitution off takes no options, not 'reuse'"),
            new Bad("policy fifo", "unknown policy 'fifo'"),
            new Bad("trace sideways", "expected on or off, not 'sideways'"),
            new Bad("dataset no/such", "dataset no/such: no such directory in the mount"),
            new Bad("dataset", "usage: dataset <dir>"),
            new Bad("pin no/such", "pin no/such: no such file or directory in the mount"),
            new Bad("packed train/c0/0.jpg 0 1", "usage: packed <path> <base> <stride> <count>"),
            new Bad("packed no/such 0 1 1 seed 1", "packed no/such: no such file in the mount"),
            new Bad("packed train 0 1 1 seed 1", "packed train: no such file in the mount"),
            new Bad("packed train/c0/0.jpg 0 0 2 seed 1", "stride and count must be positive"),
            new Bad("packed train/c0/0.jpg -1 1 2 seed 1", "base must be a non-negative"),
            new Bad("packed train/c0/0.jpg 0 1 3 seed 1", "3 samples of 1 bytes from 0 end past"),
            new Bad("packed train/c0/0.jpg 0 1 2 seed x", "the seed must be a 64-bit integer"),
            new Bad("packed train/c0/0.jpg 0 1 2 seed 1 shuffle", "unexpected 'shuffle'"),
            new Bad("x".repeat(ControlParser.MAX_LINE + 1), "line longer than"));
    for (Bad b : bad) {
      assertThatThrownBy(() -> parser.parse(b.line(), view))
          .as(b.line().length() > 40 ? b.line().substring(0, 40) : b.line())
          .isInstanceOf(InvalidHintException.class)
          .hasMessageContaining(b.reason());
    }
  }

  @Test
  void samplesAndSubstitutionNeedTheDatasetFirst() {
    assertThatThrownBy(() -> parser.parse("loss #1=0.5", null))
        .hasMessageContaining("#index needs the dataset first");
    assertThatThrownBy(() -> parser.parse("seed 3", null))
        .hasMessageContaining("seed needs the dataset first");
    assertThatThrownBy(() -> parser.parse("substitution on", null))
        .hasMessageContaining("substitution needs the dataset first");
    // A path names a file with no dataset at all.
    Hint.Scores s = (Hint.Scores) parser.parse("importance train/c0/1.jpg=2", null);
    assertThat(s.samples()).hasSize(1);
  }
}
