package io.github.ratelimit.helm;

import java.util.List;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** Each optional resource, switched on alone, renders and parses into its typed object. */
class OptionalResourcesTest {

	@Test
	void horizontalPodAutoscalerOwnsTheReplicaCount() {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template()
			.set("autoscaling.enabled", true)
			.set("autoscaling.minReplicas", 4)
			.set("autoscaling.maxReplicas", 20)
			.set("autoscaling.targetMemoryUtilizationPercentage", 80)
			.set("autoscaling.behavior.scaleDown.stabilizationWindowSeconds", 300));

		HorizontalPodAutoscaler hpa = manifests.one(HorizontalPodAutoscaler.class);
		assertThat(hpa.getApiVersion()).isEqualTo("autoscaling/v2");
		assertThat(hpa.getSpec().getScaleTargetRef().getKind()).isEqualTo("Deployment");
		assertThat(hpa.getSpec().getScaleTargetRef().getName()).isEqualTo(HelmChart.FULLNAME);
		assertThat(hpa.getSpec().getMinReplicas()).isEqualTo(4);
		assertThat(hpa.getSpec().getMaxReplicas()).isEqualTo(20);
		assertThat(hpa.getSpec().getMetrics()).extracting((m) -> m.getResource().getName(),
				(m) -> m.getResource().getTarget().getAverageUtilization())
			.containsExactly(tuple("cpu", 70),
					tuple("memory", 80));
		assertThat(hpa.getSpec().getBehavior().getScaleDown().getStabilizationWindowSeconds()).isEqualTo(300);
		assertThat(manifests.one(Deployment.class).getSpec().getReplicas())
			.as("no replicas field: a helm upgrade must not reset what the HPA chose").isNull();
	}

	@Test
	void podDisruptionBudget() {
		PodDisruptionBudget pdb = HelmChart.render(HelmChart.template().set("podDisruptionBudget.enabled", true))
			.one(PodDisruptionBudget.class);

		assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
		assertThat(pdb.getSpec().getMinAvailable()).isNull();
		assertThat(pdb.getSpec().getUnhealthyPodEvictionPolicy()).isEqualTo("AlwaysAllow");
		assertThat(pdb.getSpec().getSelector().getMatchLabels())
			.containsEntry("app.kubernetes.io/instance", HelmChart.RELEASE)
			.containsEntry("app.kubernetes.io/name", "ratelimit-gateway");
	}

	@Test
	void podDisruptionBudgetWithMinAvailablePercentage() {
		PodDisruptionBudget pdb = HelmChart.render(HelmChart.template()
			.set("podDisruptionBudget.enabled", true)
			.set("podDisruptionBudget.minAvailable", "50%")
			.set("podDisruptionBudget.maxUnavailable", "null")).one(PodDisruptionBudget.class);

		assertThat(pdb.getSpec().getMinAvailable().getStrVal()).isEqualTo("50%");
		assertThat(pdb.getSpec().getMaxUnavailable()).isNull();
	}

	@Test
	void serviceMonitorScrapesTheManagementPort() {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template()
			.set("serviceMonitor.enabled", true)
			.set("serviceMonitor.labels.release", "kube-prometheus-stack"));

		// A custom resource: fabric8 parses it as a generic resource.
		GenericKubernetesResource monitor = manifests.one(GenericKubernetesResource.class);
		assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
		assertThat(monitor.getKind()).isEqualTo("ServiceMonitor");
		assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
		List<?> endpoints = monitor.get("spec", "endpoints");
		assertThat(endpoints).singleElement().asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
			.containsEntry("port", "management")
			.containsEntry("path", "/actuator/prometheus")
			.containsEntry("interval", "30s");
		assertThat(RenderedConfig.of(manifests).get("management.endpoints.web.exposure.include", String[].class))
			.containsExactly("health", "info", "gateway", "prometheus");
	}

	@Test
	void networkPolicyKeepsTheActuatorPrivate() {
		NetworkPolicy policy = HelmChart.render(HelmChart.template()
			.set("networkPolicy.enabled", true)
			.set("networkPolicy.managementFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name",
					"monitoring"))
			.one(NetworkPolicy.class);

		assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
		assertThat(policy.getSpec().getPodSelector().getMatchLabels())
			.containsEntry("app.kubernetes.io/name", "ratelimit-gateway");
		List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress();
		assertThat(rules).hasSize(2);
		// Requests from anywhere (no from: the gateway is the entry point).
		assertThat(rules.get(0).getPorts()).singleElement()
			.satisfies((port) -> assertThat(port.getPort().getStrVal()).isEqualTo("http"));
		assertThat(rules.get(0).getFrom()).isNullOrEmpty();
		// The actuator: this release's pods (helm test) and the monitoring namespace only.
		assertThat(rules.get(1).getPorts()).singleElement()
			.satisfies((port) -> assertThat(port.getPort().getStrVal()).isEqualTo("management"));
		assertThat(rules.get(1).getFrom()).hasSize(2);
		assertThat(rules.get(1).getFrom().get(0).getPodSelector().getMatchLabels())
			.containsExactlyEntriesOf(java.util.Map.of("app.kubernetes.io/instance", HelmChart.RELEASE));
		assertThat(rules.get(1).getFrom().get(1).getNamespaceSelector().getMatchLabels())
			.containsEntry("kubernetes.io/metadata.name", "monitoring");
	}

	@Test
	void networkPolicyWithEgressKeepsDns() {
		NetworkPolicy policy = HelmChart.render(HelmChart.template()
			.set("networkPolicy.enabled", true)
			.set("networkPolicy.egress[0].ports[0].port", 6379)).one(NetworkPolicy.class);

		assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
		assertThat(policy.getSpec().getEgress()).hasSize(2);
		assertThat(policy.getSpec().getEgress().get(0).getPorts()).extracting((p) -> p.getPort().getIntVal())
			.containsOnly(53);
		assertThat(policy.getSpec().getEgress().get(1).getPorts().get(0).getPort().getIntVal()).isEqualTo(6379);
	}

	@Test
	void ingressRoutesToTheRequestPortOnly() {
		Ingress ingress = HelmChart.render(HelmChart.template()
			.set("ingress.enabled", true)
			.set("ingress.className", "nginx")
			.set("ingress.tls[0].secretName", "gateway-tls")
			.set("ingress.tls[0].hosts[0]", "gateway.example.com")
			.set("rateLimit.trustedProxies", 1)).one(Ingress.class);

		assertThat(ingress.getSpec().getIngressClassName()).isEqualTo("nginx");
		assertThat(ingress.getSpec().getTls()).singleElement()
			.satisfies((tls) -> assertThat(tls.getSecretName()).isEqualTo("gateway-tls"));
		var path = ingress.getSpec().getRules().get(0).getHttp().getPaths().get(0);
		assertThat(ingress.getSpec().getRules().get(0).getHost()).isEqualTo("gateway.example.com");
		assertThat(path.getPathType()).isEqualTo("Prefix");
		assertThat(path.getBackend().getService().getName()).isEqualTo(HelmChart.FULLNAME);
		assertThat(path.getBackend().getService().getPort().getName()).isEqualTo("http");
	}

	@Test
	void everythingAtOnce() {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template()
			.set("autoscaling.enabled", true)
			.set("podDisruptionBudget.enabled", true)
			.set("serviceMonitor.enabled", true)
			.set("networkPolicy.enabled", true)
			.set("ingress.enabled", true)
			.set("rateLimit.trustedProxies", 1)
			.set("redis.auth.password", "pw")
			.set("apiKeys.keys.k1", "free"));

		assertThat(manifests.kinds().keySet()).containsExactlyInAnyOrder(
				"ServiceAccount/edge-ratelimit-gateway", "ConfigMap/edge-ratelimit-gateway",
				"Secret/edge-ratelimit-gateway-redis", "Secret/edge-ratelimit-gateway-api-keys",
				"Service/edge-ratelimit-gateway", "Deployment/edge-ratelimit-gateway",
				"HorizontalPodAutoscaler/edge-ratelimit-gateway", "Ingress/edge-ratelimit-gateway",
				"NetworkPolicy/edge-ratelimit-gateway", "PodDisruptionBudget/edge-ratelimit-gateway",
				"ServiceMonitor/edge-ratelimit-gateway");
	}

	@Test
	void topologySpreadAndPreStopCanBeSwitchedOff() {
		Deployment deployment = HelmChart.render(HelmChart.template()
			.set("topologySpread.enabled", false)
			.set("shutdown.preStopSleepSeconds", 0)).one(Deployment.class);

		assertThat(deployment.getSpec().getTemplate().getSpec().getTopologySpreadConstraints()).isNullOrEmpty();
		assertThat(DefaultValuesTest.gateway(deployment).getLifecycle()).isNull();
	}

}
