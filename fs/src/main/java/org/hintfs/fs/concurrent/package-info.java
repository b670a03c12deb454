/** Concurrency helpers shared by the layers of {@code fs} (imports nothing of hintfs). */
package org.hintfs.fs.concurrent;
