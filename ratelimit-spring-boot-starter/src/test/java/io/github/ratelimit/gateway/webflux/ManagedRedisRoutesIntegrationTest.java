package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.ratelimit.gateway.redis.RedisAccessProbe;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Redis as managed services run it (TLS only, ACL user with the minimal rule of the operations guide, default user
 * disabled), reached through Spring Boot's own properties: decisions come from that Redis over TLS as that user,
 * exact; plan look-ups and instance heartbeats work with the same rule; Redis logs no denied command; the start-up
 * probe logs no WARN.
 */
@ActiveProfiles("gateway-it")
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = { "spring.data.redis.username=" + ManagedRedisRouteIntegrationTest.USER,
		"spring.data.redis.password=" + ManagedRedisRouteIntegrationTest.PASSWORD, "ratelimit.plan-store.type=redis" })
class ManagedRedisRoutesIntegrationTest extends ManagedRedisRouteIntegrationTest {

	@Autowired
	private InstanceCounter instanceCounter;

	@Autowired
	private RedisAccessProbe probe;

	@Autowired
	private org.springframework.core.env.Environment environment;

	@Test
	void decisionsComeFromTheManagedRedisOverTlsAsTheAclUserAndAreExact() {
		assertThat(this.environment.getProperty("spring.data.redis.port")).isEqualTo(Integer.toString(redis.port()));
		// t (seconds until full) may be a second less on a loaded machine
		for (int i = 0; i < 2; i++) {
			get("/a/" + i, "key-one").expectStatus().isOk()
				.expectHeader().valueEquals("RateLimit-Policy", "\"free-a\";q=2;w=120")
				.expectHeader().valueMatches("RateLimit", "\"free-a\";r=" + (1 - i) + ";t=(" + (60 * (i + 1) - 1) + "|"
						+ (60 * (i + 1)) + ")");
		}
		get("/a/2", "key-one").expectStatus().isEqualTo(429)
			.expectHeader().valueMatches("RateLimit", "\"free-a\";r=0;t=(119|120)")
			.expectHeader().valueMatches("Retry-After", "59|60");
		// the bucket is in the managed Redis, written by the ACL user over TLS
		String bucket = "rl:{a|k:" + ApiKeyHasher.hash("key-one") + "}:0";
		assertThat(redis.command("EXISTS", bucket)).isEqualTo("1");
		assertThat(redis.command("CONFIG", "GET", "port")).isEqualTo("port\n0"); // no plain port: TLS or nothing
		assertThatThrownBy(() -> redis.plainCommand(Duration.ofSeconds(2), "PING"))
			.isInstanceOf(UncheckedIOException.class);
		assertThat(redis.command("CLIENT", "LIST").lines().filter((client) -> client.contains(" user=" + USER + " ")))
			.isNotEmpty()
			.noneMatch((client) -> client.contains(" user=default "));
		// a critical route decides from Redis too (anonymous plan, capacity 2), never 503
		this.client.get().uri("/auth/login").exchange().expectStatus().isOk().expectHeader().exists("RateLimit");
		assertThat(redis.command("ACL", "LOG")).as("commands Redis denied the limiter").isEmpty();
	}

	@Test
	void planLookupsAndHeartbeatsWorkWithTheMinimalRule(CapturedOutput output) {
		String apiKey = "managed-plan-key";
		redis.command("SET", RedisPlanStore.planKey("rl:plan:", apiKey), "free");
		// the first look-up may outlive the plan store's timeout while the shared connection opens: the client is then
		// limited by IP until the look-up is cached
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(get("/b/1", apiKey).expectBody()
			.returnResult().getResponseHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"free-b\";q=20;w=1200"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			this.instanceCounter.beat().get(30, TimeUnit.SECONDS);
			assertThat(redis.command("ZCARD", "rl:instances")).isEqualTo("1");
		});
		assertThat(this.instanceCounter.isLearned()).isTrue();
		assertThat(redis.command("ACL", "LOG")).as("commands Redis denied the limiter").isEmpty();
		// the start-up probe found nothing to warn about, and finds nothing now
		assertThat(this.probe.probe().join()).isNull();
		assertThat(output.getAll()).doesNotContain("Rate limiter: Redis refused").doesNotContain("Rate limiter: the Redis ACL user");
	}

	@Test
	void theMinimalRuleIsTheOneTheProbeAndTheOperationsGuideName() throws IOException {
		assertThat(RedisAccessProbe.aclRule("rl", null)).isEqualTo(MINIMAL_RULE);
		assertThat(RedisAccessProbe.aclRule("rl", "rl:plan:")).isEqualTo(MINIMAL_RULE);
		assertThat(RedisAccessProbe.aclRule("rl", "plans:")).startsWith("resetkeys ~rl:* ~plans:* resetchannels");
		String guide = Files.readString(Path.of("..", "src", "docs", "reference", "operations.md"));
		assertThat(guide).contains("ACL SETUSER ratelimiter on >PASSWORD " + MINIMAL_RULE);
	}

}
