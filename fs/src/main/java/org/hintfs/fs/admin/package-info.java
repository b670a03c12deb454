/** What an admin asks of a running mount through its control file: prefetch, evict, pin. */
package org.hintfs.fs.admin;
