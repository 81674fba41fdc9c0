package io.github.ratelimit.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.netflix.concurrency.limits.limit.VegasLimit;
import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.ProtectionRules;
import io.github.ratelimit.gateway.properties.RateLimitProperties;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The gateway of the protection benchmark (issue 41): Spring Cloud Gateway with the starter against the real Redis,
 * no actuator and no meter registry, proxying to the {@link ModelUpstream}. One route set per run of the same
 * traffic, each with a login route ({@code /<run>/login/**}: {@code RateLimit} keyed by IP, priority
 * {@code critical}) and an API route ({@code /<run>/api/**}: keyed by {@code X-API-Key}, the plan's priority):
 *
 * <ul>
 * <li>{@code none}: {@code RateLimit} without {@code protect};</li>
 * <li>{@code fixed}: protection {@code limit: fixed, max-in-flight: 16} (the upstream's workers);</li>
 * <li>{@code adaptive}: protection {@code limit: adaptive} with every default (vegas);</li>
 * <li>{@code vegas-unsmoothed}: vegas as the starter builds it (min 4, max 1000, initial 20, the library's probe
 * settings) but with the library's smoothing 1 instead of the starter's {@code 0.2}; benchmark-only (see
 * {@link Application#upstreamProtections}): the starter has no setting for the smoothing;</li>
 * <li>{@code gradient}: protection {@code limit: adaptive, algorithm: gradient}.</li>
 * </ul>
 *
 * Plans: {@code anonymous} (the login route's clients), {@code gold} (priority {@code high}) and {@code free}
 * (priority {@code low}), each allowed 1,000,000 requests a second, so no rate limit refuses; the shares are the
 * defaults. Every 100 ms it writes each protection's {@code limit()} and {@code inFlight(priority)} from the
 * {@link UpstreamProtections} bean to the samples file (benchmark code, not the starter's meters).
 * {@code BenchmarkMain protection-gateway --port P --redis-port R --upstream-port U --samples FILE [--info FILE]};
 * it serves until the JVM is stopped.
 */
final class ProtectionGateway {

	/** The run, and its protection, of vegas with the library's smoothing (benchmark-only). */
	static final String UNSMOOTHED = "vegas-unsmoothed";

	/** The library's default smoothing of vegas: none (each new limit is the computed one). */
	static final double LIBRARY_SMOOTHING = 1.0;

	/** The runs, each a route set of its own, in the order they are driven. */
	static final List<String> RUNS = List.of("none", "fixed", "adaptive", UNSMOOTHED, "gradient");

	/** Each run's protection as configured. */
	static final Map<String, String> DESCRIPTIONS = Map.of("none", "none (RateLimit without protect)", "fixed",
			"{ limit: fixed, max-in-flight: 16 }", "adaptive",
			"{ limit: adaptive } (every default: vegas, min 4, max 1000, initial 20)", UNSMOOTHED,
			"vegas with the library's smoothing 1 (benchmark-only; the starter's vegas smooths by 0.2; min 4, max 1000, "
					+ "initial 20)",
			"gradient", "{ limit: adaptive, algorithm: gradient } (min 4, max 1000, initial 20)");

	/** The upstream's workers, the fixed run's limit. */
	static final int FIXED_LIMIT = 16;

	/** API keys per plan ({@code gold-0}, ..., {@code free-0}, ...). */
	static final int KEYS_PER_PLAN = 20;

	/** Capacity and refill per second of every plan: no rate limit refuses (tokens, tokens per second). */
	static final long HIGH_LIMIT = 1_000_000;

	private ProtectionGateway() {
	}

	/**
	 * Start the gateway and its sampler.
	 * @param options {@code port}, {@code redis-port}, {@code upstream-port}, {@code samples}; optional
	 * {@code info} (a properties file written once started: the configuration)
	 * @return the running context
	 * @throws IOException if a file cannot be written
	 */
	static ConfigurableApplicationContext start(Map<String, String> options) throws IOException {
		Map<String, Object> props = properties(Integer.parseInt(options.get("port")),
				Integer.parseInt(options.get("redis-port")), Integer.parseInt(options.get("upstream-port")));
		SpringApplication application = new SpringApplication(Application.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(props);
		ConfigurableApplicationContext context = application.run("--spring.config.location=optional:classpath:/nothing/");
		UpstreamProtections protections = context.getBean(UpstreamProtections.class);
		sample(protections, Path.of(options.get("samples")));
		if (options.containsKey("info")) {
			Properties info = new Properties();
			props.forEach((name, value) -> {
				if (name.startsWith("ratelimit.") || name.contains(".routes[")) {
					info.setProperty(name, String.valueOf(value));
				}
			});
			info.setProperty("protections", protections.toString());
			DESCRIPTIONS.forEach((run, text) -> info.setProperty("describe." + run, text));
			for (UpstreamProtection protection : protections.all()) {
				info.setProperty("shares." + protection.name(), protection.shares().toString());
			}
			try (var writer = Files.newBufferedWriter(Path.of(options.get("info")))) {
				info.store(writer, "the protection benchmark gateway's configuration");
			}
		}
		return context;
	}

	/** Every 100 ms, one line per protection: {@code epoch_ms protection limit critical high normal low}. */
	private static void sample(UpstreamProtections protections, Path file) throws IOException {
		BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
		out.write("epoch_ms\tprotection\tlimit\tcritical\thigh\tnormal\tlow\n");
		out.flush();
		ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "protection-sampler");
			thread.setDaemon(true);
			return thread;
		});
		sampler.scheduleAtFixedRate(() -> {
			try {
				long now = System.currentTimeMillis();
				for (UpstreamProtection protection : protections.all()) {
					StringBuilder line = new StringBuilder().append(now)
						.append('\t')
						.append(protection.name())
						.append('\t')
						.append(protection.limit());
					for (Priority priority : Priority.values()) {
						line.append('\t').append(protection.inFlight(priority));
					}
					out.write(line.append('\n').toString());
				}
				out.flush();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}, 0, 100, TimeUnit.MILLISECONDS);
	}

	/**
	 * The gateway's whole configuration (no configuration file is read).
	 * @param port HTTP port
	 * @param redisPort Redis port on 127.0.0.1
	 * @param upstreamPort the model upstream's port on 127.0.0.1
	 * @return property name to value
	 */
	static Map<String, Object> properties(int port, int redisPort, int upstreamPort) {
		Map<String, Object> p = new LinkedHashMap<>();
		p.put("spring.main.banner-mode", "off");
		p.put("server.port", port);
		p.put("spring.data.redis.host", "127.0.0.1");
		p.put("spring.data.redis.port", redisPort);
		p.put("logging.level.root", "WARN");
		String routes = "spring.cloud.gateway.server.webflux.routes";
		int i = 0;
		for (String run : RUNS) {
			String protect = run.equals("none") ? null : run;
			String login = routes + "[" + i++ + "]";
			route(p, login, run + "-login", "/" + run + "/login/**", upstreamPort);
			p.put(login + ".filters[0].args.group", "login");
			p.put(login + ".filters[0].args.key-by", "ip");
			if (protect != null) {
				p.put(login + ".filters[0].args.protect", protect);
				p.put(login + ".filters[0].args.priority", "critical");
			}
			String api = routes + "[" + i++ + "]";
			route(p, api, run + "-api", "/" + run + "/api/**", upstreamPort);
			p.put(api + ".filters[0].args.group", "api");
			p.put(api + ".filters[0].args.key-by", "api-key");
			if (protect != null) {
				p.put(api + ".filters[0].args.protect", protect);
			}
		}
		p.put("ratelimit.protections.fixed.limit", "fixed");
		p.put("ratelimit.protections.fixed.max-in-flight", FIXED_LIMIT);
		p.put("ratelimit.protections.adaptive.limit", "adaptive");
		// built by the starter as the adaptive one, then given an unsmoothed limit (Application#upstreamProtections)
		p.put("ratelimit.protections." + UNSMOOTHED + ".limit", "adaptive");
		p.put("ratelimit.protections.gradient.limit", "adaptive");
		p.put("ratelimit.protections.gradient.algorithm", "gradient");

		p.put("ratelimit.api-key-header", BenchGateway.API_KEY_HEADER);
		p.put("ratelimit.anonymous-plan", "anonymous");
		for (String plan : List.of("anonymous", "gold", "free")) {
			BenchContext.limit(p, "ratelimit.plans." + plan + ".default[0]", HIGH_LIMIT, HIGH_LIMIT, "1s");
		}
		p.put("ratelimit.groups.login.critical", "false");
		p.put("ratelimit.groups.api.critical", "false");
		p.put("ratelimit.plans.gold.priority", "high");
		p.put("ratelimit.plans.free.priority", "low");
		for (int key = 0; key < KEYS_PER_PLAN; key++) {
			p.put("ratelimit.api-keys.gold-" + key, "gold");
			p.put("ratelimit.api-keys.free-" + key, "free");
		}
		p.put("ratelimit.fallback.learn-instances", "false");
		p.put("ratelimit.redis-timeout", BenchContext.REDIS_TIMEOUT);
		// a shed or two per millisecond under 4x: not to the log
		p.put("ratelimit.denial-log-level", "off");
		return p;
	}

	private static void route(Map<String, Object> p, String prefix, String id, String path, int upstreamPort) {
		p.put(prefix + ".id", id);
		p.put(prefix + ".uri", "http://127.0.0.1:" + upstreamPort);
		p.put(prefix + ".predicates[0]", "Path=" + path);
		p.put(prefix + ".filters[0].name", "RateLimit");
	}

	/**
	 * The application: every auto-configuration on the class path, and the protections the starter builds with one
	 * replaced: {@value ProtectionGateway#UNSMOOTHED}.
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Application {

		/**
		 * The starter's protections (its auto-configuration then builds none: its bean is
		 * {@code @ConditionalOnMissingBean}), as its auto-configuration builds them, but {@value ProtectionGateway#UNSMOOTHED}
		 * limited by {@link #unsmoothedVegas}.
		 * @param properties the starter's properties
		 * @param limitResolver the limits in force
		 * @return the protections
		 */
		@Bean
		UpstreamProtections upstreamProtections(RateLimitProperties properties, LimitResolver limitResolver) {
			UpstreamProtections starter = ProtectionRules.protections(properties, limitResolver::effectiveProperties);
			Map<String, UpstreamProtection> protections = new LinkedHashMap<>();
			for (UpstreamProtection protection : starter.all()) {
				protections.put(protection.name(),
						protection.name().equals(UNSMOOTHED) ? unsmoothedVegas(protection) : protection);
			}
			return new UpstreamProtections(protections, starter::priorityOf);
		}

		/**
		 * A vegas protection as the starter built it, with the library's smoothing instead of the starter's.
		 * @param starter the protection the starter built ({@code limit: adaptive}, algorithm vegas), not yet sampled
		 * @return the same protection but for its limit's smoothing
		 */
		static UpstreamProtection unsmoothedVegas(UpstreamProtection starter) {
			if (starter.algorithm() != AdaptiveAlgorithm.VEGAS) {
				throw new IllegalStateException(UNSMOOTHED + " must be configured as vegas, was " + starter);
			}
			// before any sample a limit is its initial one: the starter's default, 20
			int initial = starter.limit();
			// the builder settings of AdaptiveAlgorithm.VEGAS#newLimit, but for the smoothing (its VEGAS_SMOOTHING is 0.2)
			VegasLimit limit = VegasLimit.newBuilder()
				.maxConcurrency(starter.maxLimit())
				.initialLimit(initial)
				.smoothing(LIBRARY_SMOOTHING)
				.build();
			return new UpstreamProtection(starter.name(), limit, starter.minLimit(), starter.maxLimit(),
					starter.shares(), starter.isShadow(), starter.retryAfterSeconds(), System::nanoTime);
		}

	}

}
