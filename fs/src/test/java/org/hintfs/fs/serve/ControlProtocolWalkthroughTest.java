package org.hintfs.fs.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hintfs.backing.LocalDirSource;
import org.hintfs.fs.MountConfig;
import org.hintfs.fs.control.InvalidHintException;
import org.hintfs.fs.mount.Mount;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control protocol, step by step, as a training script uses it: a walkthrough meant to be read
 * top to bottom (in the manner of lmdbjava's {@code TutorialTest}). Each step writes lines to
 * {@code /.hintfs/control} exactly as a script would, and reads back what the mount made of them
 * from {@code /.hintfs/stats} and {@code /.hintfs/errors}.
 *
 * <p>No FUSE here: the mount's {@link HintFs}, which the FUSE adapter calls for every request, is
 * driven in-process. The writer's pid is this test's own, so the stream the hints start owns the
 * opens this test makes, as a rank owns its DataLoader workers' opens. {@code ControlIT} and the
 * PyTorch ITs go through a real mount.
 */
class ControlProtocolWalkthroughTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long PID = ProcessHandle.current().pid();

  @TempDir Path tmp;
  private HintFs fs;

  @AfterEach
  void close() throws Exception {
    if (fs != null) {
      fs.close();
      fs.cache().close();
    }
  }

  @Test
  void aTrainingScriptsHints_stepByStep() throws Exception {
    // Step 0. A dataset laid out as torchvision's ImageFolder expects: train/<class>/<file>.
    // Three classes of ten files: #index 0-9 are "cat", 10-19 "dog", 20-29 "fox" (sorted, as
    // torchvision sorts them).
    Path src = Files.createDirectories(tmp.resolve("src"));
    for (String cls : new String[] {"cat", "dog", "fox"}) {
      Path d = Files.createDirectories(src.resolve("train").resolve(cls));
      for (int i = 0; i < 10; i++) {
        Files.write(d.resolve(String.format("%02d.jpg", i)), (cls + i).getBytes());
      }
    }
    LocalDirSource source = new LocalDirSource(src);
    MountConfig config =
        MountConfig.defaults(src.toString(), tmp.resolve("mnt"))
            .withCache(tmp.resolve("cache"), "50%");
    fs = Mount.create(source, Mount.listCatalog(source), config);

    // Step 1. Say which directory `#index` refers to. Every later `#i` is the i-th sample of
    // ImageFolder(MOUNT/train): the mount builds torchvision's exact order from its listing.
    control("dataset train\n");
    JsonNode hints = stats().get("hints");
    assertThat(hints.get("dataset").asText()).isEqualTo("train");
    assertThat(hints.get("samples").asInt()).isEqualTo(30);
    assertThat(hints.get("classes").asInt()).isEqualTo(3);

    // Step 2. The order this rank will read in. A script with a seeded sampler sends
    // `seed 0 epoch 0 world 1 rank 0` and the mount replays torch's sampler; any other sampler
    // sends the order itself. The writer's process now owns a stream with a known order.
    control("order #21 #3 #14 #0 #29 #8\n");
    JsonNode stream = onlyStream();
    assertThat(stream.get("prediction").asText()).isEqualTo("order");
    assertThat(stream.get("known").asBoolean()).isTrue();
    assertThat(stream.get("length").asInt()).isEqualTo(6);
    assertThat(stream.get("owner_pid").asLong()).isEqualTo(PID);

    // Step 3. The trainer reads its samples. Opens by the stream's owner (or its DataLoader
    // workers, which are its children) follow the stream: its position moves along the order.
    for (String f : new String[] {"fox/01.jpg", "cat/03.jpg", "dog/04.jpg"}) {
      long fh = fs.open("/train/" + f, false, PID);
      assertThat(read(fh)).isEqualTo(f.replace("/0", "").replace(".jpg", "").getBytes());
      fs.release(fh, PID);
    }
    stream = onlyStream();
    assertThat(stream.get("opens").asInt()).isEqualTo(3);
    assertThat(stream.get("position").asInt()).isEqualTo(3);
    assertThat(stream.get("off_order_opens").asInt()).isZero();

    // Step 4. Per-sample losses of a minibatch become importance (SHADE's rank scores): the cache
    // keeps what the model finds hard. Many lines may go in one write.
    control("loss #21=2.5 #3=0.1\nloss #14=0.7\n");
    assertThat(stats().get("hints").get("scored_samples").asInt()).isEqualTo(3);

    // Step 5. Each line is judged alone. A bad line is rejected whole, with a reason: the write
    // answers EINVAL (here the exception the FUSE adapter turns into it), the reason lands in
    // /.hintfs/errors, and the other lines of the same write, before and after it, stand: #0 and
    // #1 join the three scored samples.
    assertThatThrownBy(() -> control("importance #0=1.5\nloss #99=1.0\nimportance #1=0.5\n"))
        .isInstanceOf(InvalidHintException.class);
    assertThat(virtual("errors")).contains("loss #99=1.0").contains("99");
    assertThat(stats().get("hints").get("scored_samples").asInt()).isEqualTo(5);
    assertThat(stats().get("hints").get("rejected").asInt()).isEqualTo(1);

    // Step 6. A line may arrive in pieces (Python's buffered writes split wherever they like):
    // the handle keeps the unfinished piece until its newline comes.
    long fh = fs.open("/.hintfs/control", true, PID);
    fs.write(fh, "epo".getBytes(), PID);
    fs.write(fh, "ch 1\n".getBytes(), PID);
    // Step 7. A last line with no newline is applied when the handle is closed.
    fs.write(fh, "substitution on max 0.1".getBytes(), PID);
    assertThat(stats().get("hints").get("substitution").asBoolean()).isFalse();
    fs.release(fh, PID);
    fs.hints().awaitApplied(5_000);
    assertThat(onlyStream().get("epoch").asInt()).isEqualTo(1);
    hints = stats().get("hints");
    assertThat(hints.get("substitution").asBoolean()).isTrue();
    assertThat(hints.get("substitution_max").asDouble()).isEqualTo(0.1);

    // Step 8. What is cached is listed for samplers that prefer local samples: the three files
    // read in step 3 were admitted (the cache holds half the dataset).
    fs.cache().flush();
    assertThat(virtual("cached").lines()).contains("#21", "#3", "#14");

    // Step 9. Every line was counted by kind: `hintfs status` shows the same.
    JsonNode byKind = stats().get("hints").get("accepted_by_kind");
    assertThat(byKind.get("loss").asInt()).isEqualTo(2);
    assertThat(byKind.get("importance").asInt()).isEqualTo(2); // both of step 5's
    assertThat(byKind.get("order").asInt()).isEqualTo(1);
  }

  /** Writes {@code text} to the control file as one write, then waits for it to be applied. */
  private void control(String text) throws Exception {
    HintFsReads.control(fs, text, PID);
  }

  private byte[] read(long fh) throws Exception {
    return HintFsReads.whole(fs, fh);
  }

  private String virtual(String name) throws Exception {
    long fh = fs.open("/.hintfs/" + name, false, PID);
    try {
      return new String(read(fh), StandardCharsets.UTF_8);
    } finally {
      fs.release(fh, PID);
    }
  }

  private JsonNode stats() throws Exception {
    return JSON.readTree(virtual("stats"));
  }

  private JsonNode onlyStream() throws Exception {
    JsonNode streams = stats().get("streams");
    assertThat(streams.size()).isEqualTo(1);
    return streams.get(0);
  }
}
