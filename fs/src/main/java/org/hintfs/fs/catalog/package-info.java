/**
 * The metadata catalog: every file and directory of a mounted dataset in a few primitive arrays,
 * built once from the source listing, so getattr, lookup and readdir never call the source.
 */
package org.hintfs.fs.catalog;
