package io.github.ratelimit.gateway.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The deadline of the script's charging calls ('check', 'acquire', 'lease', 'settle'), on Redis' own clock: a call
 * Redis runs past its deadline reads and writes nothing and answers expired (-1; a settle: an empty array), alone or
 * in a batch; a deadline ahead, or 0 (none), changes nothing. The shipped script against the shared test Redis.
 */
class DeadlineScriptTest {

	private static final String SCRIPT = LuaScript.rateLimit().text();

	private static final String[] BUCKET = { "tb", "5", "5", "60000000", "1" };

	private static final String[] SLOTS = { "cc", "3", "3", "60000000", "1" };

	private final TestRedis redis = TestRedis.shared();

	@BeforeEach
	void emptyRedis() {
		this.redis.flushAll();
	}

	@Test
	void aCheckRunPastItsDeadlineWritesNothingAndAnswersExpired() {
		assertThat(eval(List.of("k:0"), "check", "1", Long.toString(redisMicros() - 1), BUCKET)).isEqualTo("-1");
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

	@Test
	void aCheckWithinItsDeadlineOrWithoutOneRunsAsBefore() {
		assertThat(eval(List.of("k:0"), "check", "1", Long.toString(redisMicros() + 60_000_000), BUCKET))
			.startsWith("1\n1\n4\n");
		assertThat(eval(List.of("k:0"), "check", "1", "0", BUCKET)).startsWith("1\n1\n3\n");
	}

	@Test
	void anAcquirePastItsDeadlineTakesNoSlot() {
		assertThat(eval(List.of("k:0", "k:0:h"), "acquire", "1", "slot-1", Long.toString(redisMicros() - 1), SLOTS))
			.isEqualTo("-1");
		assertThat(this.redis.command("EXISTS", "k:0", "k:0:h")).isEqualTo("0");
		assertThat(eval(List.of("k:0", "k:0:h"), "acquire", "1", "slot-1", "0", SLOTS)).startsWith("1\n1\n2\n");
	}

	@Test
	void aLeasePastItsDeadlineTakesNothingAndGivesNoPreviousLeaseBack() {
		String granted = eval(List.of("k:0"), "lease", "1", "2", "10000000", "0", "0", "0", "0", BUCKET);
		String[] values = granted.split("\n");
		assertThat(values[5]).as("tokens leased").isEqualTo("2");
		String before = this.redis.command("GET", "k:0");
		// the next lease, giving the previous one back unspent, run past its deadline
		assertThat(eval(List.of("k:0"), "lease", "1", "2", "10000000", "2", "2", values[6],
				Long.toString(redisMicros() - 1), BUCKET)).isEqualTo("-1");
		assertThat(this.redis.command("GET", "k:0")).isEqualTo(before);
	}

	@Test
	void aSettlePastItsDeadlineWritesNothingAndAnswersExpired() {
		String[] usage = { "tb", "1000", "1000", "60000000", "0" };
		assertThat(eval(List.of("k:0"), "check", "1", "0", concat(Arrays.copyOf(usage, 4), new String[] { "100" })))
			.startsWith("1\n1\n900\n");
		String before = this.redis.command("GET", "k:0");
		String ttl = this.redis.command("PTTL", "k:0");
		usage[4] = "700";
		assertThat(eval(List.of("k:0"), "settle", "1", Long.toString(redisMicros() - 1), usage))
			.as("an empty array: expired").isEmpty();
		assertThat(this.redis.command("GET", "k:0")).isEqualTo(before);
		assertThat(Long.parseLong(this.redis.command("PTTL", "k:0"))).isLessThanOrEqualTo(Long.parseLong(ttl));
		usage[4] = "-1";
		assertThat(eval(List.of("k:0"), "settle", "1", Long.toString(redisMicros() - 1), usage))
			.as("giving back, too").isEmpty();
		assertThat(this.redis.command("GET", "k:0")).isEqualTo(before);
	}

	@Test
	void aSettleAtOrBeforeItsDeadlineOrWithoutOneApplies() {
		ScriptAtTime script = new ScriptAtTime(this.redis);
		ScriptAtTime.Limit usage = ScriptAtTime.Limit.tokenBucket(1_000, 1_000, ScriptAtTime.MINUTE);
		long t0 = ScriptAtTime.T0;
		assertThat(script.settle(t0, t0 + 1, new long[] { 300 }, "k", usage)).as("before").containsExactly(300);
		assertThat(script.settle(t0, t0, new long[] { 200 }, "k", usage)).as("at").containsExactly(200);
		assertThat(script.settle(t0, 0, new long[] { -1 }, "k", usage)).as("none: a reply of one -1 given back")
			.containsExactly(-1);
		assertThat(script.settle(t0 + 1, t0, new long[] { 400 }, "k", usage)).as("one microsecond past").isEmpty();
		assertThat(script.settle(t0 + 1, t0, new long[] { -400 }, "k", usage)).isEmpty();
		assertThat(script.check(t0, 0, "k", usage).remaining(0)).as("charged 300 + 200 - 1 only").isEqualTo(501);
	}

	@Test
	void inABatchOnlyTheExpiredCallIsRefused() {
		String[] late = concat(new String[] { "check", "1", Long.toString(redisMicros() - 1) }, BUCKET);
		String[] inTime = concat(new String[] { "check", "1", "0" }, BUCKET);
		String reply = this.redis.command(concat(new String[] { "EVAL", SCRIPT, "2", "k:a", "k:b", "batch", "2", "1",
				Integer.toString(late.length), "1", Integer.toString(inTime.length) }, concat(late, inTime)));
		assertThat(reply.split("\n")[0]).isEqualTo("-1");
		assertThat(this.redis.command("EXISTS", "k:a")).isEqualTo("0");
		assertThat(this.redis.command("EXISTS", "k:b")).isEqualTo("1");
	}

	@Test
	void aDeadlineThatIsNotAWholeNumberOfMicrosecondsIsAnErrorBeforeAnyWrite() {
		for (String deadline : List.of("-1", "1.5", "soon")) {
			assertThatIllegalStateException().isThrownBy(() -> eval(List.of("k:0"), "check", "1", deadline, BUCKET))
				.withMessageContaining("takes a deadline in microseconds >= 0");
		}
		assertThat(this.redis.command("EXISTS", "k:0")).isEqualTo("0");
	}

	private String eval(List<String> keys, String operation, String n, String third, String[] limit) {
		return eval(keys, new String[] { operation, n, third }, limit);
	}

	private String eval(List<String> keys, String operation, String n, String slot, String deadline, String[] limit) {
		return eval(keys, new String[] { operation, n, slot, deadline }, limit);
	}

	private String eval(List<String> keys, String operation, String n, String wanted, String duration, String granted,
			String unused, String end, String deadline, String[] limit) {
		return eval(keys, new String[] { operation, n, wanted, duration, granted, unused, end, deadline }, limit);
	}

	private String eval(List<String> keys, String[] header, String[] limit) {
		List<String> command = new ArrayList<>(List.of("EVAL", SCRIPT, Integer.toString(keys.size())));
		command.addAll(keys);
		command.addAll(Arrays.asList(header));
		command.addAll(Arrays.asList(limit));
		return this.redis.command(command.toArray(String[]::new));
	}

	private long redisMicros() {
		String[] time = this.redis.command("TIME").split("\n");
		return Long.parseLong(time[0].trim()) * 1_000_000 + Long.parseLong(time[1].trim());
	}

	private static String[] concat(String[] a, String[] b) {
		String[] all = Arrays.copyOf(a, a.length + b.length);
		System.arraycopy(b, 0, all, a.length, b.length);
		return all;
	}

}
