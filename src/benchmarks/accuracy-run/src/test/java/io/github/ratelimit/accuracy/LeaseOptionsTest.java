package io.github.ratelimit.accuracy;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.accuracy.GatewayInstance.Sample;
import io.github.ratelimit.gateway.limits.Algorithm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Parsing of the lease options, the commandstats count and the sample lines; the timing executor's reply split. */
class LeaseOptionsTest {

	@Test
	void leaseBudgetsParseAsTheStarterParsesALimitsLease() {
		assertThat(Leases.parseBudget("2%")).isEqualTo(2.0);
		assertThat(Leases.parseBudget(" 0.5 % ")).isEqualTo(0.5);
		assertThat(Leases.parseBudget("off")).isZero();
		assertThat(Leases.parseBudget("OFF")).isZero();
		assertThatIllegalArgumentException().isThrownBy(() -> Leases.parseBudget("2"));
		assertThatIllegalArgumentException().isThrownBy(() -> Leases.parseBudget("0%"));
		assertThatIllegalArgumentException().isThrownBy(() -> Leases.parseBudget("51%"));
		assertThatIllegalArgumentException().isThrownBy(() -> Leases.parseBudget("x%"));
	}

	@Test
	void optionsTakeALeaseListAndDurationAndApplyThemToTokenBucketsOnly() {
		AccuracyRun.Options options = AccuracyRun.Options.parse(new String[] { "--algorithms",
				"token-bucket,sliding-window-log", "--lease", "off,2%", "--lease-duration", "500ms" });
		assertThat(options.leaseBudgets()).containsExactly(0.0, 2.0);
		assertThat(options.leaseDuration()).isEqualTo(Duration.ofMillis(500));
		assertThat(options.anyLeases()).isTrue();
		Plan bucket = new Plan(Algorithm.TOKEN_BUCKET, 50, Duration.ofMillis(100));
		assertThat(options.leasesFor(bucket)).containsExactly(Leases.OFF, new Leases(2, Duration.ofMillis(500)));
		assertThat(options.leasesFor(new Plan(Algorithm.SLIDING_WINDOW_LOG, 50, Duration.ofMillis(100))))
			.containsExactly(Leases.OFF);
		assertThat(new Leases(2, Duration.ofMillis(500)).label()).isEqualTo("2% for 500ms");
		assertThat(bucket.limits(2).leaseTokens()).isEqualTo(1);
		assertThat(bucket.limits().leaseTokens()).isZero();

		AccuracyRun.Options defaults = AccuracyRun.Options.parse(new String[0]);
		assertThat(defaults.leaseBudgets()).containsExactly(0.0);
		assertThat(defaults.leaseDuration()).isEqualTo(Duration.ofSeconds(1));
		assertThat(defaults.anyLeases()).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> AccuracyRun.Options.parse(new String[] { "--lease-duration", "11s" }));
		assertThatIllegalArgumentException().isThrownBy(() -> AccuracyRun.Options.parse(new String[] { "--lease" }));
	}

	@Test
	void scriptCallsAreEvalshaPlusEvalInCommandstats() {
		String info = "# Commandstats\r\ncmdstat_evalsha:calls=1200,usec=9000,usec_per_call=7.50,rejected_calls=0,"
				+ "failed_calls=0\r\ncmdstat_eval:calls=3,usec=60,usec_per_call=20.00,rejected_calls=0,failed_calls=0"
				+ "\r\ncmdstat_info:calls=7,usec=1\r\n";
		assertThat(AccuracyRun.parseScriptCalls(info)).isEqualTo(1203);
		assertThat(AccuracyRun.parseScriptCalls("# Commandstats\r\n")).isZero();
	}

	@Test
	void timingExecutorGivesTheStoreTheShippedReply() {
		long[] target = { -1 };
		List<Object> reply = List.of(1L, 1L, 48L, 0L, 4L, 1L, 1_000_000L, 1_700_000_000_123_456L);
		assertThat(GatewayInstance.TimingExecutor.stripTime(reply, target)).containsExactly(1L, 1L, 48L, 0L, 4L, 1L,
				1_000_000L);
		assertThat(target[0]).isEqualTo(1_700_000_000_123_456L);
		assertThat(GatewayInstance.TimingExecutor.stripTime(List.of(1L), target)).containsExactly(1L); // a refund
		assertThat(GatewayInstance.TimingExecutor.stripTime(List.of(0L, 0L, 0L, 5L, 90L, 7L), null)).hasSize(5);
	}

	@Test
	void samplesKeepWhetherTheyWereLeasedAndReadTheOldLines() {
		Sample leased = new Sample(1, 2, 3, true, false, true);
		assertThat(Sample.fromLine(leased.toLine())).isEqualTo(leased);
		assertThat(Sample.fromLine("1 2 3 1 0")).isEqualTo(new Sample(1, 2, 3, true, false, false));
	}

	@Test
	void aRunAboveItsBoundIsListedAsAViolation() {
		Plan plan = new Plan(Algorithm.TOKEN_BUCKET, 2, Duration.ofMillis(100));
		long[] at = { 0, 1, 2 }; // three at once from a bucket of two
		List<Sample> samples = new java.util.ArrayList<>();
		for (long t : at) {
			samples.add(new Sample(0, 0, 1_000_000 + t, true, false, true));
		}
		samples.add(new Sample(0, 0, 1_050_000, false, false));
		AccuracyAnalysis run = AccuracyAnalysis.of(plan, samples, new Leases(50, Duration.ofSeconds(1)), 2);
		assertThat(run.leased()).isEqualTo(3);
		assertThat(run.upperBound().holds()).isFalse();
		assertThat(run.meetsTarget()).isFalse();
		assertThat(AccuracyRun.boundViolations(List.of(run))).singleElement().asString()
			.startsWith("token-bucket, lease 50% for 1s: 3 admitted");
		assertThat(AccuracyRun.upperBoundSection(List.of(run))).contains("**EXCEEDED**");
	}

}
