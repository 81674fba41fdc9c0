package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.redis.StoredTokens;
import io.github.ratelimit.test.redis.RedisCluster;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Whole routes through a real gateway configured the Spring Boot way for a real three-master Redis Cluster
 * ({@code spring.data.redis.cluster.nodes}), with plans looked up in the cluster's plan store, and a usage route in
 * front of a real upstream that reports usage ({@link UsageUpstream}).
 */
class RedisClusterRoutesIntegrationTest extends ClusterRedisRouteIntegrationTest {

	private static final Pattern REMAINING = Pattern.compile(";r=(-?\\d+)");

	/** The gateway's Redis (instead of the shared test Redis). */
	private static final RedisCluster cluster = use(RedisCluster.start());

	private static final UsageUpstream usageUpstream = UsageUpstream.shared();

	@DynamicPropertySource
	static void usageUpstreamProperties(DynamicPropertyRegistry registry) {
		registry.add("usage.upstream.uri", usageUpstream::uri);
	}

	@Test
	void fiveRequestsAtOnceAgainstCapacityTwoAllowTwoAndDenyThree() {
		// the case of a public bug report: capacity 2, refill 1/s, 5 requests at t=0 for one key
		provision(cluster, "bug-report-key", "free");
		WebClient web = pooledWebClient();
		List<ResponseEntity<Void>> responses = Flux.range(0, 5)
			.flatMap((i) -> web.get().uri("/burst/" + i).header("X-API-Key", "bug-report-key").retrieve()
				.onStatus((status) -> true, (response) -> reactor.core.publisher.Mono.empty())
				.toBodilessEntity(), 5)
			.collectList()
			.block(Duration.ofSeconds(10));
		assertThat(responses).extracting((r) -> r.getStatusCode().value()).containsOnly(200, 429);
		assertThat(responses).filteredOn((r) -> r.getStatusCode().value() == 200).hasSize(2);
		assertThat(responses).filteredOn((r) -> r.getStatusCode().value() == 429).hasSize(3)
			.allSatisfy((r) -> assertThat(r.getHeaders().getFirst("Retry-After")).isEqualTo("1"));
		for (ResponseEntity<Void> response : responses) {
			String fields = response.getHeaders().getFirst("RateLimit");
			assertThat(fields).as("a decision from Redis").startsWith("\"free-burst\"");
			Matcher remaining = REMAINING.matcher(fields);
			assertThat(remaining.find()).isTrue();
			assertThat(Long.parseLong(remaining.group(1))).as("remaining in %s", fields).isBetween(0L, 1L);
		}
		String bucket = bucketKey("bug-report-key", "free", "burst");
		assertThat(cluster.masterOf(bucket).command("EXISTS", bucket)).isEqualTo("1");
	}

	@Test
	void clientsAreSpreadOverEveryMaster() {
		Set<RedisCluster.Node> owners = new HashSet<>();
		for (int i = 0; i < 30; i++) {
			String apiKey = "spread-" + i;
			provision(cluster, apiKey, "free");
			this.client.get().uri("/api/" + i).header("X-API-Key", apiKey).exchange()
				.expectStatus().isOk()
				.expectHeader().valueEquals("RateLimit", "\"free-api\";r=19;t=60");
			String bucket = bucketKey(apiKey, "free", "api");
			RedisCluster.Node owner = cluster.masterOf(bucket);
			assertThat(owner.command("EXISTS", bucket)).isEqualTo("1");
			owners.add(owner);
		}
		assertThat(owners).containsExactlyInAnyOrderElementsOf(cluster.masters());
	}

	@Test
	void aSettlementLandsOnTheMasterOfItsCheckAndChargesTheUsageReported() {
		provision(cluster, "usage-key", "free");
		String bucket = bucketKey("usage-key", "free", "chat");
		RedisCluster.Node owner = cluster.masterOf(bucket);
		// 100 reserved of 1,000, then 30 charged: 70 back
		this.client.get().uri("/v1/header/x?used=30").header("X-API-Key", "usage-key").exchange()
			.expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", ".*;r=900;.*");
		await().atMost(Duration.ofSeconds(10)).until(() -> tokens(owner, bucket), (t) -> t >= 969.9 && t < 972);
		// 100 reserved, then 600 charged: 500 more
		this.client.get().uri("/v1/header/y?used=600").header("X-API-Key", "usage-key").exchange()
			.expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", ".*;r=870;.*");
		await().atMost(Duration.ofSeconds(10)).until(() -> tokens(owner, bucket), (t) -> t >= 369.9 && t < 372);
		// the check and both settlements wrote one key, on the master owning its slot, and no other
		for (RedisCluster.Node master : cluster.masters()) {
			assertThat(master.command("KEYS", "rl:{chat|*")).as("keys of group chat on %s", master)
				.isEqualTo((master == owner) ? bucket : "");
		}
	}

	private static double tokens(RedisCluster.Node master, String bucket) {
		return StoredTokens.of(master::command, bucket, 1000, 1000, 3_600_000_000L);
	}

	@Test
	void unknownKeysAreLimitedByIpUnderTheAnonymousPlan() {
		this.client.get().uri("/api/x").header("X-API-Key", "never-provisioned").exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"anonymous-api\";q=2;w=120");
		// provisioned later: used once the negative cache entry (30 s) is gone; another key works at once
		provision(cluster, "fresh-key", "free");
		this.client.get().uri("/api/y").header("X-API-Key", "fresh-key").exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("RateLimit-Policy", "\"free-api\";q=20;w=1200");
	}

	@Test
	void ipv6ClientsAreLimitedPerSlash64() {
		// anonymous capacity 2; the trusted proxy writes the client address as the rightmost X-Forwarded-For entry
		ip("2001:db8:1:2::1").expectStatus().isOk();
		ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd").expectStatus().isOk();
		// a third address of the same /64 gains nothing
		ip("2001:db8:1:2::3").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		// the next /64 is another client
		ip("2001:db8:1:3::1").expectStatus().isOk();
		String bucket = "rl:{ip|ip:2001:db8:1:2:0:0:0:0/64}:0";
		assertThat(cluster.masterOf(bucket).command("EXISTS", bucket)).isEqualTo("1");
	}

	private WebTestClient.ResponseSpec ip(String address) {
		return this.client.get().uri("/ip/x").header("X-Forwarded-For", address).exchange();
	}

}
