/**
 * The files under the reserved {@code /.hintfs} directory: their names and ids, and the content of
 * the generated ones, rendered at open (the stats JSON is handed in by the composition root).
 */
package org.hintfs.fs.virtual;
