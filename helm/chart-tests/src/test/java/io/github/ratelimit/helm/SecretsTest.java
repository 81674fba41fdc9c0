package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** Credentials (the Redis password, static API keys) are referenced from Secrets, never written into the ConfigMap. */
class SecretsTest {

	private static final String PASSWORD = "pw-Zq8#x!7";

	private static final String API_KEY = "key.with/dots+and=signs";

	@Test
	void chartCreatedSecretsAreReferencedNotInlined(@TempDir Path dir) throws IOException {
		// A values file: --set cannot carry '=' in a key.
		Path values = Files.writeString(dir.resolve("secrets.yaml"), """
				redis:
				  auth:
				    password: "%s"
				apiKeys:
				  keys:
				    demo-free-key: free
				    "%s": pro
				""".formatted(PASSWORD, API_KEY));
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().withValuesFile(values));
		Deployment deployment = manifests.one(Deployment.class);
		Container gateway = DefaultValuesTest.gateway(deployment);

		Secret redis = manifests.named(Secret.class, HelmChart.FULLNAME + "-redis");
		assertThat(decode(redis.getData().get("redis-password"))).isEqualTo(PASSWORD);
		EnvVar password = DefaultValuesTest.env(gateway, "SPRING_DATA_REDIS_PASSWORD");
		assertThat(password.getValue()).isNull();
		assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo(redis.getMetadata().getName());
		assertThat(password.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("redis-password");

		Secret apiKeys = manifests.named(Secret.class, HelmChart.FULLNAME + "-api-keys");
		Volume volume = deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
			.filter((v) -> v.getName().equals("api-keys"))
			.findFirst()
			.orElseThrow();
		assertThat(volume.getSecret().getSecretName()).isEqualTo(apiKeys.getMetadata().getName());
		assertThat(gateway.getVolumeMounts()).anySatisfy((mount) -> {
			assertThat(mount.getName()).isEqualTo("api-keys");
			assertThat(mount.getMountPath()).isEqualTo("/etc/ratelimit-gateway/secrets");
			assertThat(mount.getReadOnly()).isTrue();
		});

		// Nothing secret in the ConfigMap, the environment's plain values or the pod annotations.
		String configMap = manifests.one(ConfigMap.class).getData().get("application.yml");
		assertThat(configMap).doesNotContain(PASSWORD).doesNotContain(API_KEY).doesNotContain("demo-free-key");
		assertThat(gateway.getEnv()).extracting(EnvVar::getValue)
			.noneMatch((value) -> value != null && (value.contains(PASSWORD) || value.contains(API_KEY)));
		assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
			.containsKey("checksum/secret")
			.allSatisfy((name, value) -> assertThat(value).doesNotContain(PASSWORD));
		// Plain text appears only base64-encoded inside the Secrets.
		assertThat(manifests.text()).doesNotContain(PASSWORD).doesNotContain(API_KEY);

		// The mounted document binds into the starter: keys with dots, slashes and '=' survive.
		RateLimitProperties properties = ApplicationYamlTest.bindAndValidate(RenderedConfig.of(manifests));
		assertThat(properties.getApiKeys()).containsExactlyInAnyOrderEntriesOf(
				java.util.Map.of("demo-free-key", "free", API_KEY, "pro"));
	}

	@Test
	void existingSecretsAreReferencedAndNothingIsCreated() {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template()
			.set("redis.auth.existingSecret", "my-redis")
			.set("redis.auth.existingSecretPasswordKey", "password")
			.set("apiKeys.existingSecret", "my-keys")
			.set("apiKeys.existingSecretKey", "keys.yaml"));
		Deployment deployment = manifests.one(Deployment.class);
		Container gateway = DefaultValuesTest.gateway(deployment);

		assertThat(manifests.all(Secret.class)).isEmpty();
		EnvVar password = DefaultValuesTest.env(gateway, "SPRING_DATA_REDIS_PASSWORD");
		assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo("my-redis");
		assertThat(password.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
		Volume volume = deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
			.filter((v) -> v.getName().equals("api-keys"))
			.findFirst()
			.orElseThrow();
		assertThat(volume.getSecret().getSecretName()).isEqualTo("my-keys");
		assertThat(volume.getSecret().getItems()).singleElement().satisfies((item) -> {
			assertThat(item.getKey()).isEqualTo("keys.yaml");
			// Always mounted under the name application.yml imports.
			assertThat(item.getPath()).isEqualTo("api-keys.yml");
		});
		assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
			.doesNotContainKey("checksum/secret");
	}

	private static String decode(String base64) {
		return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
	}

}
