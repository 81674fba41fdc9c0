package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

import com.marcnuri.helm.TemplateCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The chart's own checks (_validate.tpl) refuse contradictory values with a message naming the value and the fix. */
class ValuesValidationTest {

	static Stream<Arguments> contradictions() {
		return Stream.of(
				Arguments.of(values("autoscaling.enabled", true, "replicaCount", 0),
						"replicaCount is 0 while autoscaling.enabled is true"),
				Arguments.of(values("autoscaling.enabled", true, "autoscaling.minReplicas", 5, "autoscaling.maxReplicas", 3),
						"autoscaling.minReplicas (5) is above autoscaling.maxReplicas (3)"),
				Arguments.of(values("autoscaling.enabled", true, "autoscaling.targetCPUUtilizationPercentage", "null"),
						"the HPA would have no metric"),
				Arguments.of(values("redis.mode", "cluster"), "redis.mode is cluster but redis.cluster.nodes is empty"),
				Arguments.of(values("redis.host", ""), "redis.mode is standalone but redis.host is empty"),
				Arguments.of(values("redis.auth.password", "pw", "redis.auth.existingSecret", "redis"),
						"redis.auth.password and redis.auth.existingSecret are both set"),
				Arguments.of(values("apiKeys.keys.k1", "free", "apiKeys.existingSecret", "keys"),
						"apiKeys.keys and apiKeys.existingSecret are both set"),
				Arguments.of(values("apiKeys.keys.k1", "gold"), "maps an API key to plan 'gold'"),
				Arguments.of(values("rateLimit.anonymousPlan", "guest"), "rateLimit.anonymousPlan is 'guest'"),
				Arguments.of(values("podDisruptionBudget.enabled", true, "podDisruptionBudget.minAvailable", 2,
						"podDisruptionBudget.maxUnavailable", "null"),
						"podDisruptionBudget.minAvailable (2) is not below the replica count (2)"),
				Arguments.of(values("podDisruptionBudget.enabled", true, "podDisruptionBudget.minAvailable", 1),
						"set minAvailable or maxUnavailable, not both"),
				Arguments.of(values("podDisruptionBudget.enabled", true, "podDisruptionBudget.maxUnavailable", 0),
						"podDisruptionBudget.maxUnavailable is 0"),
				Arguments.of(values("management.port", 8080), "management.port equals server.port (8080)"),
				Arguments.of(values("ingress.enabled", true),
						"ingress.enabled is true but rateLimit.trustedProxies is 0"));
	}

	@ParameterizedTest(name = "{1}")
	@MethodSource("contradictions")
	void fails(Map<String, Object> values, String message) {
		TemplateCommand command = HelmChart.template();
		values.forEach(command::set);

		assertThatIllegalStateException().isThrownBy(command::call)
			.withMessageContaining("The values of chart ratelimit-gateway are invalid")
			.withMessageContaining(message);
	}

	/** Routes come as a values file: --set on a list element replaces the whole list. */
	static Stream<Arguments> badRoutes() {
		return Stream.of(
				Arguments.of("""
						routes:
						  - { id: search, predicates: [ "Path=/api/search/**" ], rateLimit: { group: serach } }
						""", "routes[0] (search) names endpoint group 'serach'"),
				Arguments.of("""
						routes:
						  - { id: search, predicates: [ "Path=/api/search/**" ], rateLimit: { group: search } }
						  - { id: search, predicates: [ "Path=/api/**" ], rateLimit: {} }
						""", "routes[1].id 'search' is used by an earlier route too"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        chat: [ { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: tokens } ]
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: {} }
						""", "routes[0] (chat) has no rateLimit.usage, but endpoint group 'chat' counts 'tokens' in plan 'free'"),
				Arguments.of("""
						routes:
						  - { id: search, predicates: [ "Path=/api/search/**" ], rateLimit: { group: search, usage: bytes } }
						""", "routes[0] (search) sets rateLimit.usage, but no limit of endpoint group 'search' that can apply has a unit"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        chat: [ { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: tokens } ]
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: { keyBy: ip, usage: "json:usage.total_tokens" } }
						""", "routes[0] (chat) sets rateLimit.usage, but no limit of endpoint group 'chat' that can apply has a unit"),
				Arguments.of("""
						routes:
						  - { id: api, predicates: [ "Path=/api/**" ], rateLimit: { reserveMax: 1000 } }
						""", "routes[0] (api) sets rateLimit.reserveMax, which applies only with usage"),
				Arguments.of("""
						rateLimit:
						  plans:
						    pro:
						      groups:
						        chat: [ { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: tokens, algorithm: sliding-window-log } ]
						""", "rateLimit.plans.pro.groups.chat[0] counts 'tokens' with algorithm sliding-window-log"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { capacity: 5, refillTokens: 1, refillPeriod: 1s },
						                  { type: quota, limit: 1000, period: day, refillPeriod: 1d } ]
						""", "rateLimit.plans.free.groups.search[1] is a quota (type: quota), which does not take refillPeriod. A quota is limit and period"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 1000, period: day, algorithm: fixed-window } ]
						""", "rateLimit.plans.free.groups.search[0] is a quota (type: quota), which does not take algorithm"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 20, refillTokens: 10, refillPeriod: 1s, period: month } ]
						""", "rateLimit.plans.free.default[0] sets period, which only a quota takes. Make it a limit of its own with type: quota"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { type: rate, capacity: 20, refillTokens: 10, refillPeriod: 1s, limit: 100000 } ]
						""", "rateLimit.plans.free.default[0] sets limit, which only a quota takes"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        chat: [ { type: quota, limit: 2000000, period: month, unit: tokens } ]
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: {} }
						""", "routes[0] (chat) has no rateLimit.usage, but endpoint group 'chat' counts 'tokens' in plan 'free'"),
				Arguments.of("""
						rateLimit:
						  protections:
						    orders-backend: { max: 500 }
						routes:
						  - { id: orders, predicates: [ "Path=/api/orders/**" ], rateLimit: { protect: order-backend } }
						""", "routes[0] (orders) names protection 'order-backend', which rateLimit.protections does not define"),
				Arguments.of("""
						routes:
						  - { id: login, predicates: [ "Path=/auth/login" ], rateLimit: { group: login, priority: critical } }
						""", "routes[0] (login) sets rateLimit.priority without rateLimit.protect"),
				Arguments.of("""
						rateLimit:
						  protections:
						    orders-backend: { limit: fixed }
						""", "rateLimit.protections.orders-backend has limit: fixed but no maxInFlight"),
				Arguments.of("""
						rateLimit:
						  protections:
						    orders-backend: { limit: fixed, maxInFlight: 64, max: 500 }
						""", "rateLimit.protections.orders-backend has limit: fixed, which does not take max"),
				Arguments.of("""
						rateLimit:
						  protections:
						    orders-backend: { maxInFlight: 64 }
						""", "rateLimit.protections.orders-backend sets maxInFlight, which only limit: fixed takes"));

	}

	@ParameterizedTest(name = "{1}")
	@MethodSource("badRoutes")
	void failsOnRoutes(String values, String message, @TempDir Path dir) throws IOException {
		HelmChart.assertRefuses(dir, values, "The values of chart ratelimit-gateway are invalid", message);
	}

	@Test
	void reportsEveryProblemAtOnce() {
		TemplateCommand command = HelmChart.template()
			.set("redis.mode", "cluster")
			.set("rateLimit.anonymousPlan", "guest")
			.set("management.port", 8080);

		assertThatIllegalStateException().isThrownBy(command::call)
			.withMessageContaining("redis.cluster.nodes is empty")
			.withMessageContaining("rateLimit.anonymousPlan is 'guest'")
			.withMessageContaining("management.port equals server.port");
	}

	private static Map<String, Object> values(Object... keysAndValues) {
		Map<String, Object> values = new LinkedHashMap<>();
		for (int i = 0; i < keysAndValues.length; i += 2) {
			values.put((String) keysAndValues[i], keysAndValues[i + 1]);
		}
		return values;
	}

}
