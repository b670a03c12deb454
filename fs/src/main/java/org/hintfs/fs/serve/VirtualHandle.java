package org.hintfs.fs.serve;

/** A handle on a virtual file ({@code /.hintfs/stats}, ...): its content rendered at open. */
record VirtualHandle(String path, byte[] content) implements Handle {
  @Override
  public long size() {
    return content.length;
  }
}
