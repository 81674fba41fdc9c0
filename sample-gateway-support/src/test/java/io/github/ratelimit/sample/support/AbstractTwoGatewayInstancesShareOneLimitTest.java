package io.github.ratelimit.sample.support;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.test.redis.RedisExtension;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two separately started instances of a sample gateway on one Redis hold one client to one limit: the free plan's
 * search bucket (capacity 5) admits 5 requests in total, however they are spread over the instances.
 */
@ExtendWith(RedisExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractTwoGatewayInstancesShareOneLimitTest {

	/** A key no other test uses, mapped to the free plan for these instances only. */
	private static final String API_KEY = "two-instances-" + UUID.randomUUID();

	private ConfigurableApplicationContext instanceA;

	private ConfigurableApplicationContext instanceB;

	/**
	 * The sample's application class.
	 * @return e.g. {@code SampleGatewayApplication.class}
	 */
	protected abstract Class<?> application();

	@BeforeAll
	void startTwoInstances(TestRedis redis) {
		// A generous Redis timeout: this test is about sharing, so a slow first call on a busy machine must not let
		// a request through undecided.
		// The search limit refills 1 token per second; a loaded machine can take more than a second for the burst, so
		// the test slows the refill to keep "exactly one plan's worth" exact (the whole list is given: Spring Boot
		// replaces lists from a higher-priority source as a whole).
		String[] settings = { "--ratelimit.api-keys[" + API_KEY + "]=free", "--ratelimit.redis-timeout=5s",
				"--ratelimit.plans.free.groups.search[0].capacity=5",
				"--ratelimit.plans.free.groups.search[0].refill-tokens=1",
				"--ratelimit.plans.free.groups.search[0].refill-period=1h" };
		this.instanceA = SampleGateways.start(application(), redis, settings);
		this.instanceB = SampleGateways.start(application(), redis, settings);
	}

	@AfterAll
	void stopInstances() {
		if (this.instanceA != null) {
			this.instanceA.close();
		}
		if (this.instanceB != null) {
			this.instanceB.close();
		}
	}

	@Test
	void alternatingRequestsToTwoInstancesShareOneBucket(TestRedis redis) {
		RestTestClient a = SampleGateways.client(this.instanceA);
		RestTestClient b = SampleGateways.client(this.instanceB);
		assertThat(SampleGateways.port(this.instanceA)).isNotEqualTo(SampleGateways.port(this.instanceB));
		// Warm both instances up with another client, so the burst below runs on hot paths.
		for (RestTestClient instance : List.of(a, b)) {
			EntityExchangeResult<String> warmUp = SampleGateways.get(instance, "/api/search/warm-up", "demo-pro-key");
			assertThat(warmUp.getStatus()).isEqualTo(HttpStatus.OK);
			assertThat(warmUp.getResponseHeaders().getFirst("RateLimit")).startsWith("\"pro-search\"");
		}

		List<EntityExchangeResult<String>> results = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			results.add(SampleGateways.get((i % 2 == 0) ? a : b, "/api/search/x", API_KEY));
		}

		List<Integer> statuses = results.stream().map((r) -> r.getStatus().value()).toList();
		// The first five find tokens (three on A, two on B), every later one finds the shared bucket empty.
		assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429);
		for (EntityExchangeResult<String> allowed : results.subList(0, 5)) {
			assertThat(allowed.getResponseBody()).contains("\"path\":\"/api/search/x\"");
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy"))
				.isEqualTo("\"free-search\";q=5;w=18000");
		}
		assertThat(results.get(4).getResponseHeaders().getFirst("RateLimit")).startsWith("\"free-search\";r=0;");
		for (EntityExchangeResult<String> denied : results.subList(5, 12)) {
			assertThat(Long.parseLong(denied.getResponseHeaders().getFirst("Retry-After"))).isGreaterThanOrEqualTo(1);
			assertThat(denied.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
			assertThat(denied.getResponseHeaders().getFirst("RateLimit")).startsWith("\"free-search\";r=0;");
			String problem = denied.getResponseBody();
			assertThat(JsonPath.<Integer>read(problem, "$.status")).isEqualTo(429);
			assertThat(JsonPath.<String>read(problem, "$.type")).endsWith("#quota-exceeded");
			assertThat(JsonPath.<List<String>>read(problem, "$['violated-policies']")).containsExactly("free-search");
		}
		// The bucket lives in Redis under the key's hash, never the raw key.
		assertThat(redis.command("KEYS", "*")).contains("search|k:").doesNotContain(API_KEY);
	}

}
