/** An S3 (or S3-compatible) bucket prefix as a dataset source, on minio-java. */
package org.hintfs.backing.s3;
