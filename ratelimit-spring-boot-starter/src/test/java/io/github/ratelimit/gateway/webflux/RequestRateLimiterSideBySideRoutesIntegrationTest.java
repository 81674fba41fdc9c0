package io.github.ratelimit.gateway.webflux;

import java.util.List;

import io.github.ratelimit.gateway.http.RateLimitProblems;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.webflux.ProblemDetailResponseWriter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's {@code RateLimit} filter and Spring Cloud Gateway's own {@code RequestRateLimiter} (its
 * {@link RedisRateLimiter}, keyed by a {@link KeyResolver} bean of the application) on different routes of one
 * gateway, on one real Redis, through real HTTP: each limits its own route as it documents, and neither touches the
 * other's buckets. Routes: {@code /a/**} with {@code RateLimit=a} (plan free: capacity 2, 1 token per minute) and
 * {@code /gateway-limited/**} with {@code RequestRateLimiter} (3 requests, then 1 per minute); profiles
 * {@code gateway-it} and {@code request-rate-limiter-it}.
 */
@SpringBootTest(classes = RequestRateLimiterSideBySideRoutesIntegrationTest.GatewayWithBothLimiters.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles({ "gateway-it", "request-rate-limiter-it" })
class RequestRateLimiterSideBySideRoutesIntegrationTest extends BaseRouteIntegrationTest {

	/** The headers {@link RedisRateLimiter} writes on every answer of its route. */
	private static final List<String> GATEWAY_HEADERS = List.of(RedisRateLimiter.REMAINING_HEADER,
			RedisRateLimiter.REPLENISH_RATE_HEADER, RedisRateLimiter.BURST_CAPACITY_HEADER,
			RedisRateLimiter.REQUESTED_TOKENS_HEADER);

	/** The header fields the starter writes on allowed and denied answers (header-style ietf). */
	private static final List<String> STARTER_HEADERS = List.of("RateLimit", "RateLimit-Policy",
			HttpHeaders.RETRY_AFTER);

	@Autowired
	ApplicationContext context;

	@Test
	void gatewaysLimiterUsesTheApplicationsKeyResolverAndTheStartersFilterIsThereToo() {
		assertThat(this.context.getBeansOfType(KeyResolver.class)).containsOnlyKeys("apiKeyResolver");
		assertThat(this.context.getBeansOfType(RateLimiter.class)).containsOnlyKeys("redisRateLimiter");
		RequestRateLimiterGatewayFilterFactory requestRateLimiter = this.context
			.getBean(RequestRateLimiterGatewayFilterFactory.class);
		assertThat(requestRateLimiter.getDefaultKeyResolver()).isSameAs(this.context.getBean("apiKeyResolver"));
		assertThat(requestRateLimiter.getDefaultRateLimiter()).isInstanceOf(RedisRateLimiter.class);
		assertThat(this.context.getBeansOfType(RateLimitGatewayFilterFactory.class)).hasSize(1);
	}

	@Test
	void theStartersRouteAllowsItsCapacityThenAnswers429WithItsFieldsAndAProblemBody() {
		for (int i = 1; i <= 2; i++) {
			EntityExchangeResult<String> allowed = exchange("/a/" + i, "key-one");
			assertThat(allowed.getStatus()).as("request %d", i).isEqualTo(HttpStatus.OK);
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-a\";q=2;w=120");
			assertThat(allowed.getResponseHeaders().getFirst("RateLimit"))
				.matches(aboutRateLimit("\"free-a\";r=" + (2 - i) + ";t=" + (60 * i)));
			assertThat(GATEWAY_HEADERS).noneMatch(allowed.getResponseHeaders()::containsHeader);
		}

		EntityExchangeResult<String> denied = exchange("/a/3", "key-one");

		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		HttpHeaders headers = denied.getResponseHeaders();
		// one token per minute: the next one comes at most 60 s after the first request
		assertThat(Long.parseLong(headers.getFirst(HttpHeaders.RETRY_AFTER))).isBetween(50L, 60L);
		assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"free-a\";q=2;w=120");
		assertThat(headers.getFirst("RateLimit")).matches(aboutRateLimit("\"free-a\";r=0;t=120"));
		assertThat(headers.getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(GATEWAY_HEADERS).noneMatch(headers::containsHeader);
		assertThat(denied.getResponseBody()).contains("\"type\":\"" + RateLimitProblems.QUOTA_EXCEEDED + "\"")
			.contains("\"violated-policies\":[\"free-a\"]");
	}

	@Test
	void gatewaysRouteAllowsItsBurstThenAnswers429WithItsOwnHeaders() {
		for (int i = 1; i <= 3; i++) {
			EntityExchangeResult<String> allowed = exchange("/gateway-limited/" + i, "key-one");
			assertThat(allowed.getStatus()).as("request %d", i).isEqualTo(HttpStatus.OK);
			HttpHeaders headers = allowed.getResponseHeaders();
			assertThat(headers.getFirst(RedisRateLimiter.BURST_CAPACITY_HEADER)).isEqualTo("180");
			assertThat(headers.getFirst(RedisRateLimiter.REPLENISH_RATE_HEADER)).isEqualTo("1");
			assertThat(headers.getFirst(RedisRateLimiter.REQUESTED_TOKENS_HEADER)).isEqualTo("60");
			// 60 tokens per request from 180, plus 1 per second that passed since the first request
			assertThat(Long.parseLong(headers.getFirst(RedisRateLimiter.REMAINING_HEADER)))
				.isBetween(180L - 60 * i, 180L - 60 * i + 30);
			assertThat(STARTER_HEADERS).noneMatch(headers::containsHeader);
		}

		EntityExchangeResult<String> denied = exchange("/gateway-limited/4", "key-one");

		assertThat(denied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		HttpHeaders headers = denied.getResponseHeaders();
		assertThat(Long.parseLong(headers.getFirst(RedisRateLimiter.REMAINING_HEADER))).isBetween(0L, 30L);
		assertThat(headers.getFirst(RedisRateLimiter.BURST_CAPACITY_HEADER)).isEqualTo("180");
		// Gateway's denial: the status and its headers only, none of the starter's fields or body
		assertThat(STARTER_HEADERS).noneMatch(headers::containsHeader);
		assertThat(denied.getResponseBody()).isNull();
		// no key: the KeyResolver gives none, which Gateway refuses (deny-empty-key)
		this.client.get().uri("/gateway-limited/5").exchange().expectStatus().isForbidden();
	}

	@Test
	void exhaustingOneLimiterLeavesTheOtherAloneAndTheirRedisKeysAreDistinct() {
		String one = ApiKeyHasher.hash("key-one");
		String two = ApiKeyHasher.hash("key-two");
		String startersBucket = "rl:{a|k:" + one + "}:0";
		// the starter's route spent, for key-one
		exchange("/a/1", "key-one");
		exchange("/a/2", "key-one");
		assertThat(exchange("/a/3", "key-one").getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		String spent = redis.command("GET", startersBucket);
		// Gateway's route still has its whole burst for the same key, and spending it...
		for (int i = 1; i <= 3; i++) {
			assertThat(exchange("/gateway-limited/" + i, "key-one").getStatus()).as("request %d", i)
				.isEqualTo(HttpStatus.OK);
		}
		assertThat(exchange("/gateway-limited/4", "key-one").getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// ...did not touch the starter's bucket: the same state in Redis, and Redis still denies (the denial this
		// instance remembers is forgotten, so the check goes to Redis)
		assertThat(redis.command("GET", startersBucket)).isEqualTo(spent);
		this.overLimitCache.clear();
		EntityExchangeResult<String> stillDenied = exchange("/a/4", "key-one");
		assertThat(stillDenied.getStatus()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(stillDenied.getResponseHeaders().getFirst("RateLimit")).matches("\"free-a\";r=0;t=\\d+");
		// another key has a full bucket on each route
		assertThat(exchange("/a/1", "key-two").getStatus()).isEqualTo(HttpStatus.OK);
		assertThat(exchange("/gateway-limited/1", "key-two").getStatus()).isEqualTo(HttpStatus.OK);

		List<String> keys = List.of(redis.command("KEYS", "*").split("\n"));
		assertThat(keys).noneMatch((key) -> key.contains("key-one") || key.contains("key-two"));
		// the keys of these routes (other cached test gateways may write heartbeats and returned leases meanwhile)
		assertThat(keys).filteredOn((key) -> key.startsWith("rl:{a|") || key.startsWith("request_rate_limiter."))
			.containsExactlyInAnyOrder(startersBucket, "rl:{a|k:" + two + "}:0",
					"request_rate_limiter.{gateway-limited." + one + "}.tokens",
					"request_rate_limiter.{gateway-limited." + one + "}.timestamp",
					"request_rate_limiter.{gateway-limited." + two + "}.tokens",
					"request_rate_limiter.{gateway-limited." + two + "}.timestamp");
	}

	private EntityExchangeResult<String> exchange(String path, String apiKey) {
		return this.client.get()
			.uri(path)
			.header("X-API-Key", apiKey)
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	/**
	 * A gateway with the starter and Gateway's {@code RequestRateLimiter}, set up the way Gateway's documentation
	 * does: its {@code RedisRateLimiter} from Gateway's own auto-configuration, and a {@link KeyResolver} bean named
	 * by the route ({@code #{@apiKeyResolver}}). Plans come from {@code ratelimit.api-keys} (gateway-it).
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class GatewayWithBothLimiters {

		/**
		 * Gateway's limiter keyed by the API key: by its hash, since {@link RedisRateLimiter} puts the key in its
		 * Redis key names ({@code request_rate_limiter.{<route>.<key>}.tokens}). No key: empty, which Gateway answers
		 * 403 (its {@code deny-empty-key}).
		 * @return the resolver
		 */
		@Bean
		KeyResolver apiKeyResolver() {
			return new HashedApiKeyResolver();
		}

	}

	/** A {@link KeyResolver} of the {@code X-API-Key} header, hashed with {@link ApiKeyHasher}. */
	static final class HashedApiKeyResolver implements KeyResolver {

		@Override
		public Mono<String> resolve(ServerWebExchange exchange) {
			return Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-API-Key")).map(ApiKeyHasher::hash);
		}

		@Override
		public String toString() {
			return "HashedApiKeyResolver[X-API-Key]";
		}

	}

}
