package org.hintfs.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * A dataset tree built to trip up a filesystem and torchvision's ImageFolder alike.
 *
 * <pre>
 * src/
 *   big.bin                  20 MB, for reads at odd offsets and sizes
 *   other/loop -> ..         a symlink cycle (outside train/, which ImageFolder walks)
 *   train/                   the ImageFolder root
 *     cat/  1.jpg .. 9.jpg, UPPER.JPEG, shot.PNG, with space.jpeg, .hidden.jpg,
 *           empty.jpg (0 bytes), notes.txt (skipped by ImageFolder), Ａ.jpg, 😀.jpg,
 *           alias.jpg -> 1.jpg, sub/deeper/nested.JPEG
 *     dog/  1.jpg .. 9.jpg
 *     .hidden_class/ a.jpg   (hidden directories are classes too)
 *     日本 語/ ü.jpg, é.webp
 *     linked -> ../../outside_class   (a symlinked class directory)
 * outside_class/ o1.jpg, o2.jpg
 * </pre>
 */
final class HostileTree {
  private HostileTree() {}

  /** Creates the tree under {@code base} and returns the source root ({@code base/src}). */
  static Path create(Path base, long seed) throws IOException {
    Random rnd = new Random(seed);
    Path src = Files.createDirectories(base.resolve("src"));
    Path train = Files.createDirectories(src.resolve("train"));
    Path cat = Files.createDirectories(train.resolve("cat"));
    for (int i = 1; i <= 9; i++) {
      write(cat.resolve(i + ".jpg"), rnd, 1_000 + rnd.nextInt(200_000));
      write(Files.createDirectories(train.resolve("dog")).resolve(i + ".jpg"), rnd, 50_000);
    }
    write(cat.resolve("UPPER.JPEG"), rnd, 110_000);
    write(cat.resolve("shot.PNG"), rnd, 4_097);
    write(cat.resolve("with space.jpeg"), rnd, 131_072);
    write(cat.resolve(".hidden.jpg"), rnd, 10);
    write(cat.resolve("empty.jpg"), rnd, 0);
    write(cat.resolve("notes.txt"), rnd, 300);
    write(cat.resolve("\uFF21.jpg"), rnd, 77);
    write(cat.resolve("\uD83D\uDE00.jpg"), rnd, 131_073);
    Files.createSymbolicLink(cat.resolve("alias.jpg"), Path.of("1.jpg"));
    write(Files.createDirectories(cat.resolve("sub/deeper")).resolve("nested.JPEG"), rnd, 9_999);
    write(Files.createDirectories(train.resolve(".hidden_class")).resolve("a.jpg"), rnd, 5_000);
    Path jp = Files.createDirectories(train.resolve("日本 語"));
    write(jp.resolve("ü.jpg"), rnd, 12_345);
    write(jp.resolve("é.webp"), rnd, 54_321);
    Path outside = Files.createDirectories(base.resolve("outside_class"));
    write(outside.resolve("o1.jpg"), rnd, 2_000);
    write(outside.resolve("o2.jpg"), rnd, 3_000);
    Files.createSymbolicLink(train.resolve("linked"), Path.of("../../outside_class"));
    write(src.resolve("big.bin"), rnd, 20_000_000);
    Files.createDirectories(src.resolve("other"));
    Files.createSymbolicLink(src.resolve("other/loop"), Path.of(".."));
    return src;
  }

  /**
   * A plain ImageFolder under {@code root/train}: {@code files} files of 1,000-4,999 random bytes,
   * file i in class directory {@code c(i % classes)}, named {@code i.jpg}.
   */
  static void imageFolder(Path root, int files, int classes, long seed) throws IOException {
    Random rnd = new Random(seed);
    for (int i = 0; i < files; i++) {
      Path f = root.resolve("train/c" + (i % classes) + "/" + i + ".jpg");
      Files.createDirectories(f.getParent());
      write(f, rnd, 1_000 + rnd.nextInt(4_000));
    }
  }

  static void write(Path p, Random rnd, int size) throws IOException {
    byte[] b = new byte[size];
    rnd.nextBytes(b);
    Files.write(p, b);
  }
}
