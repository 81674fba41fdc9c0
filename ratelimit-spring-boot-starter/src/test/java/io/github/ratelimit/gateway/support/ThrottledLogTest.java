package io.github.ratelimit.gateway.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ThrottledLogTest {

	private final AtomicLong now = new AtomicLong(42);

	private final ThrottledLog log = new ThrottledLog(Duration.ofSeconds(10), this.now::get);

	private final List<Long> written = new ArrayList<>();

	@Test
	void writesTheFirstThenAtMostOncePerIntervalWithTheSuppressedCount() {
		assertThat(this.log.log(this.written::add)).isTrue();
		assertThat(this.log.log(this.written::add)).isFalse();
		this.now.addAndGet(Duration.ofSeconds(10).toNanos() - 1);
		assertThat(this.log.log(this.written::add)).isFalse();
		this.now.addAndGet(1);
		assertThat(this.log.log(this.written::add)).isTrue();
		this.now.addAndGet(Duration.ofMinutes(5).toNanos());
		assertThat(this.log.log(this.written::add)).isTrue();
		assertThat(this.written).containsExactly(0L, 2L, 0L);
	}

	@Test
	void ofConcurrentOccurrencesOneIsWrittenAndTheOthersCounted() throws InterruptedException {
		AtomicLong writes = new AtomicLong();
		AtomicLong countedInTheFirst = new AtomicLong();
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			Thread thread = new Thread(() -> {
				for (int i = 0; i < 1000; i++) {
					this.log.log((skipped) -> {
						writes.incrementAndGet();
						countedInTheFirst.set(skipped);
					});
				}
			});
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(writes).hasValue(1);
		this.now.addAndGet(Duration.ofSeconds(10).toNanos());
		assertThat(this.log.log(this.written::add)).isTrue();
		// every other occurrence is counted once: in the next line, or (those concurrent with the first write, between
		// its winning the interval and taking the count) in the first
		assertThat(this.written).hasSize(1);
		assertThat(countedInTheFirst.get() + this.written.get(0)).isEqualTo(7999L);
	}

	@Test
	void theTailNamesTheSuppressedCountOnlyWhenThereIsOne() {
		assertThat(ThrottledLog.notLogged(0)).isEmpty();
		assertThat(ThrottledLog.notLogged(3)).isEqualTo(" (3 similar not logged)");
	}

	@Test
	void theIntervalMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ThrottledLog(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> new ThrottledLog(Duration.ofSeconds(-1)));
	}

}
