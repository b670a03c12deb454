package org.hintfs.policy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The index -> file -> class mapping torchvision's {@code ImageFolder} builds for a directory,
 * reproduced exactly so that a trainer's {@code #index} names the same file here.
 *
 * <p>torchvision (0.14, {@code datasets/folder.py}):
 *
 * <ul>
 *   <li>classes: {@code sorted(e.name for e in os.scandir(root) if e.is_dir())}, hidden ones
 *       included, links to directories included;
 *   <li>samples: for each class in that order, {@code for root, _, fnames in
 *       sorted(os.walk(class_dir, followlinks=True))}, then {@code sorted(fnames)}, keeping names
 *       whose lower-cased path ends with one of {@link #IMG_EXTENSIONS}.
 * </ul>
 *
 * Python sorts strings by code point (UTF-8 byte order; not Java's UTF-16 order), and {@code
 * sorted(os.walk(...))} orders directories by their whole path string, so {@code "a b"} comes
 * before {@code "a/x"} (' ' < '/'), which is not depth-first order. A class with no image is an
 * error, as in torchvision.
 */
public final class ImageFolderView {
  /** torchvision's IMG_EXTENSIONS. */
  public static final List<String> IMG_EXTENSIONS =
      List.of(".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp");

  private final String[] classNames;
  private final int[] nodeOf;
  private final int[] classOf;

  private ImageFolderView(String[] classNames, int[] nodeOf, int[] classOf) {
    this.classNames = classNames;
    this.nodeOf = nodeOf;
    this.classOf = classOf;
  }

  /**
   * Builds the view of the ImageFolder rooted at directory node {@code root}.
   *
   * @throws IllegalArgumentException if there is no class, or a class holds no image
   */
  public static ImageFolderView build(DirectoryTree tree, int root) {
    if (!tree.isDirectory(root)) {
      throw new IllegalArgumentException("not a directory");
    }
    List<int[]> classes = new ArrayList<>(); // {node}
    List<byte[]> classKeys = new ArrayList<>();
    for (int i = 0; i < tree.childCount(root); i++) {
      int c = tree.child(root, i);
      if (tree.isDirectory(c)) {
        classes.add(new int[] {c});
        classKeys.add(utf8(tree.name(c)));
      }
    }
    Integer[] order = sortedIndexes(classKeys);
    if (order.length == 0) {
      throw new IllegalArgumentException("Couldn't find any class folder");
    }
    String[] names = new String[order.length];
    int[] nodes = new int[16];
    int[] labels = new int[16];
    int n = 0;
    List<String> empty = new ArrayList<>();
    for (int k = 0; k < order.length; k++) {
      int cls = classes.get(order[k])[0];
      names[k] = tree.name(cls);
      // Every directory under the class, keyed by its path relative to the class directory.
      List<int[]> dirs = new ArrayList<>();
      List<byte[]> keys = new ArrayList<>();
      collect(tree, cls, "", dirs, keys);
      int before = n;
      for (int d : sortedIndexes(keys)) {
        int dir = dirs.get(d)[0];
        List<Integer> files = new ArrayList<>();
        List<byte[]> fileKeys = new ArrayList<>();
        for (int i = 0; i < tree.childCount(dir); i++) {
          int f = tree.child(dir, i);
          if (!tree.isDirectory(f) && isImage(tree.name(f))) {
            files.add(f);
            fileKeys.add(utf8(tree.name(f)));
          }
        }
        for (int fi : sortedIndexes(fileKeys)) {
          if (n == nodes.length) {
            nodes = Arrays.copyOf(nodes, n * 2);
            labels = Arrays.copyOf(labels, n * 2);
          }
          nodes[n] = files.get(fi);
          labels[n] = k;
          n++;
        }
      }
      if (n == before) {
        empty.add(names[k]);
      }
    }
    if (!empty.isEmpty()) {
      throw new IllegalArgumentException(
          "Found no valid file for the classes " + String.join(", ", empty));
    }
    return new ImageFolderView(names, Arrays.copyOf(nodes, n), Arrays.copyOf(labels, n));
  }

  private static void collect(
      DirectoryTree tree, int dir, String rel, List<int[]> dirs, List<byte[]> keys) {
    dirs.add(new int[] {dir});
    keys.add(utf8(rel));
    for (int i = 0; i < tree.childCount(dir); i++) {
      int c = tree.child(dir, i);
      if (tree.isDirectory(c)) {
        collect(tree, c, rel + "/" + tree.name(c), dirs, keys);
      }
    }
  }

  /** Python's {@code path.lower().endswith(IMG_EXTENSIONS)}. */
  static boolean isImage(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    for (String e : IMG_EXTENSIONS) {
      if (lower.endsWith(e)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Indexes of {@code keys} in code-point order (UTF-8 byte order). */
  private static Integer[] sortedIndexes(List<byte[]> keys) {
    Integer[] idx = new Integer[keys.size()];
    for (int i = 0; i < idx.length; i++) {
      idx[i] = i;
    }
    Arrays.sort(idx, (a, b) -> Arrays.compareUnsigned(keys.get(a), keys.get(b)));
    return idx;
  }

  /** Number of samples. */
  public int samples() {
    return nodeOf.length;
  }

  /** Number of classes. */
  public int classes() {
    return classNames.length;
  }

  /** The tree node (catalog id) of sample {@code i}. */
  public int node(int sample) {
    return nodeOf[sample];
  }

  /** The class index of sample {@code i}. */
  public int classOf(int sample) {
    return classOf[sample];
  }

  /** Each sample's class, indexed by sample. */
  public int[] classes(boolean copy) {
    return copy ? classOf.clone() : classOf;
  }

  /** A class's name (its directory name). */
  public String className(int c) {
    return classNames[c];
  }

  /** The sample of each tree node, -1 for nodes that are not samples. */
  public int[] sampleOfNode(int nodes) {
    int[] m = new int[nodes];
    Arrays.fill(m, -1);
    for (int i = 0; i < nodeOf.length; i++) {
      m[nodeOf[i]] = i;
    }
    return m;
  }
}
