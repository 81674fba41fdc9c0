package io.github.ratelimit.helm;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Resource names stay valid DNS labels (63 characters) whatever the release name. */
class NamesTest {

	@Test
	void longReleaseNamesAreCutTo63Characters() {
		String release = "r".repeat(53);   // the longest release name Helm accepts

		HelmChart.Manifests manifests = HelmChart.render(new com.marcnuri.helm.Helm(HelmChart.dir()).template()
			.withName(release)
			.withNamespace(HelmChart.NAMESPACE)
			.withKubeVersion(HelmChart.KUBE_VERSION)
			.set("redis.auth.password", "pw")
			.set("apiKeys.keys.k1", "free"));

		assertThat(manifests.objects()).extracting((HasMetadata o) -> o.getMetadata().getName())
			.allSatisfy((name) -> assertThat(name).hasSizeLessThanOrEqualTo(63)
				.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"));
		assertThat(manifests.one(Deployment.class).getMetadata().getName()).hasSize(63);
		// Suffixed names keep their suffix: the cut happens before it.
		assertThat(manifests.all(Secret.class)).extracting((s) -> s.getMetadata().getName())
			.allMatch((name) -> name.length() <= 63)
			.anyMatch((name) -> name.endsWith("-redis"))
			.anyMatch((name) -> name.endsWith("-api-keys"));
	}

	@Test
	void releaseNameContainingTheChartNameIsUsedAsIs() {
		HelmChart.Manifests manifests = HelmChart.render(new com.marcnuri.helm.Helm(HelmChart.dir()).template()
			.withName("ratelimit-gateway-eu")
			.withKubeVersion(HelmChart.KUBE_VERSION));

		assertThat(manifests.one(Deployment.class).getMetadata().getName()).isEqualTo("ratelimit-gateway-eu");
	}

	@Test
	void fullnameOverride() {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().set("fullnameOverride", "gw"));

		assertThat(manifests.objects()).extracting((HasMetadata o) -> o.getMetadata().getName()).containsOnly("gw");
	}

}
