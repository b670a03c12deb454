package org.hintfs.backing.s3;

import io.minio.errors.ErrorResponseException;
import io.minio.errors.MinioException;
import io.minio.errors.ServerException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import javax.net.ssl.SSLException;
import org.hintfs.backing.ObjectChangedException;
import org.hintfs.backing.SourceUnavailableException;

/**
 * What an S3 failure means: at mount, one line fit for a user ({@link #mountError}); on a request,
 * whether it is worth another attempt ({@link Transient}) or answers the reader at once ({@link
 * #classify}).
 */
final class S3Errors {
  private final String bucket;
  private final String endpoint;
  private final String describe;

  S3Errors(String bucket, String endpoint, String describe) {
    this.bucket = bucket;
    this.endpoint = endpoint;
    this.describe = describe;
  }

  /** A failure worth another attempt. */
  static final class Transient extends IOException {
    Transient(String message, Throwable cause) {
      super(message, cause);
    }
  }

  IOException mountError(Exception e) {
    String where = describe;
    if (e instanceof ErrorResponseException er) {
      String code = er.errorResponse().code();
      return switch (code) {
        case "NoSuchBucket" ->
            new NoSuchFileException(
                where, null, "bucket '" + bucket + "' does not exist (NoSuchBucket)");
        case "InvalidAccessKeyId" ->
            new AccessDeniedException(
                where,
                null,
                "the access key is not known to the server (InvalidAccessKeyId); check"
                    + " AWS_ACCESS_KEY_ID or the profile");
        case "SignatureDoesNotMatch" ->
            new AccessDeniedException(
                where,
                null,
                "the secret key is wrong (SignatureDoesNotMatch); check AWS_SECRET_ACCESS_KEY or the"
                    + " profile");
        case "AccessDenied", "AllAccessDisabled", "ExpiredToken", "InvalidToken" ->
            new AccessDeniedException(
                where, null, "access denied (" + code + "): the credentials may not list it");
        default ->
            new IOException(
                where + ": the server answered " + code + ": " + er.errorResponse().message());
      };
    }
    Throwable c = rootCause(e);
    if (c instanceof SSLException) {
      return new IOException("TLS with " + endpoint + " failed: " + c.getMessage());
    }
    if (c instanceof UnknownHostException) {
      return new IOException("cannot resolve the S3 endpoint host in " + endpoint);
    }
    if (c instanceof ConnectException || c instanceof java.net.SocketTimeoutException) {
      return new SourceUnavailableException(
          "cannot reach the S3 endpoint " + endpoint + ": " + c.getMessage());
    }
    if (c instanceof IOException) {
      return new SourceUnavailableException(
          "the S3 endpoint " + endpoint + " failed: " + c.getMessage());
    }
    return new IOException(where + ": " + c);
  }

  static Throwable rootCause(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }

  /**
   * True when the server refused the request for its credentials: expired or unknown ones, a
   * signature of another secret (a key rotated under the same id), or a plain 403 (a HEAD's answer
   * has no body to say which). Such a request is worth one more try with fresh credentials.
   */
  static boolean refusesCredentials(Exception e) {
    if (!(e instanceof ErrorResponseException er)) {
      return false;
    }
    return switch (er.errorResponse().code()) {
      case "ExpiredToken",
              "ExpiredTokenException",
              "InvalidToken",
              "TokenRefreshRequired",
              "InvalidAccessKeyId",
              "InvalidClientTokenId",
              "SignatureDoesNotMatch",
              "AccessDenied" ->
          true;
      default -> false;
    };
  }

  /** A range that starts at or past the end: a read of 0 bytes. */
  static final class EndOfObject extends IOException {}

  IOException classify(Exception e, String path) {
    if (e instanceof ObjectChangedException oc) {
      return oc;
    }
    if (e instanceof java.net.SocketTimeoutException t) {
      // A wait for the server that ran out (the plain-HTTP path throws it as it is; minio-java's
      // calls wrap it): a hung source, retried as a refused connection is, not an interrupt.
      return new Transient("no answer in time: " + t.getMessage(), t);
    }
    if (e instanceof InterruptedIOException ie) {
      return ie;
    }
    if (e instanceof ErrorResponseException er) {
      String code = er.errorResponse().code();
      int status = er.response() == null ? 0 : er.response().code();
      switch (code) {
        case "NoSuchKey":
          return new NoSuchFileException(path);
        case "InvalidRange":
          return new EndOfObject();
        case "PreconditionFailed":
          return new ObjectChangedException(path, "the listed ETag", "a different one");
        case "NoSuchBucket":
          return new NoSuchFileException(path, null, "bucket " + bucket + " no longer exists");
        case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken":
          return new AccessDeniedException(path, null, code);
        case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout":
          return new Transient(code, e);
        default:
          if (status >= 500 || status == 429) {
            return new Transient(code + " (HTTP " + status + ")", e);
          }
          return new IOException(path + ": " + code + ": " + er.errorResponse().message(), e);
      }
    }
    if (e instanceof ServerException se) {
      int status = se.statusCode();
      if (status == 412) {
        return new ObjectChangedException(path, "the listed ETag", "a different one");
      }
      if (status >= 500 || status == 429) {
        return new Transient("HTTP " + status, e);
      }
      return new IOException(path + ": HTTP " + status + ": " + se.getMessage(), e);
    }
    Throwable c = rootCause(e);
    if (c instanceof SSLException) {
      return new IOException("TLS with " + endpoint + " failed: " + c.getMessage(), c);
    }
    if (c instanceof IOException || e instanceof MinioException) {
      return new Transient(String.valueOf(c.getMessage()), c);
    }
    return new IOException(path + ": " + c, c);
  }

  // ------------------------------------------------------------------------------------ metrics
}
