/**
 * The composition root: {@link org.hintfs.fs.mount.Mount} builds a mount's parts from its
 * configuration and wires them ({@link org.hintfs.fs.mount.MountEffects}: what applying a hint does
 * to the cache, the prefetchers and admin work). No other object wires itself into another.
 */
package org.hintfs.fs.mount;
