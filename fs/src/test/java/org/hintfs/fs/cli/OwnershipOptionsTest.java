package org.hintfs.fs.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.hintfs.fs.fuse.Ownership;
import org.junit.jupiter.api.Test;

class OwnershipOptionsTest {
  @Test
  void theDashOForms_setTheFlags_andNeverReachLibfuse() {
    OwnershipOptions o = new OwnershipOptions();
    List<String> fuse =
        new ArrayList<>(List.of("allow_other", "uid=1000", "gid=100", "file_mode=0440", "ro"));
    o.takeFrom(fuse);
    assertThat(fuse).containsExactly("allow_other", "ro", "default_permissions");
    Ownership w = o.ownership();
    assertThat(w.ownerUid()).isEqualTo(1000);
    assertThat(w.ownerGid()).isEqualTo(100);
    assertThat(w.defaultFileMode()).isEqualTo(0440);
    assertThat(w.defaultDirMode()).isEqualTo(0550); // x wherever the file mode has r
  }

  @Test
  void defaultPermissions_onlyWhereOthersMayEnter() {
    List<String> alone = new ArrayList<>(List.of("ro"));
    new OwnershipOptions().takeFrom(alone);
    assertThat(alone).containsExactly("ro");
    List<String> root = new ArrayList<>(List.of("allow_root", "default_permissions"));
    new OwnershipOptions().takeFrom(root);
    assertThat(root).containsExactly("allow_root", "default_permissions");
  }

  @Test
  void badValues_areOneLineThatSaysWhatWouldBeRight() {
    OwnershipOptions o = new OwnershipOptions();
    o.fileMode = "0644";
    assertThatThrownBy(() -> o.takeFrom(new ArrayList<>(List.of("file_mode=0444"))))
        .hasMessage("--file-mode 0644 and -o file_mode=0444 disagree: give one of them");
    OwnershipOptions m = new OwnershipOptions();
    m.dirMode = "0999";
    assertThatThrownBy(m::ownership)
        .hasMessage(
            "--dir-mode takes permission bits in octal from 0000 to 0777 (e.g. 0444), not"
                + " '0999'");
    OwnershipOptions u = new OwnershipOptions();
    u.uid = "alice";
    assertThatThrownBy(u::ownership)
        .hasMessage("--uid takes a numeric id (e.g. 1000; see `id -u NAME`), not 'alice'");
    assertThatThrownBy(() -> new OwnershipOptions().takeFrom(new ArrayList<>(List.of("gid="))))
        .hasMessage("-o gid needs a value (gid=...)");
  }

  @Test
  void theAllowOtherLine_saysWhoReadsWhat() {
    Ownership none = new Ownership(-1, -1, -1, -1, 0, 0);
    assertThat(OwnershipOptions.allowOtherNotice(none, false, "s3://b/p"))
        .isEqualTo(
            "allow_other: files 0400, directories 0500, uid 0, gid 0: only uid 0 and root may"
                + " read s3://b/p; --file-mode 0444 --dir-mode 0555 lets every user of the node"
                + " read it, --gid GID --file-mode 0440 --dir-mode 0550 a group");
    assertThat(
            OwnershipOptions.allowOtherNotice(
                new Ownership(-1, -1, 0444, -1, 0, 0), false, "s3://b/p"))
        .endsWith("every user of this node may read all of s3://b/p");
    assertThat(
            OwnershipOptions.allowOtherNotice(
                new Ownership(-1, 100, 0440, -1, 0, 0), false, "s3://b/p"))
        .contains("the users of group 100");
    assertThat(OwnershipOptions.allowOtherNotice(none, true, "/data"))
        .contains("the source's own modes and owners");
  }
}
