package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.github.ratelimit.gateway.redis.InstanceCounter;
import io.github.ratelimit.test.MachineStalls;
import io.github.ratelimit.test.redis.RedisServer;
import io.github.ratelimit.test.redis.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
 * A gateway whose Redis never answered, or went silent after the instance count was learned from it, stops within a
 * few seconds, leaves no non-daemon thread and logs no error and no stack trace, neither while it runs nor when it
 * stops (issue 27, part 5): its Redis a blackhole (connections accepted, never answered: every connect waits in its
 * handshake when the gateway stops), or a port nothing listens on (with the sample's Redis timeout of 500 ms,
 * Lettuce's handshake timeout of a refused connect). Each test starts a gateway of its own (its own event loops, so
 * that closing it stops nothing of the cached test contexts), sends requests through it (so that checks wait on the
 * limiter's connect), and closes it.
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
	void aGatewayWhoseRedisIsABlackholeStopsAtOnce(CapturedOutput output) throws InterruptedException {
		stopsAtOnce("redis://" + blackhole.host() + ":" + blackhole.port(), output, (gateway) -> {
		});
	}

	/**
	 * Redis answered (the instance count was learned), then went silent: connections accepted and never answered,
	 * those open cut (Lettuce reconnects into the blackhole) or kept (commands sent and never answered, as with a
	 * paused Redis); Lettuce's own timeout at its default of 60 s, so any wait on a connect or a command that only
	 * Lettuce's timeout ends outlives the bound.
	 * @param cut whether the open connections are cut
	 */
	@ParameterizedTest(name = "connections cut: {0}")
	@ValueSource(booleans = { true, false })
	void aGatewayThatLearnedTheInstanceCountStopsAtOnceWhenItsRedisGoesSilent(boolean cut, CapturedOutput output)
			throws InterruptedException {
		try (RedisServer redis = RedisServer.start(); TcpProxy network = TcpProxy.start(redis.host(), redis.port())) {
			stopsAtOnce("redis://" + network.host() + ":" + network.port(), output, (gateway) -> {
				InstanceCounter counter = gateway.getBean(InstanceCounter.class);
				await().atMost(Duration.ofSeconds(20)).until(counter::isLearned);
				network.blackhole();
				if (cut) {
					network.cutConnections();
				}
			}, "--spring.data.redis.timeout=60s", "--ratelimit.fallback.heartbeat-interval=200ms");
		}
	}

	@Test
	void aGatewayWhoseRedisPortIsClosedStopsAtOnce(CapturedOutput output)
			throws IOException, InterruptedException {
		stopsAtOnce("redis://127.0.0.1:" + closedPort(), output, (gateway) -> {
		}, "--spring.data.redis.timeout=500ms");
	}

	private static void stopsAtOnce(String redisUrl, CapturedOutput output,
			Consumer<ConfigurableApplicationContext> outage, String... arguments) throws InterruptedException {
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
		outage.accept(gateway);
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
		// on a thread of its own, so that a close that hangs fails the test at the bound instead of holding the run
		// (the thread is a daemon: it goes on in the background)
		Thread closing = new Thread(gateway::close, "gateway-close");
		closing.setDaemon(true);
		closing.start();
		long end = start;
		while (closing.isAlive() && end - start - stalls.stalledNanos(start, end) < CLOSE_BOUND.toNanos()) {
			closing.join(20);
			end = System.nanoTime();
		}
		String hung = closing.isAlive() ? stackOf(closing) : "";
		String closeLog = output.getAll().substring(logged);
		long millis = (end - start) / 1_000_000;
		System.out.println("Closed a gateway whose Redis (" + redisUrl + ") is unreachable in " + millis
				+ " ms (the machine stood still " + stalls.stalledNanos(start, end) / 1_000_000 + " ms of that)");
		assertThat(hung).as("close still running after %d ms; its log:%n%s", millis, closeLog).isEmpty();
		assertThat(end - start - stalls.stalledNanos(start, end)).as("close took %d ms; its log:%n%s", millis, closeLog)
			.isLessThan(CLOSE_BOUND.toNanos());
		// no ERROR and no stack trace from the gateway's start to its end (a stack trace's lines start with a tab);
		// what it logs on the start-up threads while Redis is unreachable is a WARN without one. During the close,
		// a reconnect attempt Lettuce's watchdog started just before (it checks for a close, then connects) fails
		// when the client closes its channels, and Lettuce logs that WARN with its stack trace: left out
		String gatewayLog = output.getAll().substring(started, logged)
				+ withoutReconnectFailures(output.getAll().substring(logged));
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

	/** The log without the records of Lettuce's reconnect watchdog that failed to reconnect (with their traces). */
	private static String withoutReconnectFailures(String log) {
		StringBuilder kept = new StringBuilder();
		boolean skipping = false;
		for (String line : log.lines().toList()) {
			if (line.matches("^\\d{4}-\\d{2}-\\d{2}T.*")) {
				skipping = line.contains("ConnectionWatchdog") && line.contains("Cannot reconnect");
			}
			if (!skipping) {
				kept.append(line).append('\n');
			}
		}
		return kept.toString();
	}

	/** The closing thread's stack, and every thread's waiting in Lettuce (what a close waits for). */
	private static String stackOf(Thread closing) {
		StringBuilder stacks = new StringBuilder();
		Thread.getAllStackTraces().forEach((thread, stack) -> {
			String frames = Arrays.stream(stack).map((frame) -> "\n\t\tat " + frame).collect(Collectors.joining());
			if (thread == closing || frames.contains("io.lettuce")) {
				stacks.append("\n\t").append(thread.getName()).append(frames);
			}
		});
		return stacks.toString();
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
