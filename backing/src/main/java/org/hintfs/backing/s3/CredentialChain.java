package org.hintfs.backing.s3;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import okhttp3.OkHttpClient;

/**
 * The standard AWS credential chain, in the AWS SDKs' order; the first place that is configured is
 * the one used, and a mistake in it is refused in one line rather than passed over:
 *
 * <ol>
 *   <li>the environment: {@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY}, {@code
 *       AWS_SESSION_TOKEN};
 *   <li>a web identity: {@code AWS_WEB_IDENTITY_TOKEN_FILE} and {@code AWS_ROLE_ARN} ({@code
 *       AWS_ROLE_SESSION_NAME}), exchanged at STS ({@code AWS_ENDPOINT_URL_STS}, else {@code
 *       AWS_ENDPOINT_URL}, else the region's STS): EKS's IRSA;
 *   <li>the profile {@code AWS_PROFILE} (else {@code default}) of the shared credentials file
 *       ({@code AWS_SHARED_CREDENTIALS_FILE}, else {@code ~/.aws/credentials}), else of the config
 *       file ({@code AWS_CONFIG_FILE}, else {@code ~/.aws/config}, where it is {@code [profile
 *       NAME]}): static keys, or {@code role_arn} with {@code web_identity_token_file};
 *   <li>the container credentials endpoint: {@code AWS_CONTAINER_CREDENTIALS_RELATIVE_URI} (under
 *       {@code AWS_CONTAINER_SERVICE_ENDPOINT}, else {@code http://169.254.170.2}: ECS) or {@code
 *       AWS_CONTAINER_CREDENTIALS_FULL_URI} (EKS Pod Identity), with {@code
 *       AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE} or {@code AWS_CONTAINER_AUTHORIZATION_TOKEN};
 *   <li>EC2 instance metadata (IMDSv2) at {@code AWS_EC2_METADATA_SERVICE_ENDPOINT}, else {@code
 *       http://169.254.169.254}, unless {@code AWS_EC2_METADATA_DISABLED=true}; tried last, and
 *       when it answers nothing the requests go unsigned (a public bucket).
 * </ol>
 *
 * Not taken: {@code source_profile} role chaining, {@code credential_process} and SSO profiles
 * (refused by name, so the user knows to export keys or use one of the above).
 */
final class CredentialChain {
  private CredentialChain() {}

  /** The place the credentials come from under {@code env}, or null for none (unsigned). */
  static CredentialSource resolve(Map<String, String> env, OkHttpClient http) throws IOException {
    String id = get(env, "AWS_ACCESS_KEY_ID");
    String secret = get(env, "AWS_SECRET_ACCESS_KEY");
    if (id != null || secret != null) {
      if (id == null || secret == null) {
        throw new IOException(
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together; only "
                + (id != null ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY")
                + " is set");
      }
      return new CredentialSource.Environment(id, secret, get(env, "AWS_SESSION_TOKEN"));
    }
    String tokenFile = get(env, "AWS_WEB_IDENTITY_TOKEN_FILE");
    String role = get(env, "AWS_ROLE_ARN");
    if (tokenFile != null || role != null) {
      if (tokenFile == null || role == null) {
        throw new IOException(
            "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together (a web identity);"
                + " only "
                + (tokenFile != null ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN")
                + " is set");
      }
      return webIdentity(env, role, Path.of(tokenFile), get(env, "AWS_ROLE_SESSION_NAME"), http);
    }
    CredentialSource profile = profile(env, http);
    if (profile != null) {
      return profile;
    }
    String relative = get(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    String full = get(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (relative != null || full != null) {
      String url =
          relative != null
              ? stripSlash(orDefault(env, "AWS_CONTAINER_SERVICE_ENDPOINT", "http://169.254.170.2"))
                  + (relative.startsWith("/") ? "" : "/")
                  + relative
              : full;
      String tf = get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
      return new CredentialSource.Container(
          url,
          tf == null ? null : Path.of(tf),
          tf == null ? get(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN") : null,
          http);
    }
    if ("true".equalsIgnoreCase(get(env, "AWS_EC2_METADATA_DISABLED"))) {
      return null;
    }
    return new CredentialSource.InstanceMetadata(
        stripSlash(orDefault(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://169.254.169.254")),
        http);
  }

  private static CredentialSource webIdentity(
      Map<String, String> env, String role, Path tokenFile, String session, OkHttpClient http) {
    String sts = get(env, "AWS_ENDPOINT_URL_STS");
    if (sts == null) {
      sts = get(env, "AWS_ENDPOINT_URL");
    }
    if (sts == null) {
      String region = get(env, "AWS_REGION");
      if (region == null) {
        region = get(env, "AWS_DEFAULT_REGION");
      }
      sts =
          region == null ? "https://sts.amazonaws.com" : "https://sts." + region + ".amazonaws.com";
    }
    return new CredentialSource.WebIdentity(
        role,
        tokenFile,
        session != null ? session : "hintfs-" + System.currentTimeMillis(),
        sts,
        http);
  }

  /** The profile's credentials, or null when no file names it and none was asked for by name. */
  private static CredentialSource profile(Map<String, String> env, OkHttpClient http)
      throws IOException {
    String asked = get(env, "AWS_PROFILE");
    String name = asked != null ? asked : "default";
    String home = env.getOrDefault("HOME", System.getProperty("user.home"));
    String credVar = get(env, "AWS_SHARED_CREDENTIALS_FILE");
    String confVar = get(env, "AWS_CONFIG_FILE");
    Path credFile = credVar != null ? Path.of(credVar) : Path.of(home, ".aws", "credentials");
    Path confFile = confVar != null ? Path.of(confVar) : Path.of(home, ".aws", "config");
    for (Path named :
        new Path[] {credVar == null ? null : credFile, confVar == null ? null : confFile}) {
      if (named != null && !Files.isRegularFile(named)) {
        throw new IOException(
            (named == credFile ? "AWS_SHARED_CREDENTIALS_FILE" : "AWS_CONFIG_FILE")
                + " names "
                + named
                + ", which is not a readable file");
      }
    }
    Map<String, String> keys =
        Files.isRegularFile(credFile) ? readIniSection(credFile, name, false) : null;
    Map<String, String> conf =
        Files.isRegularFile(confFile) ? readIniSection(confFile, name, true) : null;
    if (keys != null && keys.containsKey("aws_access_key_id")) {
      return staticProfile(name, credFile, null, keys);
    }
    if (conf != null) {
      String tokenFile = conf.get("web_identity_token_file");
      String role = conf.get("role_arn");
      if (tokenFile != null && role != null) {
        return webIdentity(env, role, Path.of(tokenFile), conf.get("role_session_name"), http);
      }
      for (String unsupported :
          List.of("source_profile", "credential_process", "sso_session", "sso_start_url")) {
        if (conf.containsKey(unsupported)) {
          throw new IOException(
              "profile '"
                  + name
                  + "' in "
                  + confFile
                  + " uses "
                  + unsupported
                  + ", which hintfs does not take; export its keys (aws configure"
                  + " export-credentials --format env) or give the profile static keys");
        }
      }
      if (conf.containsKey("aws_access_key_id")) {
        return staticProfile(name, null, confFile, conf);
      }
    }
    if (keys != null) {
      return staticProfile(name, credFile, null, keys); // names the missing key
    }
    if (asked != null) {
      throw new IOException(
          "profile '"
              + name
              + "' is not in "
              + credFile
              + (Files.isRegularFile(confFile) ? " or " + confFile : ""));
    }
    return null;
  }

  private static CredentialSource staticProfile(
      String name, Path credFile, Path confFile, Map<String, String> section) throws IOException {
    Path file = credFile != null ? credFile : confFile;
    if (blank(section.get("aws_access_key_id")) || blank(section.get("aws_secret_access_key"))) {
      throw new IOException(
          "profile '"
              + name
              + "' in "
              + file
              + " needs both aws_access_key_id and aws_secret_access_key");
    }
    return new CredentialSource.Profile(name, credFile, confFile);
  }

  /** A static profile's keys as its file holds them now, or null if the section is gone. */
  static Map<String, String> profileKeys(CredentialSource.Profile p) throws IOException {
    return p.credentialsFile() != null
        ? readIniSection(p.credentialsFile(), p.name(), false)
        : readIniSection(p.configFile(), p.name(), true);
  }

  /**
   * The keys of a section of an INI file (lower-cased), or null if there is none. In a config file
   * ({@code config}) a profile other than {@code default} is {@code [profile NAME]}; in a
   * credentials file it is {@code [NAME]}, and {@code [profile NAME]} is taken there too.
   */
  static Map<String, String> readIniSection(Path file, String name, boolean config)
      throws IOException {
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
        boolean prefixed = s.startsWith("profile ");
        if (prefixed) {
          s = s.substring("profile ".length()).strip();
        }
        in = s.equals(name) && (!config || prefixed || name.equals("default"));
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

  private static String get(Map<String, String> env, String key) {
    String v = env.get(key);
    return blank(v) ? null : v.strip();
  }

  private static String orDefault(Map<String, String> env, String key, String dflt) {
    String v = get(env, key);
    return v == null ? dflt : v;
  }

  private static String stripSlash(String s) {
    return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
