package io.github.ratelimit.gateway.webflux;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;

import io.github.ratelimit.test.redis.TestRedis;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import reactor.core.publisher.Mono;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * What the usage load tests over several gateway instances share ({@link UsageTwoInstancesBoundIntegrationTest},
 * {@link UsageLyingClientsIntegrationTest}): more gateway instances of profile {@code usage-bounds-it} started beside
 * the test's own, client loops sending requests to them for a while, and a route's usage meters summed over the
 * instances.
 */
final class UsageLoad {

	private UsageLoad() {
	}

	/**
	 * Starts one more gateway of profile {@code usage-bounds-it} on a free port, over the given Redis and upstream,
	 * with event loops of its own (so closing it leaves the test's gateway running). The caller closes it.
	 * @param redis the Redis the buckets are in
	 * @param upstream the upstream reporting usage
	 * @return the running instance
	 */
	static ConfigurableApplicationContext startInstance(TestRedis redis, UsageUpstream upstream) {
		return new SpringApplicationBuilder(GatewayTestApplication.class).profiles("usage-bounds-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, UsageLoad::ownEventLoops))
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--usage.upstream.uri=" + upstream.uri());
	}

	/**
	 * A client of an instance started by {@link #startInstance}, with pooled connections.
	 * @param instance the instance
	 * @return the client
	 */
	static WebClient webClient(ConfigurableApplicationContext instance) {
		return WebClient.create("http://127.0.0.1:" + instance.getEnvironment().getProperty("local.server.port"));
	}

	/**
	 * Runs {@code loopsPerInstance} client loops per instance for {@code duration}, loop {@code i} on instance
	 * {@code i % instances.size()} with a {@link Random} seeded {@code seed.applyAsLong(i)}, each sending one request
	 * after another (and waiting 10 ms after a {@code 429}) until the time is up.
	 * @param instances the instances' clients
	 * @param loopsPerInstance the loops per instance
	 * @param duration how long the loops start requests
	 * @param seed each loop's seed by its index
	 * @param request one request of a loop
	 * @return every answer
	 * @throws Exception if a loop failed or did not end within 60 s
	 */
	static Load run(List<WebClient> instances, int loopsPerInstance, Duration duration, IntToLongFunction seed,
			Request request) throws Exception {
		ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
		int loopCount = loopsPerInstance * instances.size();
		ExecutorService loops = Executors.newFixedThreadPool(loopCount);
		long until = System.nanoTime() + duration.toNanos();
		List<Future<?>> running = new ArrayList<>();
		for (int i = 0; i < loopCount; i++) {
			WebClient web = instances.get(i % instances.size());
			Random random = new Random(seed.applyAsLong(i));
			running.add(loops.submit(() -> {
				while (System.nanoTime() < until) {
					Answer answer = request.send(web, random);
					answers.add(answer);
					if (answer.status() == 429) {
						// pacing a denied client, not a synchronisation
						Mono.delay(Duration.ofMillis(10)).block();
					}
				}
			}));
		}
		try {
			for (Future<?> loop : running) {
				loop.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			loops.shutdownNow();
		}
		List<Answer> all = List.copyOf(answers);
		return new Load(all, all.stream().filter((a) -> a.status() == 200).toList(),
				all.stream().filter((a) -> a.status() == 429).toList());
	}

	/**
	 * A counter's total on one route over every instance.
	 * @param registries the instances' meters
	 * @param name the counter
	 * @param route the route id
	 * @return the total
	 */
	static double sum(List<MeterRegistry> registries, String name, String route) {
		return registries.stream()
			.flatMap((registry) -> registry.find(name).tag("route", route).counters().stream())
			.mapToDouble(Counter::count)
			.sum();
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	/** One request of a client loop. */
	@FunctionalInterface
	interface Request {

		/**
		 * Sends one request and waits for its answer.
		 * @param web the instance's client
		 * @param random the loop's random numbers
		 * @return the answer
		 */
		Answer send(WebClient web, Random random);

	}

	/**
	 * One request: the usage the upstream was asked to report, when it was sent and answered ({@link System#nanoTime}),
	 * and its answer.
	 * @param used the usage asked of the upstream
	 * @param sent when it was sent
	 * @param answered when it was answered
	 * @param response the answer
	 */
	record Answer(long used, long sent, long answered, ResponseEntity<String> response) {

		int status() {
			return this.response.getStatusCode().value();
		}

	}

	/**
	 * The answers of a run.
	 * @param answers every answer
	 * @param admitted the {@code 200}s
	 * @param denied the {@code 429}s
	 */
	record Load(List<Answer> answers, List<Answer> admitted, List<Answer> denied) {

		/**
		 * The usage the admitted requests' answers reported.
		 * @return the sum of their {@link Answer#used}
		 */
		long reported() {
			return this.admitted.stream().mapToLong(Answer::used).sum();
		}

	}

}
