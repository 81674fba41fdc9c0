package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code helm test} hook pod and the release notes. */
class HelmTestPodAndNotesTest {

	private static final Path TEST_POD = Path.of("templates", "tests", "test-readiness.yaml");

	@Test
	void testPodIsAHelmTestHook() throws IOException {
		String template = Files.readString(HelmChart.dir().resolve(TEST_POD));

		assertThat(template).contains("\"helm.sh/hook\": test")
			.contains("\"helm.sh/hook-delete-policy\": before-hook-creation,hook-succeeded");
	}

	/**
	 * helm-java's template omits hooks (Helm's CLI adds them; the library returns the release manifest only), so this
	 * test renders a copy of the chart in which the test pod is an ordinary manifest.
	 */
	@Test
	void testPodAsksReadinessThroughTheServiceWithAPinnedImage(@TempDir Path dir) throws IOException {
		Path chart = HelmChart.copyTo(dir.resolve("chart"));
		Path pod = chart.resolve(TEST_POD);
		Files.writeString(pod, Files.readString(pod).replace("\"helm.sh/hook", "\"example.invalid/hook"));

		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template(chart));

		Pod test = manifests.one(Pod.class);
		Container readiness = test.getSpec().getContainers().get(0);
		assertThat(readiness.getImage()).isEqualTo("busybox:1.37.0");
		Service service = manifests.one(Service.class);
		int managementPort = service.getSpec().getPorts().stream()
			.filter((port) -> port.getName().equals("management"))
			.findFirst()
			.orElseThrow()
			.getPort();
		assertThat(readiness.getCommand()).startsWith("wget")
			.endsWith("http://" + service.getMetadata().getName() + ":" + managementPort
					+ "/actuator/health/readiness");
		assertThat(test.getSpec().getRestartPolicy()).isEqualTo("Never");
		assertThat(test.getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
		assertThat(readiness.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
		assertThat(readiness.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
		// Not selected by the Service (it would get requests), but allowed by the NetworkPolicy (instance label).
		assertThat(test.getMetadata().getLabels()).doesNotContainKey("app.kubernetes.io/name")
			.containsEntry("app.kubernetes.io/instance", HelmChart.RELEASE);
		assertThat(test.getMetadata().getName()).isEqualTo(HelmChart.FULLNAME + "-test-readiness");
	}

	@Test
	void testImageCanBePinnedByDigest(@TempDir Path dir) throws IOException {
		Path chart = HelmChart.copyTo(dir.resolve("chart"));
		Path pod = chart.resolve(TEST_POD);
		Files.writeString(pod, Files.readString(pod).replace("\"helm.sh/hook", "\"example.invalid/hook"));
		String digest = "sha256:" + "a".repeat(64);

		Pod test = HelmChart.render(HelmChart.template(chart).set("tests.image.digest", digest)).one(Pod.class);

		assertThat(test.getSpec().getContainers().get(0).getImage()).isEqualTo("busybox:1.37.0@" + digest);
	}

	@Test
	void notesSayHowToReachAndCheckTheGateway() {
		String notes = dryRunInstall(new Helm(HelmChart.dir()).install());

		assertThat(notes).contains("NOTES:")
			.contains("2 pods")
			.contains("Redis at redis-master:6379")
			.contains("port-forward service/edge-ratelimit-gateway 8080:80")
			.contains("helm test edge --namespace gateways")
			.contains("1/2 of every limit")
			.contains("WARNING: upstreamUri is empty")
			.contains("no API keys are configured");
	}

	@Test
	void notesOfTheProductionExample() {
		String notes = dryRunInstall(new Helm(HelmChart.dir()).install().withValuesFile(HelmChart.productionValues()));

		assertThat(notes).contains("20 pods")
			.contains("Redis Cluster at redis-cluster-0.")
			.contains("https://api.example.com/")
			.contains("1/20 of every limit")
			.doesNotContain("WARNING");
	}

	@Test
	void notesSayWhatFallbackModeAllowMeans() {
		String notes = dryRunInstall(new Helm(HelmChart.dir()).install().set("rateLimit.fallback.mode", "allow"));

		assertThat(notes).contains("normal routes pass unchecked (rateLimit.fallback.mode: allow)")
			.doesNotContain("of every limit");
	}

	private static String dryRunInstall(com.marcnuri.helm.InstallCommand install) {
		return install.withName(HelmChart.RELEASE)
			.withNamespace(HelmChart.NAMESPACE)
			.withKubeVersion(HelmChart.KUBE_VERSION)
			.dryRun()
			.clientOnly()
			.call()
			.getOutput();
	}

}
