/**
 * Streams: one reader of the mount (a rank of a training job, with its DataLoader workers), what
 * its hints predict it will read, and which stream each open belongs to.
 */
package org.hintfs.fs.stream;
