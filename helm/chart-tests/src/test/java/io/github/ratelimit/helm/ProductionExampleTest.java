package io.github.ratelimit.helm;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** examples/production.yaml: 20 pods, a 3-shard Redis Cluster, plans free and pro, credentials in existing Secrets. */
class ProductionExampleTest {

	private static HelmChart.Manifests manifests;

	@BeforeAll
	static void render() {
		manifests = HelmChart.render(HelmChart.template().withValuesFile(HelmChart.productionValues()));
	}

	@Test
	void runsTwentyPods() {
		Deployment deployment = manifests.one(Deployment.class);

		assertThat(deployment.getSpec().getReplicas()).isEqualTo(20);
		assertThat(DefaultValuesTest.gateway(deployment).getImage())
			.isEqualTo("registry.example.com/platform/sample-gateway:0.1.0");
		assertThat(DefaultValuesTest.gateway(deployment).getResources().getRequests().get("cpu")).hasToString("1");
		assertThat(DefaultValuesTest.env(DefaultValuesTest.gateway(deployment), "BPL_JVM_THREAD_COUNT").getValue())
			.isEqualTo("64");
	}

	@Test
	void rendersTheProductionResources() {
		assertThat(manifests.kinds().keySet()).containsExactlyInAnyOrder(
				"ServiceAccount/edge-ratelimit-gateway", "ConfigMap/edge-ratelimit-gateway",
				"Service/edge-ratelimit-gateway", "Deployment/edge-ratelimit-gateway",
				"Ingress/edge-ratelimit-gateway", "NetworkPolicy/edge-ratelimit-gateway",
				"PodDisruptionBudget/edge-ratelimit-gateway");
		assertThat(manifests.one(PodDisruptionBudget.class).getSpec().getMaxUnavailable().getIntVal()).isEqualTo(2);
		assertThat(manifests.one(Ingress.class).getSpec().getIngressClassName()).isEqualTo("nginx");
		assertThat(manifests.one(NetworkPolicy.class).getSpec().getIngress()).hasSize(2);
	}

	@Test
	void credentialsComeFromExistingSecretsOnly() {
		Container gateway = DefaultValuesTest.gateway(manifests.one(Deployment.class));

		assertThat(manifests.all(Secret.class)).as("the chart creates no Secret").isEmpty();
		var password = DefaultValuesTest.env(gateway, "SPRING_DATA_REDIS_PASSWORD");
		assertThat(password.getValue()).isNull();
		assertThat(password.getValueFrom().getSecretKeyRef().getName()).isEqualTo("redis-cluster");
		assertThat(password.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("redis-password");
		var apiKeys = manifests.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes().stream()
			.filter((volume) -> volume.getName().equals("api-keys"))
			.findFirst()
			.orElseThrow();
		assertThat(apiKeys.getSecret().getSecretName()).isEqualTo("gateway-api-keys");
		assertThat(apiKeys.getSecret().getItems()).singleElement().satisfies((item) -> {
			assertThat(item.getKey()).isEqualTo("api-keys.yml");
			assertThat(item.getPath()).isEqualTo("api-keys.yml");
		});
		assertThat(manifests.one(ConfigMap.class).getData().get("application.yml")).doesNotContainPattern("(?m)^\\s*password:");
	}

}
