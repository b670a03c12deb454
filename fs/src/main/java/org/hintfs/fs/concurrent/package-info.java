/**
 * Concurrency helpers shared by the layers of {@code fs}, and what Linux says of this process's
 * threads and this machine's memory (imports nothing of hintfs).
 */
package org.hintfs.fs.concurrent;
