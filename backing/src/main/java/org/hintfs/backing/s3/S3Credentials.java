package org.hintfs.backing.s3;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Credentials from the standard places, in the AWS CLI's order: {@code AWS_ACCESS_KEY_ID}, {@code
 * AWS_SECRET_ACCESS_KEY} and {@code AWS_SESSION_TOKEN}; else the profile {@code AWS_PROFILE} (or
 * {@code default}) of {@code AWS_SHARED_CREDENTIALS_FILE} (or {@code ~/.aws/credentials}); else
 * none, and requests go unsigned (a public bucket).
 *
 * <p>{@link #toString()} never shows the secret.
 *
 * @param source where they came from, for logs: "environment", "profile NAME in FILE", "none"
 */
public record S3Credentials(
    String accessKey, String secretKey, String sessionToken, String source) {

  /** No credentials: unsigned requests. */
  public static final S3Credentials ANONYMOUS = new S3Credentials(null, null, null, "none");

  /** True when requests are unsigned. */
  public boolean anonymous() {
    return accessKey == null;
  }

  @Override
  public String toString() {
    return anonymous() ? "anonymous" : "access key " + accessKey + " from " + source;
  }

  /** Resolves credentials from {@code env} (and the home directory for the default profile). */
  public static S3Credentials resolve(Map<String, String> env) throws IOException {
    String id = env.get("AWS_ACCESS_KEY_ID");
    String secret = env.get("AWS_SECRET_ACCESS_KEY");
    if (notBlank(id) || notBlank(secret)) {
      if (!notBlank(id) || !notBlank(secret)) {
        throw new IOException(
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together; only "
                + (notBlank(id) ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY")
                + " is set");
      }
      String token = env.get("AWS_SESSION_TOKEN");
      return new S3Credentials(id, secret, notBlank(token) ? token : null, "environment");
    }
    String explicitProfile = env.get("AWS_PROFILE");
    String profile = notBlank(explicitProfile) ? explicitProfile : "default";
    String fileVar = env.get("AWS_SHARED_CREDENTIALS_FILE");
    Path file =
        notBlank(fileVar)
            ? Path.of(fileVar)
            : Path.of(
                env.getOrDefault("HOME", System.getProperty("user.home")), ".aws", "credentials");
    if (!Files.isRegularFile(file)) {
      if (notBlank(explicitProfile) || notBlank(fileVar)) {
        throw new IOException(
            "AWS_PROFILE/AWS_SHARED_CREDENTIALS_FILE name "
                + file
                + ", which is not a readable file");
      }
      return ANONYMOUS;
    }
    Map<String, String> section = readIniSection(file, profile);
    if (section == null) {
      if (notBlank(explicitProfile)) {
        throw new IOException("profile '" + profile + "' is not in " + file);
      }
      return ANONYMOUS;
    }
    String pid = section.get("aws_access_key_id");
    String psecret = section.get("aws_secret_access_key");
    if (!notBlank(pid) || !notBlank(psecret)) {
      throw new IOException(
          "profile '"
              + profile
              + "' in "
              + file
              + " needs both aws_access_key_id and aws_secret_access_key");
    }
    String token = section.get("aws_session_token");
    return new S3Credentials(
        pid, psecret, notBlank(token) ? token : null, "profile " + profile + " in " + file);
  }

  /**
   * The keys of {@code [name]} in an INI file (lower-cased), or null if there is no such section.
   */
  static Map<String, String> readIniSection(Path file, String name) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    Map<String, String> out = null;
    boolean in = false;
    for (String raw : lines) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        String s = line.substring(1, line.length() - 1).strip();
        if (s.startsWith("profile ")) {
          s = s.substring("profile ".length()).strip();
        }
        in = s.equals(name);
        if (in && out == null) {
          out = new HashMap<>();
        }
        continue;
      }
      int eq = line.indexOf('=');
      if (in && eq > 0) {
        out.put(line.substring(0, eq).strip().toLowerCase(), line.substring(eq + 1).strip());
      }
    }
    return out;
  }

  private static boolean notBlank(String s) {
    return s != null && !s.isBlank();
  }
}
