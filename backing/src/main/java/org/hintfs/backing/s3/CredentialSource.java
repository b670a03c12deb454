package org.hintfs.backing.s3;

import io.minio.credentials.Credentials;
import io.minio.credentials.IamAwsProvider;
import io.minio.credentials.Jwt;
import io.minio.credentials.WebIdentityProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.ProviderException;
import java.util.Map;
import okhttp3.OkHttpClient;

/**
 * One place credentials come from, asked afresh on every {@link #fetch}: nothing is cached here
 * ({@link RenewingCredentials} keeps the current ones and decides when to ask again). The fetches
 * of temporary credentials are minio-java's providers, each made new for one fetch so that their
 * own caches never answer for them.
 */
interface CredentialSource {

  /** Where they come from, for {@code status} and logs: never a secret or a token. */
  String describe();

  /** A short name of the kind: environment, profile, web-identity, container, instance-metadata. */
  String kind();

  /** Fresh credentials; every failure is an {@link IOException} whose message is one line. */
  Credentials fetch() throws IOException;

  /** {@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY} (and a session token). */
  record Environment(String accessKey, String secretKey, String sessionToken)
      implements CredentialSource {
    @Override
    public String describe() {
      return "environment (AWS_ACCESS_KEY_ID)";
    }

    @Override
    public String kind() {
      return "environment";
    }

    @Override
    public Credentials fetch() {
      return new Credentials(accessKey, secretKey, sessionToken, null);
    }

    @Override
    public String toString() {
      return describe(); // never the secret
    }
  }

  /**
   * Static keys of a profile in the shared credentials or config file, read again at each fetch (a
   * tool that rotates keys rewrites the file; a refused request then finds the new ones).
   */
  record Profile(String name, Path credentialsFile, Path configFile) implements CredentialSource {
    @Override
    public String describe() {
      return "profile " + name + " in " + (credentialsFile != null ? credentialsFile : configFile);
    }

    @Override
    public String toString() {
      return describe(); // never a secret or a token
    }

    @Override
    public String kind() {
      return "profile";
    }

    @Override
    public Credentials fetch() throws IOException {
      Map<String, String> s = CredentialChain.profileKeys(this);
      if (s == null) {
        throw new IOException("profile '" + name + "' is no longer in " + describe());
      }
      return new Credentials(
          s.get("aws_access_key_id"),
          s.get("aws_secret_access_key"),
          s.get("aws_session_token"),
          null);
    }
  }

  /**
   * STS AssumeRoleWithWebIdentity with the token in {@code tokenFile}, read at each fetch (EKS's
   * projected token is rotated by the kubelet): IRSA, or a profile's {@code
   * web_identity_token_file}.
   */
  record WebIdentity(
      String roleArn, Path tokenFile, String sessionName, String stsEndpoint, OkHttpClient http)
      implements CredentialSource {
    @Override
    public String describe() {
      return "web identity: role "
          + roleArn
          + ", token file "
          + tokenFile
          + ", STS at "
          + stsEndpoint;
    }

    @Override
    public String toString() {
      return describe(); // never a secret or a token
    }

    @Override
    public String kind() {
      return "web-identity";
    }

    @Override
    public Credentials fetch() throws IOException {
      String token;
      try {
        token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        throw new IOException(
            "cannot read the web identity token file "
                + tokenFile
                + " (AWS_WEB_IDENTITY_TOKEN_FILE)");
      }
      try {
        return checked(
            new WebIdentityProvider(
                    () -> new Jwt(token, 0), stsEndpoint, null, null, roleArn, sessionName, http)
                .fetch());
      } catch (ProviderException | IllegalArgumentException | NullPointerException e) {
        throw new IOException(
            "STS at "
                + stsEndpoint
                + " did not give credentials for role "
                + roleArn
                + ": "
                + oneLine(e));
      }
    }
  }

  /**
   * The container credentials endpoint: ECS ({@code AWS_CONTAINER_CREDENTIALS_RELATIVE_URI}) or EKS
   * Pod Identity ({@code AWS_CONTAINER_CREDENTIALS_FULL_URI} with {@code
   * AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE}, read at each fetch). minio-java's provider checks the
   * host: loopback, the ECS or EKS link-local address, or HTTPS.
   */
  record Container(String url, Path tokenFile, String token, OkHttpClient http)
      implements CredentialSource {
    @Override
    public String describe() {
      return "container credentials at "
          + url
          + (tokenFile != null
              ? ", token file " + tokenFile
              : token != null ? ", token from AWS_CONTAINER_AUTHORIZATION_TOKEN" : "");
    }

    @Override
    public String toString() {
      return describe(); // never a secret or a token
    }

    @Override
    public String kind() {
      return "container";
    }

    @Override
    public Credentials fetch() throws IOException {
      Map<String, String> vars = new java.util.HashMap<>();
      vars.put("AWS_CONTAINER_CREDENTIALS_FULL_URI", url);
      if (tokenFile != null) {
        vars.put("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokenFile.toString());
      } else if (token != null) {
        vars.put("AWS_CONTAINER_AUTHORIZATION_TOKEN", token);
      }
      try {
        return checked(new Iam(url, http, vars).fetch());
      } catch (ProviderException | IllegalArgumentException | NullPointerException e) {
        throw new IOException("the container credentials endpoint " + url + ": " + oneLine(e));
      }
    }
  }

  /** EC2 instance metadata, IMDSv2 (a session token first; minio-java falls back to IMDSv1). */
  record InstanceMetadata(String endpoint, OkHttpClient http) implements CredentialSource {
    @Override
    public String describe() {
      return "instance metadata at " + endpoint;
    }

    @Override
    public String toString() {
      return describe(); // never a secret or a token
    }

    @Override
    public String kind() {
      return "instance-metadata";
    }

    @Override
    public Credentials fetch() throws IOException {
      try {
        return checked(new Iam(endpoint, http, Map.of()).fetch());
      } catch (ProviderException | IllegalArgumentException | NullPointerException e) {
        throw new IOException("instance metadata at " + endpoint + ": " + oneLine(e));
      }
    }
  }

  /**
   * minio-java's IAM provider reading the variables given here instead of this process's
   * environment, so that the chain's choice (and a test's environment) is what it sees.
   */
  final class Iam extends IamAwsProvider {
    private final Map<String, String> vars;

    Iam(String endpoint, OkHttpClient http, Map<String, String> vars) {
      super(endpoint, http);
      this.vars = vars;
    }

    @Override
    protected String getProperty(String name) {
      return vars.get(name);
    }
  }

  /** Credentials as the providers give them, refused when a key is missing. */
  private static Credentials checked(Credentials c) throws IOException {
    if (c == null || c.accessKey() == null || c.secretKey() == null) {
      throw new IOException("the answer held no access key and secret");
    }
    return c;
  }

  /** The message of a provider's failure and its cause, on one line. */
  private static String oneLine(Throwable e) {
    StringBuilder b = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      b.append(": ").append(c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage());
    }
    return b.toString().replaceAll("\\s+", " ");
  }
}
