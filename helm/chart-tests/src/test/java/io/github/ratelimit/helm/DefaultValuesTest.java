package io.github.ratelimit.helm;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The chart with its default values: what it renders and the settings that matter. */
class DefaultValuesTest {

	private static HelmChart.Manifests manifests;

	@BeforeAll
	static void render() {
		manifests = HelmChart.render(HelmChart.template());
	}

	@Test
	void rendersOnlyTheCoreResources() {
		assertThat(manifests.kinds()).containsExactly(
				Map.entry("ServiceAccount/" + HelmChart.FULLNAME, ServiceAccount.class),
				Map.entry("ConfigMap/" + HelmChart.FULLNAME, ConfigMap.class),
				Map.entry("Service/" + HelmChart.FULLNAME, Service.class),
				Map.entry("Deployment/" + HelmChart.FULLNAME, Deployment.class));
	}

	@Test
	void deploymentRunsTheReplicaCountWithSelectorLabels() {
		Deployment deployment = manifests.one(Deployment.class);

		assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
		assertThat(deployment.getSpec().getSelector().getMatchLabels()).containsExactlyInAnyOrderEntriesOf(
				Map.of("app.kubernetes.io/name", "ratelimit-gateway", "app.kubernetes.io/instance", HelmChart.RELEASE));
		assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
			.containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
		assertThat(deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal()).isZero();
		assertThat(gateway(deployment).getImage()).isEqualTo("ratelimit/sample-gateway:0.1.0-SNAPSHOT");
	}

	@Test
	void probesUseSpringBootsHealthGroupsOnTheManagementPort() {
		Container gateway = gateway(manifests.one(Deployment.class));

		assertThat(gateway.getPorts()).extracting(ContainerPort::getName, ContainerPort::getContainerPort)
			.containsExactly(tuple("http", 8080),
					tuple("management", 8081));
		assertProbe(gateway.getStartupProbe(), "/actuator/health/liveness");
		assertProbe(gateway.getLivenessProbe(), "/actuator/health/liveness");
		assertProbe(gateway.getReadinessProbe(), "/actuator/health/readiness");
		// Up to 60 s for a cold JVM before liveness counts.
		Probe startup = gateway.getStartupProbe();
		assertThat(startup.getPeriodSeconds() * startup.getFailureThreshold()).isEqualTo(60);
	}

	@Test
	void probePathsExistInTheRenderedApplication() {
		RenderedConfig config = RenderedConfig.of(manifests);
		Container gateway = gateway(manifests.one(Deployment.class));
		int managementPort = gateway.getPorts().stream()
			.filter((port) -> port.getName().equals("management"))
			.findFirst()
			.orElseThrow()
			.getContainerPort();

		assertThat(config.get("management.server.port", Integer.class)).isEqualTo(managementPort);
		assertThat(config.get("server.port", Integer.class)).isEqualTo(8080).isNotEqualTo(managementPort);
		// The probe groups exist only with probes enabled, under the default base path, with health exposed.
		assertThat(config.get("management.endpoint.health.probes.enabled", Boolean.class)).isTrue();
		assertThat(config.get("management.endpoints.web.base-path", String.class)).isNull();
		assertThat(config.get("management.endpoints.web.exposure.include", String[].class)).contains("health");
		// Redis must not decide liveness or readiness: the gateway fails open by design.
		assertThat(config.get("management.health.redis.enabled", Boolean.class)).isFalse();
	}

	@Test
	void securityContextIsLockedDown() {
		PodSpec pod = manifests.one(Deployment.class).getSpec().getTemplate().getSpec();
		Container gateway = pod.getContainers().get(0);

		assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
		assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
		assertThat(gateway.getSecurityContext().getRunAsNonRoot()).isTrue();
		assertThat(gateway.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
		assertThat(gateway.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
		assertThat(gateway.getSecurityContext().getPrivileged()).isFalse();
		assertThat(gateway.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
		assertThat(gateway.getSecurityContext().getCapabilities().getAdd()).isNullOrEmpty();
		assertThat(gateway.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
		assertThat(pod.getAutomountServiceAccountToken()).isFalse();
		assertThat(manifests.one(ServiceAccount.class).getAutomountServiceAccountToken()).isFalse();
		// A read-only root needs a writable /tmp for the JVM and Netty's native libraries.
		assertThat(gateway.getVolumeMounts()).extracting(VolumeMount::getMountPath).contains("/tmp");
		assertThat(pod.getVolumes()).filteredOn((volume) -> volume.getName().equals("tmp"))
			.singleElement()
			.extracting(Volume::getEmptyDir)
			.isNotNull();
	}

	@Test
	void shutsDownGracefully() {
		PodSpec pod = manifests.one(Deployment.class).getSpec().getTemplate().getSpec();
		Container gateway = pod.getContainers().get(0);
		RenderedConfig config = RenderedConfig.of(manifests);

		assertThat(config.get("server.shutdown", String.class)).isEqualTo("graceful");
		long preStop = gateway.getLifecycle().getPreStop().getSleep().getSeconds();
		long shutdownPhase = config.get("spring.lifecycle.timeout-per-shutdown-phase", java.time.Duration.class)
			.toSeconds();
		assertThat(preStop).isEqualTo(10);
		assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(preStop + shutdownPhase);
	}

	@Test
	void configMapIsTheCompleteConfigurationOfThePod() {
		Deployment deployment = manifests.one(Deployment.class);
		PodSpec pod = deployment.getSpec().getTemplate().getSpec();
		Container gateway = pod.getContainers().get(0);

		// SPRING_CONFIG_LOCATION (not ADDITIONAL_LOCATION): the image's own application.yml, with its demo API keys,
		// is not read at all.
		assertThat(gateway.getEnv()).extracting(EnvVar::getName).doesNotContain("SPRING_CONFIG_ADDITIONAL_LOCATION");
		assertThat(env(gateway, "SPRING_CONFIG_LOCATION").getValue())
			.isEqualTo("file:/etc/ratelimit-gateway/config/application.yml");
		assertThat(gateway.getVolumeMounts()).filteredOn((mount) -> mount.getName().equals("config"))
			.singleElement()
			.satisfies((mount) -> {
				assertThat(mount.getMountPath()).isEqualTo("/etc/ratelimit-gateway/config");
				assertThat(mount.getReadOnly()).isTrue();
			});
		assertThat(pod.getVolumes()).filteredOn((volume) -> volume.getName().equals("config"))
			.singleElement()
			.satisfies((volume) -> assertThat(volume.getConfigMap().getName()).isEqualTo(HelmChart.FULLNAME));
		assertThat(manifests.one(ConfigMap.class).getData()).containsOnlyKeys("application.yml");
		// Pods roll when the configuration changes.
		assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
			.containsKey("checksum/config");
		// No password configured: no password variable.
		assertThat(gateway.getEnv()).extracting(EnvVar::getName).doesNotContain("SPRING_DATA_REDIS_PASSWORD");
	}

	@Test
	void spreadsPodsOverZonesAndNodes() {
		PodSpec pod = manifests.one(Deployment.class).getSpec().getTemplate().getSpec();

		assertThat(pod.getTopologySpreadConstraints()).hasSize(2).allSatisfy((constraint) -> {
			assertThat(constraint.getMaxSkew()).isEqualTo(1);
			assertThat(constraint.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
			assertThat(constraint.getLabelSelector().getMatchLabels())
				.containsEntry("app.kubernetes.io/instance", HelmChart.RELEASE);
			assertThat(constraint.getMatchLabelKeys()).containsExactly("pod-template-hash");
		});
		assertThat(pod.getTopologySpreadConstraints()).extracting((c) -> c.getTopologyKey())
			.containsExactly("topology.kubernetes.io/zone", "kubernetes.io/hostname");
	}

	@Test
	void serviceExposesRequestsAndActuatorOnSeparatePorts() {
		Service service = manifests.one(Service.class);

		assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
		assertThat(service.getSpec().getSelector())
			.isEqualTo(manifests.one(Deployment.class).getSpec().getSelector().getMatchLabels());
		List<ServicePort> ports = service.getSpec().getPorts();
		assertThat(ports).extracting(ServicePort::getName, ServicePort::getPort, (p) -> p.getTargetPort().getStrVal())
			.containsExactly(tuple("http", 80, "http"),
					tuple("management", 8081, "management"));
	}

	static Container gateway(Deployment deployment) {
		return deployment.getSpec().getTemplate().getSpec().getContainers().stream()
			.filter((container) -> container.getName().equals("gateway"))
			.findFirst()
			.orElseThrow();
	}

	static EnvVar env(Container container, String name) {
		return container.getEnv().stream()
			.filter((variable) -> variable.getName().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No environment variable " + name));
	}

	private static void assertProbe(Probe probe, String path) {
		assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
		assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("management");
		assertThat(probe.getExec()).isNull();
	}

}
