/**
 * The {@code hintfs} command line (picocli) and the daemon it starts: mount, unmount, status. Every
 * user error ends in one line on stderr starting with "hintfs: " and a non-zero exit.
 */
package org.hintfs.fs.cli;
