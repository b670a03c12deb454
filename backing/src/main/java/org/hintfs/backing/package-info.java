/**
 * The remote dataset: list every object, stat one, read a byte range. Nothing here caches or knows
 * about FUSE; {@link org.hintfs.backing.DatasetSource} is the only door the filesystem uses.
 */
package org.hintfs.backing;
