package io.github.ratelimit.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.gateway.plan.ApiKey;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A minimal gateway for comparing limiters route against route inside ONE process (issue 14): Spring Cloud Gateway
 * with the starter and nothing else (no actuator, no meter registry, no upstream), routes to {@code no://op} (the
 * gateway answers 200 itself), so what differs between two routes is the filter alone:
 *
 * <ul>
 * <li>{@code /plain/**} ({@value #PLAIN}): no filter;</li>
 * <li>{@code /rl/**} ({@value #RL}): the starter's {@code RateLimit} filter keyed by API key ({@code X-API-Key}),
 * endpoint group {@value #GROUP_RL};</li>
 * <li>{@code /rl-lease/**} ({@value #RL_LEASE}): the same with token leases on (limit property {@code lease:
 * 2%}), only when the starter has that property (see {@link #leasesWanted});</li>
 * <li>{@code /scg/**} ({@value #SCG}): Gateway's own {@code RequestRateLimiter} with its {@code RedisRateLimiter},
 * keyed by the same header through a {@link KeyResolver} bean, configured as Gateway's documentation does;</li>
 * <li>{@code /idle/**} ({@value #IDLE}): {@code RateLimit} with a slow refill (100 tokens per day), so a bucket
 * stays in Redis after one request: the Redis memory per idle key.</li>
 * </ul>
 *
 * Every API key is a known client of its own: {@link EveryKeyPlanResolver} maps any key to plan {@value #PLAN},
 * whose limits (capacity 1,000,000 tokens, refilled 1,000,000 per second) deny nothing. Started by
 * {@code src/benchmarks/run} in a JVM of its own: {@code BenchmarkMain gateway --port P --redis-port R
 * [--redis-host H] [--info FILE]}; it serves until the JVM is stopped.
 */
public final class BenchGateway {

	/** Route without a filter. */
	public static final String PLAIN = "plain";

	/** Route with the starter's {@code RateLimit} filter. */
	public static final String RL = "rl";

	/** Route with the starter's {@code RateLimit} filter and token leases. */
	public static final String RL_LEASE = "rl-lease";

	/** Route with Gateway's {@code RequestRateLimiter} and {@code RedisRateLimiter}. */
	public static final String SCG = "scg";

	/** Route whose buckets stay in Redis after one request (slow refill). */
	public static final String IDLE = "idle";

	/** Plan of every API key. */
	public static final String PLAN = "bench";

	/** Endpoint group of {@value #RL}. */
	public static final String GROUP_RL = "bench";

	/** Endpoint group of {@value #RL_LEASE}. */
	public static final String GROUP_RL_LEASE = "bench-lease";

	/** Endpoint group of {@value #IDLE}. */
	public static final String GROUP_IDLE = "idle";

	/** Header carrying the API key, on every route. */
	public static final String API_KEY_HEADER = "X-API-Key";

	/** Precision budget of the lease route's limit. */
	public static final String LEASE = "2%";

	/** Capacity and refill per second of the routes that must deny nothing (tokens, tokens per second). */
	public static final long HIGH_LIMIT = 1_000_000;

	private BenchGateway() {
	}

	/**
	 * Start the gateway and keep serving.
	 * @param options {@code port}, {@code redis-port}, optional {@code redis-host} and {@code info} (a properties
	 * file written once started: the routes and whether leases are on)
	 * @return the running context
	 */
	static ConfigurableApplicationContext start(Map<String, String> options) throws Exception {
		boolean leases = leasesWanted(System.getenv("LEASES"), starterHasLeases());
		Map<String, Object> props = properties(Integer.parseInt(options.get("port")),
				options.getOrDefault("redis-host", "127.0.0.1"), Integer.parseInt(options.get("redis-port")), leases);
		SpringApplication application = new SpringApplication(Application.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(props);
		ConfigurableApplicationContext context = application.run("--spring.config.location=optional:classpath:/nothing/");
		if (options.containsKey("info")) {
			Properties info = new Properties();
			info.setProperty("routes", String.join(",", routes(leases)));
			info.setProperty("leases", String.valueOf(leases));
			info.setProperty("starter_has_leases", String.valueOf(starterHasLeases()));
			info.setProperty("lease", leases ? LEASE : "off");
			info.setProperty("plan_resolver", context.getBean(PlanResolver.class).toString());
			info.setProperty("key_resolver", context.getBean("apiKeyResolver").toString());
			try (var writer = Files.newBufferedWriter(Path.of(options.get("info")))) {
				info.store(writer, "the benchmark gateway's routes");
			}
		}
		return context;
	}

	/**
	 * Whether the starter on the class path has the per-limit {@code lease} property.
	 * @return true if {@code RateLimitProperties.Limit} has a {@code setLease} method
	 */
	static boolean starterHasLeases() {
		return Arrays.stream(RateLimitProperties.Limit.class.getMethods())
			.anyMatch((method) -> method.getName().equals("setLease"));
	}

	/**
	 * Whether to add the lease route: environment {@code LEASES=1} demands it (start-up fails if the starter has no
	 * {@code lease} property), {@code LEASES=0} leaves it out, unset means "if the starter has it".
	 * @param env the value of {@code LEASES}, or null
	 * @param starterHasLeases whether the starter has the property
	 * @return whether the lease route is added
	 */
	static boolean leasesWanted(String env, boolean starterHasLeases) {
		if (env == null || env.isBlank()) {
			return starterHasLeases;
		}
		boolean wanted = env.equals("1") || env.equalsIgnoreCase("true");
		if (wanted && !starterHasLeases) {
			throw new IllegalStateException("LEASES=" + env + " but the starter on the class path has no per-limit "
					+ "'lease' property (RateLimitProperties.Limit#setLease): build a starter that has it, or unset LEASES");
		}
		return wanted;
	}

	/**
	 * The routes measured against each other, in their base order.
	 * @param leases whether the lease route exists
	 * @return route ids
	 */
	static List<String> routes(boolean leases) {
		return leases ? List.of(PLAIN, RL, RL_LEASE, SCG) : List.of(PLAIN, RL, SCG);
	}

	/**
	 * The gateway's whole configuration (no configuration file is read).
	 * @param port HTTP port (0: any free one)
	 * @param redisHost Redis host
	 * @param redisPort Redis port
	 * @param leases whether to add the lease route and its limit
	 * @return property name to value
	 */
	static Map<String, Object> properties(int port, String redisHost, int redisPort, boolean leases) {
		Map<String, Object> p = new LinkedHashMap<>();
		p.put("spring.main.banner-mode", "off");
		p.put("server.port", port);
		p.put("spring.data.redis.host", redisHost);
		p.put("spring.data.redis.port", redisPort);
		p.put("logging.level.root", "WARN");
		String routes = "spring.cloud.gateway.server.webflux.routes";
		int i = 0;
		route(p, routes + "[" + i++ + "]", PLAIN);
		rateLimitRoute(p, routes + "[" + i++ + "]", RL, GROUP_RL);
		if (leases) {
			rateLimitRoute(p, routes + "[" + i++ + "]", RL_LEASE, GROUP_RL_LEASE);
		}
		// Gateway's documented configuration: RequestRateLimiter, its redis-rate-limiter.* arguments and a
		// KeyResolver bean named by SpEL
		String scg = routes + "[" + i++ + "]";
		route(p, scg, SCG);
		p.put(scg + ".filters[0].name", "RequestRateLimiter");
		p.put(scg + ".filters[0].args[redis-rate-limiter.replenishRate]", HIGH_LIMIT);
		p.put(scg + ".filters[0].args[redis-rate-limiter.burstCapacity]", HIGH_LIMIT);
		p.put(scg + ".filters[0].args[redis-rate-limiter.requestedTokens]", 1);
		p.put(scg + ".filters[0].args[key-resolver]", "#{@apiKeyResolver}");
		rateLimitRoute(p, routes + "[" + i + "]", IDLE, GROUP_IDLE);

		p.put("ratelimit.api-key-header", API_KEY_HEADER);
		p.put("ratelimit.anonymous-plan", "anonymous");
		BenchContext.limit(p, "ratelimit.plans.anonymous.default[0]", 60, 60, "1m");
		BenchContext.limit(p, "ratelimit.plans." + PLAN + ".default[0]", HIGH_LIMIT, HIGH_LIMIT, "1s");
		BenchContext.limit(p, "ratelimit.plans." + PLAN + ".groups." + GROUP_RL + "[0]", HIGH_LIMIT, HIGH_LIMIT, "1s");
		if (leases) {
			String lease = "ratelimit.plans." + PLAN + ".groups." + GROUP_RL_LEASE + "[0]";
			BenchContext.limit(p, lease, HIGH_LIMIT, HIGH_LIMIT, "1s");
			p.put(lease + ".lease", LEASE);
		}
		// one request leaves a bucket 99 of 100 full, refilled in 14.4 min: it stays in Redis, idle, to be measured
		BenchContext.limit(p, "ratelimit.plans." + PLAN + ".groups." + GROUP_IDLE + "[0]", 100, 100, "1d");
		// no instance heartbeat: its script calls would show in INFO commandstats (Redis calls per request)
		p.put("ratelimit.fallback.learn-instances", "false");
		// the sample gateway's timeout (the default 20 ms is tight for a shared 2-core machine under wrk)
		p.put("ratelimit.redis-timeout", BenchContext.REDIS_TIMEOUT);
		p.put("ratelimit.denial-log-level", "off");
		return p;
	}

	private static void route(Map<String, Object> p, String prefix, String id) {
		p.put(prefix + ".id", id);
		p.put(prefix + ".uri", "no://op");
		p.put(prefix + ".predicates[0]", "Path=/" + id + "/**");
	}

	private static void rateLimitRoute(Map<String, Object> p, String prefix, String id, String group) {
		route(p, prefix, id);
		p.put(prefix + ".filters[0].name", "RateLimit");
		p.put(prefix + ".filters[0].args.group", group);
		p.put(prefix + ".filters[0].args.key-by", "api-key");
	}

	/** The application: every auto-configuration on the class path, the two resolvers below. */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Application {

		/** Every API key is a client of its own under plan {@value BenchGateway#PLAN} (the starter's seam). */
		@Bean
		PlanResolver benchPlanResolver() {
			return new EveryKeyPlanResolver(PLAN);
		}

		/** Gateway's seam for {@code RequestRateLimiter}: the API key header, as its documentation shows. */
		@Bean
		KeyResolver apiKeyResolver() {
			return new ApiKeyHeaderKeyResolver(API_KEY_HEADER);
		}

	}

	/** Maps any API key to one plan: every key is a known client with a bucket of its own. */
	static final class EveryKeyPlanResolver implements PlanResolver {

		private final CompletionStage<Optional<String>> plan;

		private final String planName;

		EveryKeyPlanResolver(String plan) {
			this.planName = plan;
			this.plan = CompletableFuture.completedStage(Optional.of(plan));
		}

		@Override
		public CompletionStage<Optional<String>> resolvePlan(ApiKey apiKey) {
			return this.plan;
		}

		@Override
		public String toString() {
			return "EveryKeyPlanResolver[" + this.planName + "]";
		}

	}

	/** Gateway {@link KeyResolver} reading one request header; no header: empty (Gateway then denies). */
	static final class ApiKeyHeaderKeyResolver implements KeyResolver {

		private final String header;

		ApiKeyHeaderKeyResolver(String header) {
			this.header = header;
		}

		@Override
		public Mono<String> resolve(org.springframework.web.server.ServerWebExchange exchange) {
			return Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst(this.header));
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT, "ApiKeyHeaderKeyResolver[%s]", this.header);
		}

	}

}
