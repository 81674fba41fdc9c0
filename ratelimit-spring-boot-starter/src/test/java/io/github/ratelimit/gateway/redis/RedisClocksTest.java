package io.github.ratelimit.gateway.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.gateway.chain.StoreShards;
import io.github.ratelimit.gateway.redis.RedisClocks.ShardClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's view of Redis' clocks, on a fake local clock: a deadline in Redis time is the gateway's deadline plus
 * the largest recent lower bound of the offset.
 */
class RedisClocksTest {

	private static final long SECOND_NANOS = 1_000_000_000L;

	/** Redis time, microseconds, when the local clock reads 0. */
	private static final long OFFSET = 1_750_000_000_000_000L;

	private final ShardClock clock = new ShardClock(Duration.ofSeconds(20));

	@Test
	void beforeTheFirstSampleNoDeadlineIsSent() {
		assertThat(this.clock.redisMicros(5 * SECOND_NANOS)).isZero();
	}

	@Test
	void aSampleIsALowerBoundSoTheDeadlineIsAtOrBeforeRedisTimeAtTheGatewaysDeadline() {
		// Redis read its clock at local 1 s; the reply came 3 ms later
		this.clock.record(OFFSET + 1_000_000, SECOND_NANOS + 3_000_000);
		long deadline = 2 * SECOND_NANOS;
		assertThat(this.clock.redisMicros(deadline)).isEqualTo(OFFSET + 2_000_000 - 3_000)
			.isLessThanOrEqualTo(OFFSET + deadline / 1000);
	}

	@Test
	void theLargestRecentSampleWinsSoOneSlowReplyDoesNotMakeItMoreConservative() {
		this.clock.record(OFFSET + 1_000_000, SECOND_NANOS + 100_000); // 0.1 ms late
		this.clock.record(OFFSET + 2_000_000, 2 * SECOND_NANOS + 900_000_000); // a reply 0.9 s late
		assertThat(this.clock.redisMicros(3 * SECOND_NANOS)).isEqualTo(OFFSET + 3_000_000 - 100);
	}

	@Test
	void samplesAgeOutSoARedisClockSteppingBackIsFollowed() {
		this.clock.record(OFFSET + 1_000_000, SECOND_NANOS);
		// Redis' clock steps back by 5 s; samples from then on are 5 s lower
		long later = OFFSET - 5_000_000;
		for (long s = 2; s <= 40; s++) {
			this.clock.record(later + s * 1_000_000, s * SECOND_NANOS);
		}
		assertThat(this.clock.redisMicros(41 * SECOND_NANOS)).isEqualTo(later + 41_000_000);
	}

	@Test
	void withoutNewSamplesTheEstimateStays() {
		this.clock.record(OFFSET + 1_000_000, SECOND_NANOS);
		// Redis unreachable for a minute: no sample, the deadline is still sent
		assertThat(this.clock.redisMicros(61 * SECOND_NANOS)).isEqualTo(OFFSET + 61_000_000);
	}

	@Test
	void aNegativeLocalClockIsRoundedTowardsTheLowerBound() {
		this.clock.record(OFFSET, -1_500); // local -1.5 us, rounded up to -1 us
		assertThat(this.clock.redisMicros(-1_000)).isEqualTo(OFFSET);
	}

	@Test
	void eachShardIsReadThroughTheExecutorOneReadAtATimeAndGetsItsOwnOffset() {
		AtomicLong now = new AtomicLong(10 * SECOND_NANOS);
		CompletableFuture<Long> first = new CompletableFuture<>();
		CompletableFuture<Long> second = new CompletableFuture<>();
		List<String> reads = new java.util.concurrent.CopyOnWriteArrayList<>();
		RedisScriptExecutor executor = new RedisScriptExecutor() {

			@Override
			public CompletableFuture<List<Object>> eval(LuaScript script, byte[][] keys, byte[][] args) {
				throw new UnsupportedOperationException();
			}

			@Override
			public CompletableFuture<Long> delete(byte[][] keys) {
				throw new UnsupportedOperationException();
			}

			@Override
			public CompletableFuture<Long> removeFromSortedSet(byte[] key, byte[] member) {
				throw new UnsupportedOperationException();
			}

			@Override
			public Set<String> shards() {
				return new java.util.TreeSet<>(Set.of("10.0.0.1:7000", "10.0.0.2:7000"));
			}

			@Override
			public CompletableFuture<Long> time(String shard) {
				reads.add(shard);
				return shard.startsWith("10.0.0.1") ? first : second;
			}

		};
		RedisClocks clocks = new RedisClocks(executor, now::get);
		clocks.sample();
		clocks.sample(); // both reads still out: none sent again
		assertThat(reads).containsExactly("10.0.0.1:7000", "10.0.0.2:7000");
		assertThat(clocks.deadlineMicros("10.0.0.1:7000", 11 * SECOND_NANOS)).isZero();
		first.complete(OFFSET + 10_000_000);
		second.complete(OFFSET + 10_000_000 + 250_000); // a master whose clock is 250 ms ahead
		assertThat(clocks.deadlineMicros("10.0.0.1:7000", 11 * SECOND_NANOS)).isEqualTo(OFFSET + 11_000_000);
		assertThat(clocks.deadlineMicros("10.0.0.2:7000", 11 * SECOND_NANOS)).isEqualTo(OFFSET + 11_250_000);
		assertThat(clocks.deadlineMicros(StoreShards.SINGLE_SHARD, 11 * SECOND_NANOS)).isZero();
		assertThat(clocks.deadlineMicros("10.0.0.3:7000", 11 * SECOND_NANOS)).isZero();
		clocks.sample();
		assertThat(reads).hasSize(4);
	}

}
