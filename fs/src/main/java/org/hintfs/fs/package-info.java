/**
 * What every layer of the mount shares: its configuration ({@link org.hintfs.fs.MountConfig}), the
 * errno values answered to the kernel, size parsing and the version. The layers, top to bottom:
 * {@code cli} (the command line and the daemon), {@code fuse} (the kernel adapter), {@code mount}
 * (the composition root), {@code metrics} (stats JSON and Prometheus, read from the serving layer),
 * {@code serve} (paths, open files, reads), {@code virtual} (the {@code /.hintfs} files), then the
 * parts the serving layer drives: {@code admin}, {@code prefetch}, {@code control}, {@code stream},
 * {@code cluster}, {@code store}, {@code catalog} ({@code concurrent} imports nothing of hintfs).
 * An import only ever runs down this list.
 */
package org.hintfs.fs;
