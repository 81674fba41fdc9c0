package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A gateway whose Redis never answered stops within a few seconds, leaves no non-daemon thread and logs no error
 * and no stack trace, neither while it runs nor when it stops (issue 27, part 5): its Redis a blackhole (connections
 * accepted, never answered: every connect waits in its handshake when the gateway stops), or a port nothing listens
 * on (with the sample's Redis timeout of 500 ms, Lettuce's handshake timeout of a refused connect). Each test starts
 * a gateway of its own (its own event loops, so that closing it stops nothing of the cached test contexts), sends
 * requests through it (so that checks wait on the limiter's connect), and closes it.
 */
@ExtendWith(OutputCaptureExtension.class)
class StopWithoutRedisIntegrationTest {

	/** Longest a close may take, generous for a loaded machine (it took 30 s and more before the fix). */
	private static final Duration CLOSE_BOUND = Duration.ofSeconds(5);

	/** Accepts connections and never answers. */
	private static final TcpProxy blackhole = blackhole();

	private static final MachineStalls stalls = MachineStalls.meter();

	@AfterAll
	static void closeBlackhole() {
		blackhole.close();
	}

	@Test
	void aGatewayWhoseRedisIsABlackholeStopsAtOnce(CapturedOutput output) {
		stopsAtOnce("redis://" + blackhole.host() + ":" + blackhole.port(), output);
	}

	@Test
	void aGatewayWhoseRedisPortIsClosedStopsAtOnce(CapturedOutput output) throws IOException {
		stopsAtOnce("redis://127.0.0.1:" + closedPort(), output, "--spring.data.redis.timeout=500ms");
	}

	private static void stopsAtOnce(String redisUrl, CapturedOutput output, String... arguments) {
		Set<Thread> before = nonDaemonThreads();
		int started = output.getAll().length();
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				"--spring.data.redis.url=" + redisUrl, "--ratelimit.redis-timeout=200ms"));
		args.addAll(List.of(arguments));
		ConfigurableApplicationContext gateway = new SpringApplicationBuilder(GatewayTestApplication.class)
			.profiles("gateway-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, StopWithoutRedisIntegrationTest::ownEventLoops))
			.run(args.toArray(String[]::new));
		WebTestClient client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + gateway.getEnvironment().getRequiredProperty("local.server.port"))
			.responseTimeout(Duration.ofSeconds(30))
			.build();
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 3; i++) { // checks while the limiter's connect is in flight: decided by the fallback
			statuses.add(client.get().uri("/fast/x").header("X-API-Key", "key-one").exchange().expectBody()
				.returnResult().getStatus().value());
		}
		assertThat(statuses).allSatisfy((status) -> assertThat(status).isEqualTo(200));
		int logged = output.getAll().length();
		long start = System.nanoTime();
		gateway.close();
		long end = System.nanoTime();
		String closeLog = output.getAll().substring(logged);
		long millis = (end - start) / 1_000_000;
		System.out.println("Closed a gateway whose Redis (" + redisUrl + ") never answered in " + millis
				+ " ms (the machine stood still " + stalls.stalledNanos(start, end) / 1_000_000 + " ms of that)");
		assertThat(end - start - stalls.stalledNanos(start, end)).as("close took %d ms; its log:%n%s", millis, closeLog)
			.isLessThan(CLOSE_BOUND.toNanos());
		// no ERROR and no stack trace from the gateway's start to its end (a stack trace's lines start with a tab);
		// what it logs on the start-up threads while Redis is unreachable is a WARN without one
		String gatewayLog = output.getAll().substring(started);
		assertThat(gatewayLog.lines().filter((line) -> line.contains(" ERROR ") || line.startsWith("\tat ")))
			.as("errors and stack traces in the gateway's log:%n%s", gatewayLog)
			.isEmpty();
		// nothing of the gateway holds the JVM's exit: every non-daemon thread it started has ended
		await().atMost(CLOSE_BOUND).pollInSameThread().pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
			Set<Thread> left = nonDaemonThreads();
			left.removeAll(before);
			assertThat(left).as("non-daemon threads left by the closed gateway").isEmpty();
		});
	}

	private static Set<Thread> nonDaemonThreads() {
		Set<Thread> threads = new HashSet<>(Thread.getAllStackTraces().keySet());
		threads.removeIf((thread) -> thread.isDaemon() || !thread.isAlive());
		return threads;
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	private static TcpProxy blackhole() {
		TcpProxy proxy = TcpProxy.start("127.0.0.1", 1);
		proxy.blackhole();
		return proxy;
	}

	private static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
