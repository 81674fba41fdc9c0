package io.github.ratelimit.gateway.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rate limit script is its folder's files joined in the listed order ({@link LuaScript#RATE_LIMIT_SOURCES}):
 * every file of the folder once, and that joined text is what the store has Redis run.
 */
class RateLimitScriptSourcesTest {

	@Test
	void everyFileOfTheFolderIsJoinedOnceHelpersFirstAndTheDispatcherLast() throws Exception {
		List<String> files = new ArrayList<>();
		for (Resource resource : new PathMatchingResourcePatternResolver()
			.getResources("classpath*:" + LuaScript.RATE_LIMIT_FOLDER + "*.lua")) {
			files.add(LuaScript.RATE_LIMIT_FOLDER + resource.getFilename());
		}
		assertThat(files).hasSize(8);
		assertThat(LuaScript.RATE_LIMIT_SOURCES).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(files);
		assertThat(LuaScript.RATE_LIMIT_SOURCES.get(0)).endsWith("/common.lua");
		assertThat(LuaScript.RATE_LIMIT_SOURCES.get(LuaScript.RATE_LIMIT_SOURCES.size() - 1)).endsWith("/dispatch.lua");
	}

	@Test
	void theScriptIsTheFilesTextsOneAfterTheOther() throws Exception {
		assertThat(LuaScript.rateLimit().text()).isEqualTo(joined());
		assertThat(RedisRateLimitStore.rateLimitScript().getScriptAsString()).isEqualTo(joined());
	}

	@Test
	void redisRunsTheJoinedScript() throws Exception {
		TestRedis redis = TestRedis.shared();
		String sha1 = HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-1").digest(joined().getBytes(StandardCharsets.UTF_8)));
		assertThat(LuaScript.rateLimit().sha1()).isEqualTo(sha1);
		redis.flushAll();
		redis.command("SCRIPT", "FLUSH");
		LettuceConnectionFactory connectionFactory = StartedConnectionFactory.to(redis.host(), redis.port());
		RedisRateLimitStore store = new RedisRateLimitStore(new LettuceScriptExecutor(connectionFactory),
				new BucketKeys("rl"));
		try {
			store.start();
			PlanLimits limits = new PlanLimits("free", "search",
					List.of(new LimitDefinition("free-search-1s", 10, 10, Duration.ofSeconds(1)), LimitDefinition
						.window("free-search-1m", Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofMinutes(1))));
			assertThat(store.tryConsume(new ClientKey(ClientKey.Kind.API_KEY, "hashed-client", "free"), limits, 1)
				.get(30, TimeUnit.SECONDS)
				.allowed()).isTrue();
			assertThat(redis.command("SCRIPT", "EXISTS", sha1)).isEqualTo("1");
		}
		finally {
			store.destroy();
			connectionFactory.destroy();
		}
	}

	/** The files read one by one and put one after the other, each ending with a line break. */
	private static String joined() throws Exception {
		StringBuilder text = new StringBuilder();
		for (String location : LuaScript.RATE_LIMIT_SOURCES) {
			String file = new ClassPathResource(location).getContentAsString(StandardCharsets.UTF_8);
			assertThat(file).as(location).endsWith("\n");
			text.append(file);
		}
		return text.toString();
	}

}
