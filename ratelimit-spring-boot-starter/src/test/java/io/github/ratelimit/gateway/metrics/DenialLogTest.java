package io.github.ratelimit.gateway.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.properties.RateLimitProperties.DenialLogLevel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The denial log's throttling, on a clock and a timer the test moves: one full line per client and endpoint group
 * per interval, a summary of the rest when the interval ends (with no traffic after it), bounded memory and lines.
 */
class DenialLogTest {

	private static final Duration INTERVAL = Duration.ofSeconds(60);

	private static final LimitDefinition LIMIT = new LimitDefinition("free-search", 5, 1, Duration.ofSeconds(1));

	private static final PlanLimits LIMITS = new PlanLimits("free", "search", List.of(LIMIT));

	private static final RateLimitDecision DENIED = RateLimitDecision.shared(LIMITS, false,
			List.of(new LimitStatus(LIMIT, false, 0, 310, 5000)));

	private final ManualClock clock = new ManualClock();

	private final Logger logger = (Logger) LoggerFactory.getLogger(DenialLog.LOGGER_NAME);

	private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

	private Level previousLevel;

	@BeforeEach
	void captureDenialLog() {
		this.previousLevel = this.logger.getLevel();
		this.logger.setLevel(Level.INFO);
		this.appender.start();
		this.logger.addAppender(this.appender);
	}

	@AfterEach
	void stopCapturing() {
		this.logger.detachAppender(this.appender);
		this.logger.setLevel(this.previousLevel);
	}

	@Test
	void firstDenialInFullTheRestCountedAndSummarisedWhenTheIntervalEndsWithoutFurtherTraffic() {
		DenialLog log = denialLog(100, 1000);
		ClientKey client = apiKey("key-one");
		String id = "k:" + client.id();
		for (int i = 0; i < 4211; i++) {
			log.denied(client, "search", "search", DENIED, false, 310);
		}
		assertThat(messages()).containsExactly("Rate limit denied: client=" + id
				+ " route=search group=search plan=free policies=[free-search] retryAfterMs=310");
		ILoggingEvent full = this.appender.list.get(0);
		assertThat(full.getLevel()).isEqualTo(Level.INFO);
		assertThat(keyValues(full)).containsExactly("client=" + id, "route=search", "group=search", "plan=free",
				"policies=free-search", "outcome=denied", "retryAfterMs=310");

		this.clock.advance(INTERVAL.minusSeconds(1));
		assertThat(this.appender.list).hasSize(1);
		this.clock.advance(Duration.ofSeconds(1)); // only the timer runs: no denial, no call into the log
		assertThat(messages()).hasSize(2).last()
			.isEqualTo("Rate limit denials: 4,210 more for client=" + id + " route=search group=search in the last 60 s");
		ILoggingEvent summary = this.appender.list.get(1);
		assertThat(summary.getLevel()).isEqualTo(Level.INFO);
		assertThat(keyValues(summary)).containsExactly("client=" + id, "route=search", "group=search",
				"suppressed=4210", "intervalSeconds=60");
		assertThat(summary.getKeyValuePairs().get(3).value).isEqualTo(4210L);

		// a new interval: a full line again
		log.denied(client, "search", "search", DENIED, false, 310);
		assertThat(messages()).hasSize(3).last().asString().startsWith("Rate limit denied: client=" + id);
	}

	@Test
	void aClientWithOneDenialGetsNoSummaryAndTheLevelIsTheConfiguredOne() {
		DenialLog log = new DenialLog(DenialLogLevel.WARN, INTERVAL, 100, 1000, this.clock, this.clock, Runnable::run);
		log.denied(apiKey("key-one"), "search", "search", DENIED, false, 310);
		this.clock.advance(INTERVAL.multipliedBy(3));
		assertThat(this.appender.list).hasSize(1).allSatisfy((e) -> assertThat(e.getLevel()).isEqualTo(Level.WARN));
	}

	@Test
	void eachOutcomeGetsItsOwnFullLineAndTheSummaryAddsUpTheClientsGroup() {
		DenialLog log = denialLog(100, 1000);
		ClientKey client = apiKey("key-one");
		for (int i = 0; i < 3; i++) {
			log.denied(client, "search", "search", DENIED, false, 310);
			log.denied(client, "search-shadow", "search", DENIED, true, 310);
			log.denied(client, "search", "search", RateLimitDecision.failedClosed(LIMITS), false, 5000);
		}
		assertThat(messages()).hasSize(3);
		assertThat(this.appender.list).extracting((e) -> keyValue(e, "outcome"))
			.containsExactly("denied", "shadow-denied", "failed-closed");
		// what the client was told to wait: a failed-closed decision has no wait of its own, the 503 says 5 s
		assertThat(this.appender.list).extracting((e) -> keyValue(e, "retryAfterMs")).containsExactly("310", "310",
				"5000");
		this.clock.advance(INTERVAL);
		assertThat(messages()).hasSize(4).last().asString()
			.isEqualTo("Rate limit denials: 6 more for client=k:" + client.id() + " route=search group=search in the last 60 s");
	}

	@Test
	void aClientIsCountedPerEndpointGroupAndIpAddressesAreHashed() {
		DenialLog log = denialLog(100, 1000);
		ClientKey ip = new ClientKey(ClientKey.Kind.IP, "203.0.113.7", "anonymous");
		for (int i = 0; i < 3; i++) {
			log.denied(ip, "search", "search", DENIED, false, 310);
			log.denied(ip, "login", "login", DENIED, false, 310);
		}
		String id = "ip:" + ApiKeyHasher.hash("203.0.113.7");
		assertThat(this.appender.list).extracting((e) -> keyValue(e, "group")).containsExactly("search", "login");
		assertThat(messages()).allSatisfy((m) -> assertThat(m).contains("client=" + id).doesNotContain("203.0.113.7"));
		this.clock.advance(INTERVAL);
		assertThat(messages()).hasSize(4)
			.contains("Rate limit denials: 2 more for client=" + id + " route=search group=search in the last 60 s",
					"Rate limit denials: 2 more for client=" + id + " route=login group=login in the last 60 s");
	}

	@Test
	void clientsDroppedForSizeGetTheirSummaryAtOnceAndTheMapStaysBounded() {
		DenialLog log = denialLog(2, 1000);
		for (int c = 0; c < 10; c++) {
			for (int i = 0; i < 3; i++) {
				log.denied(apiKey("client-" + c), "search", "search", DENIED, false, 310);
			}
			assertThat(log.trackedClients()).isLessThanOrEqualTo(2);
		}
		// no time passed: every summary so far is of a client dropped for size
		List<ILoggingEvent> summaries = summaries();
		assertThat(summaries).isNotEmpty().allSatisfy((e) -> assertThat(suppressed(e)).isPositive());
		this.clock.advance(INTERVAL);
		assertThat(fullLines() + summaries().stream().mapToLong(DenialLogTest::suppressed).sum()).isEqualTo(30);
	}

	@Test
	void theLineBudgetCapsLinesPerIntervalAndOneLineCountsTheRest() {
		DenialLog log = denialLog(100, 3);
		for (int c = 0; c < 5; c++) {
			log.denied(apiKey("client-" + c), "search", "search", DENIED, false, 310);
		}
		assertThat(messages()).hasSize(3);
		this.clock.advance(INTERVAL);
		assertThat(messages()).hasSize(4).last().asString()
			.isEqualTo("Rate limit denials: 2 more for other clients in the last 60 s (at most 3 lines per interval)");
		assertThat(keyValues(this.appender.list.get(3))).containsExactly("suppressed=2", "intervalSeconds=60",
				"maxLines=3");
		// the next interval has a budget of its own
		log.denied(apiKey("client-5"), "search", "search", DENIED, false, 310);
		assertThat(messages()).hasSize(5).last().asString().startsWith("Rate limit denied: client=k:");
	}

	@Test
	void underBothBoundsEveryDenialIsWrittenOrCountedExactlyOnce() {
		DenialLog log = denialLog(2, 5);
		for (int c = 0; c < 10; c++) {
			for (int i = 0; i < 3; i++) {
				log.denied(apiKey("client-" + c), "search", "search", DENIED, false, 310);
			}
		}
		assertThat(this.appender.list).hasSize(5);
		this.clock.advance(INTERVAL); // the first budget ends; the clients still tracked end in a budget of their own
		this.clock.advance(INTERVAL);
		assertThat(log.trackedClients()).isZero();
		assertThat(this.appender.list).hasSizeLessThanOrEqualTo(5 + 1 + 5 + 1);
		assertThat(fullLines() + summaries().stream().mapToLong(DenialLogTest::suppressed).sum()).isEqualTo(30);
	}

	@Test
	void offWritesAndCountsNothing() {
		DenialLog log = new DenialLog(DenialLogLevel.OFF, INTERVAL, 100, 1000, this.clock, this.clock, Runnable::run);
		for (int i = 0; i < 3; i++) {
			log.denied(apiKey("key-one"), "search", "search", DENIED, false, 310);
		}
		this.clock.advance(INTERVAL);
		assertThat(this.appender.list).isEmpty();
		assertThat(log.trackedClients()).isZero();
	}

	@Test
	void aFractionalIntervalIsShownInSeconds() {
		DenialLog log = new DenialLog(DenialLogLevel.INFO, Duration.ofMillis(2500), 100, 1000, this.clock, this.clock,
				Runnable::run);
		log.denied(apiKey("key-one"), "search", "search", DENIED, false, 310);
		log.denied(apiKey("key-one"), "search", "search", DENIED, false, 310);
		this.clock.advance(Duration.ofMillis(2500));
		assertThat(messages()).last().asString().endsWith("in the last 2.5 s");
		assertThat(keyValue(this.appender.list.get(1), "intervalSeconds")).isEqualTo("2.5");
	}

	private DenialLog denialLog(long maxClients, long maxLines) {
		return new DenialLog(DenialLogLevel.INFO, INTERVAL, maxClients, maxLines, this.clock, this.clock,
				Runnable::run);
	}

	private static ClientKey apiKey(String key) {
		return new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(key), "free");
	}

	private List<String> messages() {
		return this.appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
	}

	private long fullLines() {
		return this.appender.list.stream().filter((e) -> e.getFormattedMessage().startsWith("Rate limit denied:")).count();
	}

	private List<ILoggingEvent> summaries() {
		return this.appender.list.stream().filter((e) -> e.getFormattedMessage().startsWith("Rate limit denials:")).toList();
	}

	private static long suppressed(ILoggingEvent event) {
		return Long.parseLong(keyValue(event, "suppressed"));
	}

	private static List<String> keyValues(ILoggingEvent event) {
		return event.getKeyValuePairs().stream().map((kv) -> kv.key + "=" + kv.value).toList();
	}

	private static String keyValue(ILoggingEvent event, String key) {
		return event.getKeyValuePairs().stream().filter((kv) -> kv.key.equals(key)).map((kv) -> String.valueOf(kv.value))
			.findFirst().orElseThrow();
	}

	/**
	 * The clock of the caches ({@link Ticker}) and their timer ({@link Scheduler}): time moves only by
	 * {@link #advance}, which runs the timer's tasks that fell due, on the executor Caffeine gave them.
	 */
	private static final class ManualClock implements Ticker, Scheduler {

		private final AtomicLong nanos = new AtomicLong();

		private final List<Task> tasks = new ArrayList<>();

		@Override
		public long read() {
			return this.nanos.get();
		}

		@Override
		public synchronized Future<?> schedule(Executor executor, Runnable command, long delay, TimeUnit unit) {
			Task task = new Task(read() + unit.toNanos(delay), executor, command, new CompletableFuture<>());
			this.tasks.add(task);
			return task.future();
		}

		void advance(Duration duration) {
			this.nanos.addAndGet(duration.toNanos());
			while (true) {
				Task due;
				synchronized (this) {
					this.tasks.removeIf((t) -> t.future().isCancelled());
					due = this.tasks.stream().filter((t) -> t.dueNanos() <= read()).findFirst().orElse(null);
					if (due == null) {
						return;
					}
					this.tasks.remove(due);
				}
				due.executor().execute(due.command());
				due.future().complete(null);
			}
		}

		private record Task(long dueNanos, Executor executor, Runnable command, CompletableFuture<Void> future) {
		}

	}

}
