package io.github.ratelimit.gateway.webflux;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.gateway.metrics.MicrometerRateLimitMetrics;
import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure policy with a real redis-server killed while the gateway serves: normal routes fall back to the
 * local limiter holding this instance's share (2 instances configured, so half of each limit), critical routes
 * answer 503, the health component stays UP and says where decisions come from, and metrics count it all.
 */
@ActiveProfiles("gateway-it")
@TestPropertySource(properties = { "ratelimit.redis-timeout=100ms",
		"ratelimit.circuit-breaker.wait-duration-in-open-state=1s", "ratelimit.fallback.instances=2",
		"ratelimit.fallback.learn-instances=false" })
class LocalFallbackShareRoutesIntegrationTest extends OwnRedisRouteIntegrationTest {

	@Test
	void stoppedRedisFallsBackToTheLocalShareAndCriticalRoutesFailClosed() {
		double allowedBefore = count("fallback-allowed");
		double deniedBefore = count("fallback-denied");
		double closedBefore = count("failed-closed");
		redis.kill();
		// free default: capacity 20 shared by 2 instances -> 10 here; no 429 while the client stays within it
		for (int i = 0; i < 10; i++) {
			EntityExchangeResult<byte[]> result = exchange("/b/" + i, "key-one");
			assertThat(result.getStatus().value()).as("request %d", i).isEqualTo(200);
			assertThat(result.getResponseHeaders().getFirst("RateLimit")).isNull();
		}
		EntityExchangeResult<byte[]> over = exchange("/b/11", "key-one");
		assertThat(over.getStatus().value()).isEqualTo(429);
		assertThat(over.getResponseHeaders().getFirst("Retry-After")).isEqualTo("120"); // 0.5 token/min here
		for (int i = 0; i < 3; i++) {
			this.client.get().uri("/auth/login").exchange().expectStatus().isEqualTo(503)
				.expectHeader().valueEquals("Retry-After", "1");
		}
		assertThat(this.meters.find(MicrometerRateLimitMetrics.REDIS_ERRORS).counters().stream()
			.mapToDouble(Counter::count).sum()).isGreaterThanOrEqualTo(14);
		assertThat(this.meters.find(MicrometerRateLimitMetrics.CHECKS).tag("source", "local-fallback").timer().count())
			.isGreaterThanOrEqualTo(11);
		assertThat(this.meters.find(MicrometerRateLimitMetrics.TRANSITIONS).tag("from", "closed").tag("to", "open")
			.counter().count()).isGreaterThanOrEqualTo(1);
		assertThat(count("fallback-allowed") - allowedBefore).isEqualTo(10);
		assertThat(count("fallback-denied") - deniedBefore).isEqualTo(1);
		assertThat(count("failed-closed") - closedBefore).isEqualTo(3);
		this.client.get().uri("/actuator/health").exchange().expectBody()
			.jsonPath("$.components.rateLimiter.status").isEqualTo("UP")
			.jsonPath("$.components.rateLimiter.details.circuitBreaker").isEqualTo("OPEN")
			.jsonPath("$.components.rateLimiter.details.decisions").isEqualTo("local-fallback")
			.jsonPath("$.components.rateLimiter.details.instances").isEqualTo(2);
	}

	@Test
	void stoppedRedisAt10RequestsPerSecondKeepsLatencyThreadsAndSocketsFlat() {
		// Case: Redis stopped, 100 requests at 10 per second
		exchange("/b/warm", "key-two");
		int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
		int descriptorsBefore = openFileDescriptors();
		redis.kill();
		List<Long> millis = Flux.interval(Duration.ofMillis(100), Schedulers.boundedElastic())
			.take(100)
			.map((i) -> {
				long start = System.nanoTime();
				int status = exchange("/b/" + i, "load-" + i).getStatus().value();
				long end = System.nanoTime();
				assertThat(status).isEqualTo(200);
				return (end - start - stalls.stalledNanos(start, end)) / 1_000_000;
			})
			.collectList()
			.block(Duration.ofSeconds(60));
		List<Long> sorted = new ArrayList<>(millis);
		sorted.sort(null);
		System.out.println("Redis stopped, 100 requests at 10/s, ms (less stalls): p50 " + sorted.get(49) + ", p99 " + sorted.get(98)
				+ ", max " + sorted.get(99) + "; first 10 " + millis.subList(0, 10) + ", last 10 " + millis.subList(90, 100));
		assertThat(sorted.get(98)).isLessThan(600); // about the 100 ms timeout at worst
		List<Long> late = new ArrayList<>(millis.subList(50, 100));
		late.sort(null);
		assertThat(late.get(25)).as("median of the last 50 (breaker open)").isLessThan(30);
		int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
		int descriptorsAfter = openFileDescriptors();
		System.out.println("Threads " + threadsBefore + " -> " + threadsAfter + ", open files " + descriptorsBefore
				+ " -> " + descriptorsAfter);
		assertThat(threadsAfter - threadsBefore).isLessThanOrEqualTo(10);
		assertThat(descriptorsAfter - descriptorsBefore).isLessThanOrEqualTo(20);
	}

	@Test
	void redisKilledMidTrafficNeverAnswers5xxOnNormalRoutes() {
		WebClient web = webClient();
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		AtomicInteger done = new AtomicInteger();
		Flux.range(0, 600)
			.flatMap((i) -> web.get().uri("/b/" + i).header("X-API-Key", "load-" + (i % 50))
				.exchangeToMono((r) -> r.releaseBody().thenReturn(r.statusCode().value()))
				// a request without an answer is reported as status -1, not as a stalled test
				.timeout(Duration.ofSeconds(15))
				.doOnError((ex) -> System.out.println("No answer: " + ex))
				.onErrorReturn(-1), 8)
			.doOnNext((status) -> {
				statuses.computeIfAbsent(status, (s) -> new AtomicInteger()).incrementAndGet();
				if (done.incrementAndGet() == 150) {
					Schedulers.boundedElastic().schedule(redis::kill);
				}
			})
			.blockLast(Duration.ofSeconds(180));
		System.out.println("Redis killed after 150 of 600 responses; statuses: " + statuses);
		assertThat(statuses.keySet()).allSatisfy((status) -> assertThat(status).isIn(200, 429));
		assertThat(statuses.get(200).get()).isGreaterThan(400); // 50 keys x 20 capacity, halved locally
	}

	private double count(String outcome) {
		Counter counter = this.meters.find(MicrometerRateLimitMetrics.DECISIONS).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static int openFileDescriptors() {
		String[] entries = new File("/proc/self/fd").list();
		return (entries != null) ? entries.length : 0;
	}

	private EntityExchangeResult<byte[]> exchange(String path, String apiKey) {
		return this.client.get().uri(path).header("X-API-Key", apiKey).exchange().expectBody().returnResult();
	}

}
