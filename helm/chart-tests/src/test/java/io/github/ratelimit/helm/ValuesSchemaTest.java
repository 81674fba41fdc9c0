package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * values.schema.json rejects wrong types, out-of-range numbers, unknown keys and malformed durations, naming the
 * value. Each case is a values file (a --set on a list element would replace the whole list).
 */
class ValuesSchemaTest {

	static Stream<Arguments> badValues() {
		return Stream.of(
				Arguments.of("replicaCount: -1", "at '/replicaCount': minimum: got -1, want 0"),
				Arguments.of("replicas: 3", "additional properties 'replicas' not allowed"),
				Arguments.of("rateLimit: { fallback: { instance: 3 } }",
						"at '/rateLimit/fallback': additional properties 'instance' not allowed"),
				Arguments.of("rateLimit: { protections: { orders-backend: { limit: elastic } } }",
						"at '/rateLimit/protections/orders-backend/limit': value must be one of 'adaptive', 'fixed'"),
				Arguments.of("rateLimit: { protections: { orders-backend: { max-in-flight: 64 } } }",
						"additional properties 'max-in-flight' not allowed"),
				Arguments.of("rateLimit: { priorities: { critical: 20% } }",
						"at '/rateLimit/priorities': additional properties 'critical' not allowed"),
				Arguments.of("rateLimit: { priorities: { high: \"0.5\" } }",
						"at '/rateLimit/priorities/high': '0.5' does not match"),
				Arguments.of("rateLimit: { plans: { free: { priority: urgent } } }",
						"at '/rateLimit/plans/free/priority': value must be one of 'critical', 'high', 'normal', 'low'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 20, refillTokens: 10, refillPeriod: 1 minute } ]
						""", "at '/rateLimit/plans/free/default/0/refillPeriod': '1 minute' does not match"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 0, refillTokens: 10, refillPeriod: 1s } ]
						""", "at '/rateLimit/plans/free/default/0/capacity': minimum: got 0, want 1"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 20, refill-tokens: 10, refillPeriod: 1s } ]
						""", "additional properties 'refill-tokens' not allowed"),
				Arguments.of("""
						rateLimit:
						  plans:
						    Free_Plan:
						      default: [ { capacity: 20, refillTokens: 10, refillPeriod: 1s } ]
						""", "invalid propertyName 'Free_Plan'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 20, refillTokens: 10, refillPeriod: 1s, scope: everyone } ]
						""", "at '/rateLimit/plans/free/default/0/scope': value must be one of 'client', 'global'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 20, refillTokens: 20, refillPeriod: 1s, algorithm: leaky-bucket } ]
						""", "at '/rateLimit/plans/free/default/0/algorithm': value must be one of"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: Tokens } ]
						""", "at '/rateLimit/plans/free/default/0/unit': 'Tokens' does not match"),
				Arguments.of("""
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: { usage: usage.total_tokens } }
						""", "at '/routes/0/rateLimit/usage': 'usage.total_tokens' does not match"),
				Arguments.of("""
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: { usage: bytes, reserve: 0 } }
						""", "at '/routes/0/rateLimit/reserve': minimum: got 0, want 1"),
				Arguments.of("""
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: { usage: bytes, reserve: max_tokens } }
						""", "at '/routes/0/rateLimit/reserve': 'max_tokens' does not match"),
				Arguments.of("""
						routes:
						  - { id: chat, predicates: [ "Path=/v1/chat/**" ], rateLimit: { usage: bytes, reserveMax: "1000" } }
						""", "at '/routes/0/rateLimit/reserveMax': got string, want integer"),
				Arguments.of("""
						routes:
						  - { id: login, predicates: [ "Path=/auth/login" ], rateLimit: { countWhen: "401;403" } }
						""", "at '/routes/0/rateLimit/countWhen': '401;403' does not match"),
				Arguments.of("""
						routes:
						  - { id: login, predicates: [ "Path=/auth/login" ], rateLimit: { countWhen: 600 } }
						""", "at '/routes/0/rateLimit/countWhen': maximum: got 600, want 599"),
				Arguments.of("""
						routes:
						  - { id: login, predicates: [ "Path=/auth/login" ], rateLimit: { count-when: "401,403" } }
						""", "additional properties 'count-when' not allowed"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      default: [ { type: calendar, limit: 100, period: day } ]
						""", "at '/rateLimit/plans/free/default/0/type': value must be one of 'rate', 'quota'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 0, period: month } ]
						""", "at '/rateLimit/plans/free/groups/search/0/limit': minimum: got 0, want 1"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 1.5, period: month } ]
						""", "at '/rateLimit/plans/free/groups/search/0/limit': got number, want integer"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: "1000", period: month } ]
						""", "at '/rateLimit/plans/free/groups/search/0/limit': got string, want integer"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 1000, period: monthly } ]
						""", "at '/rateLimit/plans/free/groups/search/0/period': 'monthly' does not match"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 1000, period: 30 } ]
						""", "at '/rateLimit/plans/free/groups/search/0/period': got number, want string"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, limit: 1000 } ]
						""", "at '/rateLimit/plans/free/groups/search/0': missing property 'period'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { type: quota, period: day } ]
						""", "at '/rateLimit/plans/free/groups/search/0': missing property 'limit'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      groups:
						        search: [ { limit: 1000, period: day } ]
						""", "at '/rateLimit/plans/free/groups/search/0': missing properties 'capacity', 'refillTokens', 'refillPeriod'"),
				Arguments.of("""
						rateLimit:
						  plans:
						    free:
						      quotaZone: Europe Berlin
						      default: [ { capacity: 20, refillTokens: 10, refillPeriod: 1s } ]
						""", "at '/rateLimit/plans/free/quotaZone': 'Europe Berlin' does not match"),
				Arguments.of("rateLimit: { quota: { firstDayOfWeek: sun } }",
						"at '/rateLimit/quota/firstDayOfWeek': value must be one of 'monday', 'tuesday'"),
				Arguments.of("rateLimit: { quota: { zone: \"\" } }", "at '/rateLimit/quota/zone': '' does not match"),
				Arguments.of("rateLimit: { quota: { first-day-of-week: sunday } }",
						"at '/rateLimit/quota': additional properties 'first-day-of-week' not allowed"),
				Arguments.of("rateLimit: { trustedProxies: 33 }", "at '/rateLimit/trustedProxies': maximum: got 33"),
				Arguments.of("rateLimit: { headerStyle: x-ratelimit }", "at '/rateLimit/headerStyle': value must be one of"),
				Arguments.of("rateLimit: { nonCanonicalPaths: strict }", "at '/rateLimit/nonCanonicalPaths': value must be one of"),
				Arguments.of("rateLimit: { fallback: { mode: deny } }", "at '/rateLimit/fallback/mode': value must be one of"),
				Arguments.of("rateLimit: { redisTimeout: 20 ms }", "at '/rateLimit/redisTimeout': '20 ms' does not match"),
				Arguments.of("""
						routes:
						  - { id: login, predicates: [ "Path=/auth/login" ], rateLimit: { group: login, keyBy: header } }
						""", "at '/routes/0/rateLimit/keyBy': value must be one of 'api-key', 'ip'"),
				Arguments.of("""
						routes:
						  - { id: login, rateLimit: { group: login } }
						""", "at '/routes/0': missing property 'predicates'"),
				Arguments.of("redis: { mode: sentinel }", "at '/redis/mode': value must be one of 'standalone', 'cluster'"),
				Arguments.of("redis: { mode: cluster, cluster: { nodes: [ redis-0 ] } }",
						"at '/redis/cluster/nodes/0': 'redis-0' does not match"),
				Arguments.of("image: { digest: latest }", "at '/image/digest': 'latest' does not match"),
				Arguments.of("tests: { image: { tag: latest } }", "at '/tests/image/tag'"),
				Arguments.of("management: { port: 70000 }", "at '/management/port': maximum"),
				Arguments.of("apiKeys: { keys: { k1: Gold Plan } }", "at '/apiKeys/keys/k1': 'Gold Plan' does not match"));
	}

	@ParameterizedTest(name = "{1}")
	@MethodSource("badValues")
	void rejects(String values, String message, @TempDir Path dir) throws IOException {
		HelmChart.assertRefuses(dir, values, "values don't meet the specifications of the schema", message);
	}

}
