package org.hintfs.backing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CredentialChainTest {
  @TempDir Path home;
  private final OkHttpClient http = new OkHttpClient();

  private Map<String, String> env(String... kv) {
    Map<String, String> m = new HashMap<>();
    m.put("HOME", home.toString());
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private CredentialSource resolve(Map<String, String> env) throws Exception {
    return CredentialChain.resolve(env, http);
  }

  @Test
  void theEnvironmentComesFirst_thenAWebIdentity_thenTheProfile_thenTheContainer_thenImds()
      throws Exception {
    Path token = Files.writeString(home.resolve("token"), "eyJ...");
    Files.createDirectories(home.resolve(".aws"));
    Files.writeString(
        home.resolve(".aws/credentials"),
        "[default]\naws_access_key_id=A\naws_secret_access_key=S\n");
    Map<String, String> all =
        env(
            "AWS_ACCESS_KEY_ID", "AKIA",
            "AWS_SECRET_ACCESS_KEY", "secret",
            "AWS_WEB_IDENTITY_TOKEN_FILE", token.toString(),
            "AWS_ROLE_ARN", "arn:aws:iam::1:role/r",
            "AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:8/creds",
            "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:7");
    assertThat(resolve(all).kind()).isEqualTo("environment");
    all.remove("AWS_ACCESS_KEY_ID");
    all.remove("AWS_SECRET_ACCESS_KEY");
    CredentialSource w = resolve(all);
    assertThat(w).isInstanceOf(CredentialSource.WebIdentity.class);
    assertThat(w.describe())
        .isEqualTo(
            "web identity: role arn:aws:iam::1:role/r, token file "
                + token
                + ", STS at http://127.0.0.1:9");
    all.remove("AWS_WEB_IDENTITY_TOKEN_FILE");
    all.remove("AWS_ROLE_ARN");
    assertThat(resolve(all).describe())
        .isEqualTo("profile default in " + home.resolve(".aws/credentials"));
    Files.delete(home.resolve(".aws/credentials"));
    assertThat(resolve(all).describe())
        .isEqualTo("container credentials at http://127.0.0.1:8/creds");
    all.remove("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    assertThat(resolve(all).describe()).isEqualTo("instance metadata at http://127.0.0.1:7");
    all.put("AWS_EC2_METADATA_DISABLED", "true");
    assertThat(resolve(all)).isNull();
  }

  @Test
  void stsIsTheRegionsUnlessAnEndpointIsGiven() throws Exception {
    Map<String, String> e =
        env(
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "/t",
            "AWS_ROLE_ARN",
            "arn:r",
            "AWS_REGION",
            "eu-west-1");
    assertThat(((CredentialSource.WebIdentity) resolve(e)).stsEndpoint())
        .isEqualTo("https://sts.eu-west-1.amazonaws.com");
    e.put("AWS_ENDPOINT_URL", "http://127.0.0.1:5");
    assertThat(((CredentialSource.WebIdentity) resolve(e)).stsEndpoint())
        .isEqualTo("http://127.0.0.1:5");
    e.put("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:6");
    assertThat(((CredentialSource.WebIdentity) resolve(e)).stsEndpoint())
        .isEqualTo("http://127.0.0.1:6");
  }

  @Test
  void ecsRelativeUriGoesUnderTheContainerServiceEndpoint_andTheTokenFileIsNamedNotShown()
      throws Exception {
    Map<String, String> e = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc");
    assertThat(resolve(e).describe())
        .isEqualTo("container credentials at http://169.254.170.2/v2/credentials/abc");
    e.put("AWS_CONTAINER_SERVICE_ENDPOINT", "http://127.0.0.1:4/");
    e.put("AWS_CONTAINER_AUTHORIZATION_TOKEN", "sekrit-token");
    CredentialSource c = resolve(e);
    assertThat(c.describe())
        .isEqualTo(
            "container credentials at http://127.0.0.1:4/v2/credentials/abc,"
                + " token from AWS_CONTAINER_AUTHORIZATION_TOKEN")
        .doesNotContain("sekrit");
    assertThat(c.toString()).doesNotContain("sekrit");
  }

  @Test
  void aProfileOfTheConfigFile_isItsProfileNameSection_withKeysOrAWebIdentity() throws Exception {
    Path conf = home.resolve("config");
    Files.writeString(
        conf,
        "[default]\naws_access_key_id=D\naws_secret_access_key=DS\n"
            + "[train]\naws_access_key_id=NOT_A_PROFILE\naws_secret_access_key=X\n"
            + "[profile train]\naws_access_key_id=T\naws_secret_access_key=TS\n"
            + "[profile irsa]\nrole_arn=arn:aws:iam::1:role/x\nweb_identity_token_file=/var/t\n"
            + "[profile proc]\ncredential_process=/bin/get-creds\n");
    Map<String, String> e = env("AWS_CONFIG_FILE", conf.toString(), "AWS_PROFILE", "train");
    assertThat(resolve(e).fetch().accessKey()).isEqualTo("T");
    e.remove("AWS_PROFILE");
    assertThat(resolve(e).fetch().accessKey()).isEqualTo("D");
    e.put("AWS_PROFILE", "irsa");
    assertThat(resolve(e)).isInstanceOf(CredentialSource.WebIdentity.class);
    assertThat(resolve(e).describe()).contains("role arn:aws:iam::1:role/x, token file /var/t");
    e.put("AWS_PROFILE", "proc");
    assertThatThrownBy(() -> resolve(e))
        .hasMessageContaining("profile 'proc' in " + conf + " uses credential_process");
    e.put("AWS_PROFILE", "nope");
    assertThatThrownBy(() -> resolve(e)).hasMessageContaining("profile 'nope' is not in");
  }

  @Test
  void aProfileFileReReadAtEachFetch_givesRotatedKeys() throws Exception {
    Path creds = home.resolve("credentials");
    Files.writeString(creds, "[p]\naws_access_key_id=OLD\naws_secret_access_key=S\n");
    CredentialSource s =
        resolve(env("AWS_SHARED_CREDENTIALS_FILE", creds.toString(), "AWS_PROFILE", "p"));
    assertThat(s.fetch().accessKey()).isEqualTo("OLD");
    Files.writeString(creds, "[p]\naws_access_key_id=NEW\naws_secret_access_key=S2\n");
    assertThat(s.fetch().accessKey()).isEqualTo("NEW");
  }

  @Test
  void halfAPairIsRefusedInOneLineNamingWhatIsMissing() {
    assertThatThrownBy(() -> resolve(env("AWS_ACCESS_KEY_ID", "A")))
        .hasMessage(
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together; only"
                + " AWS_ACCESS_KEY_ID is set");
    assertThatThrownBy(() -> resolve(env("AWS_ROLE_ARN", "arn:r")))
        .hasMessageContaining("AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together")
        .hasMessageEndingWith("only AWS_ROLE_ARN is set");
    assertThatThrownBy(() -> resolve(env("AWS_SHARED_CREDENTIALS_FILE", "/no/such/file")))
        .hasMessage(
            "AWS_SHARED_CREDENTIALS_FILE names /no/such/file, which is not a readable file");
  }
}
