package io.github.ratelimit.benchmarks;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationImportFilter;
import org.springframework.boot.autoconfigure.AutoConfigurationMetadata;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * A Spring Boot context holding the starter's beans as an application gets them: Boot's own Redis
 * auto-configuration (one {@code LettuceConnectionFactory}, Boot's defaults; the starter's limiter opens its own
 * connection from its client) and the starter's auto-configurations, so the limiter measured is the one the {@code RateLimit} filter uses, whatever
 * the starter wires into it (over-limit cache, timeout, circuit breaker, metrics). No web server and no Gateway
 * routes: {@link OnlyRedisAndStarter} keeps every other auto-configuration out.
 */
final class BenchContext {

	/** Plan of every benchmark client. */
	static final String PLAN = "bench";

	/** Endpoint group whose limit is so high that practically every check is allowed. */
	static final String GROUP_ALLOWED = "allowed";

	/** Endpoint group of 1 token refilled once an hour: after one pass every key is over its limit. */
	static final String GROUP_OVER = "over";

	/** Endpoint group of the hot abusive client: 10 tokens per minute. */
	static final String GROUP_HOT = "hot";

	/** The starter's Redis timeout in these benchmarks. */
	static final String REDIS_TIMEOUT = "100ms";

	private BenchContext() {
	}

	static ConfigurableApplicationContext start(String host, int port) {
		Map<String, Object> props = new LinkedHashMap<>();
		props.put("spring.main.banner-mode", "off");
		props.put(OnlyRedisAndStarter.PROPERTY, true);
		props.put("spring.data.redis.host", host);
		props.put("spring.data.redis.port", port);
		props.put("ratelimit.anonymous-plan", "anonymous");
		limit(props, "ratelimit.plans.anonymous.default[0]", 60, 60, "1m");
		limit(props, "ratelimit.plans." + PLAN + ".default[0]", 1_000_000, 1_000_000, "1s");
		limit(props, "ratelimit.plans." + PLAN + ".groups." + GROUP_ALLOWED + "[0]", 1_000_000, 1_000_000, "1s");
		limit(props, "ratelimit.plans." + PLAN + ".groups." + GROUP_OVER + "[0]", 1, 1, "1h");
		limit(props, "ratelimit.plans." + PLAN + ".groups." + GROUP_HOT + "[0]", 10, 10, "1m");
		// no instance heartbeat: it would add EVALSHA calls to INFO commandstats (the hot-key measurement)
		props.put("ratelimit.fallback.learn-instances", "false");
		// The sample gateway's timeout rather than the 20 ms default: with 256 checks in flight on one connection,
		// queueing alone can exceed 20 ms, and the fallback's microsecond answers are not what is measured (the
		// peers have no timeout at all). Answers of the fallback are counted apart, never as throughput.
		props.put("ratelimit.redis-timeout", REDIS_TIMEOUT);
		SpringApplication application = new SpringApplication(BenchConfiguration.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(props);
		application.setLogStartupInfo(false);
		return application.run("--spring.config.location=optional:classpath:/nothing/");
	}

	/**
	 * Put one limit's properties.
	 * @param props the properties
	 * @param prefix the limit's property, e.g. {@code ratelimit.plans.free.default[0]}
	 * @param capacity its capacity in tokens
	 * @param refill the tokens it refills per period
	 * @param period the refill period, e.g. {@code 1s}
	 */
	static void limit(Map<String, Object> props, String prefix, long capacity, long refill, String period) {
		props.put(prefix + ".capacity", capacity);
		props.put(prefix + ".refill-tokens", refill);
		props.put(prefix + ".refill-period", period);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class BenchConfiguration {

		/** Meters are recorded, as in an application with Micrometer (the sample gateway has Prometheus). */
		@Bean
		MeterRegistry benchMeterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	/**
	 * Lets only Spring Data Redis' and the starter's auto-configurations in, in a context whose environment sets
	 * {@value #PROPERTY} (this one); any other Boot application in the harness' JVMs (the benchmark gateway,
	 * {@link BenchGateway}) keeps all of its auto-configurations. Boot also asks this filter about the classes that
	 * auto-configurations import (e.g. {@code LettuceConnectionConfiguration}): only auto-configuration candidates
	 * themselves are filtered.
	 */
	public static final class OnlyRedisAndStarter implements AutoConfigurationImportFilter, EnvironmentAware {

		/** Property that turns the filter on (boolean). */
		static final String PROPERTY = "benchmarks.only-redis-and-starter";

		private boolean active;

		private static final Set<String> ALLOWED = Set.of(
				"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
				"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
				"org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration");

		private final Set<String> candidates = new HashSet<>();

		public OnlyRedisAndStarter() {
			ImportCandidates.load(AutoConfiguration.class, OnlyRedisAndStarter.class.getClassLoader())
				.forEach(this.candidates::add);
		}

		@Override
		public void setEnvironment(Environment environment) {
			this.active = environment.getProperty(PROPERTY, Boolean.class, false);
		}

		@Override
		public boolean[] match(String[] classes, AutoConfigurationMetadata metadata) {
			boolean[] match = new boolean[classes.length];
			for (int i = 0; i < classes.length; i++) {
				String name = classes[i];
				match[i] = !this.active || name == null || !this.candidates.contains(name) || name.startsWith("io.github.ratelimit.")
						|| ALLOWED.contains(name);
			}
			return match;
		}

	}

}
