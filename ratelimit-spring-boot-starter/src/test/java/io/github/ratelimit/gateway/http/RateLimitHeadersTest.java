package io.github.ratelimit.gateway.http;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.http.HeaderStyle;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTest {

	private static final LimitDefinition PER_SECOND = new LimitDefinition("free-api-1s", 20, 10, Duration.ofSeconds(1));

	private static final LimitDefinition PER_DAY = new LimitDefinition("free-api-1d", 10_000, 10_000, Duration.ofDays(1));

	private static final PlanLimits LIMITS = new PlanLimits("free", "api", List.of(PER_SECOND, PER_DAY));

	private final RateLimitDecision denied = RateLimitDecision.shared(LIMITS, false,
			List.of(new LimitStatus(PER_SECOND, false, 0, 100, 2_000), new LimitStatus(PER_DAY, true, 9_000, 0, 8_640_001)));

	@Test
	void ietfFieldsListEveryPolicy() {
		HttpHeaders headers = write(HeaderStyle.IETF, this.denied);
		assertThat(headers.getFirst("RateLimit-Policy")).isEqualTo("\"free-api-1s\";q=20;w=2, \"free-api-1d\";q=10000;w=86400");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"free-api-1s\";r=0;t=2, \"free-api-1d\";r=9000;t=8641");
		assertThat(headers.containsHeader("X-RateLimit-Limit")).isFalse();
	}

	@Test
	void aConcurrencyLimitHasTheQuotaUnitConcurrencyAndNoWindowNorReset() {
		LimitDefinition slots = LimitDefinition.concurrency("pro-reports-concurrency", 3, Duration.ofSeconds(30));
		PlanLimits limits = new PlanLimits("pro", "reports", List.of(PER_SECOND, slots));
		HttpHeaders headers = write(HeaderStyle.IETF, RateLimitDecision.shared(limits, true,
				List.of(new LimitStatus(PER_SECOND, true, 19, 0, 100), new LimitStatus(slots, true, 1, 0, 30_000))));
		assertThat(headers.getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-api-1s\";q=20;w=2, \"pro-reports-concurrency\";q=3;qu=\"concurrency\"");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"free-api-1s\";r=19;t=1, \"pro-reports-concurrency\";r=1");
	}

	@Test
	void aLimitCountingUsageCarriesItsUnitAsTheQuotaUnit() {
		LimitDefinition tokens = new LimitDefinition("free-chat-tokens", 100_000, 100_000, Duration.ofMinutes(1))
			.withUnit("tokens");
		PlanLimits limits = new PlanLimits("free", "chat", List.of(PER_SECOND, tokens));
		HttpHeaders headers = write(HeaderStyle.IETF, RateLimitDecision.shared(limits, true,
				List.of(new LimitStatus(PER_SECOND, true, 19, 0, 100), new LimitStatus(tokens, true, 96_000, 0, 2_400))));
		assertThat(headers.getFirst("RateLimit-Policy"))
			.isEqualTo("\"free-api-1s\";q=20;w=2, \"free-chat-tokens\";q=100000;w=60;qu=\"tokens\"");
		assertThat(headers.getFirst("RateLimit")).isEqualTo("\"free-api-1s\";r=19;t=1, \"free-chat-tokens\";r=96000;t=3");
	}

	@Test
	void legacyFieldsShowAConcurrencyLimitOnlyWhenItAloneIsViolatedAndWithoutReset() {
		LimitDefinition slots = LimitDefinition.concurrency("pro-reports-concurrency", 3, Duration.ofSeconds(30));
		PlanLimits limits = new PlanLimits("pro", "reports", List.of(PER_SECOND, slots));
		HttpHeaders allowed = write(HeaderStyle.LEGACY, RateLimitDecision.shared(limits, true,
				List.of(new LimitStatus(PER_SECOND, true, 19, 0, 100), new LimitStatus(slots, true, 0, 0, 30_000))));
		assertThat(allowed.getFirst("X-RateLimit-Limit")).isEqualTo("20");
		assertThat(allowed.getFirst("X-RateLimit-Remaining")).isEqualTo("19");
		HttpHeaders bySlots = write(HeaderStyle.LEGACY, RateLimitDecision.shared(limits, false,
				List.of(new LimitStatus(PER_SECOND, true, 19, 0, 100), new LimitStatus(slots, false, 0, 2_000, 30_000))));
		assertThat(bySlots.getFirst("X-RateLimit-Limit")).isEqualTo("3");
		assertThat(bySlots.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(bySlots.containsHeader("X-RateLimit-Reset")).isFalse();
	}

	@Test
	void legacyFieldsDescribeTheViolatedLimit() {
		HttpHeaders headers = write(HeaderStyle.LEGACY, this.denied);
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("20");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(headers.getFirst("X-RateLimit-Reset")).isEqualTo("2");
		assertThat(headers.containsHeader("RateLimit")).isFalse();
	}

	@Test
	void legacyFieldsOfAnAllowedRequestDescribeTheLimitWithFewestTokensLeft() {
		RateLimitDecision allowed = RateLimitDecision.shared(LIMITS, true, List.of(new LimitStatus(PER_SECOND, true, 19, 0, 100),
				new LimitStatus(PER_DAY, true, 5, 0, 8_000_000)));
		HttpHeaders headers = write(HeaderStyle.LEGACY, allowed);
		assertThat(headers.getFirst("X-RateLimit-Limit")).isEqualTo("10000");
		assertThat(headers.getFirst("X-RateLimit-Remaining")).isEqualTo("5");
	}

	@Test
	void bothAndNone() {
		assertThat(write(HeaderStyle.BOTH, this.denied).headerNames()).contains("RateLimit", "RateLimit-Policy",
				"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
		assertThat(write(HeaderStyle.NONE, this.denied).isEmpty()).isTrue();
	}

	@Test
	void undecidedDecisionWritesNothing() {
		assertThat(write(HeaderStyle.BOTH, RateLimitDecision.unavailable(LIMITS)).isEmpty()).isTrue();
	}

	@Test
	void policyNamesAreValidStructuredFieldStrings() {
		LimitDefinition odd = new LimitDefinition("a\"b\\cé", 1, 1, Duration.ofMillis(500));
		RateLimitDecision decision = RateLimitDecision.shared(new PlanLimits("p", "g", List.of(odd)), true,
				List.of(new LimitStatus(odd, true, 0, 0, 500)));
		assertThat(write(HeaderStyle.IETF, decision).getFirst("RateLimit-Policy")).isEqualTo("\"a\\\"b\\\\c_\";q=1;w=1");
	}

	@Test
	void retryAfterIsWholeSecondsRoundedUpAndAtLeastOne() {
		assertThat(RateLimitHeaders.retryAfterSeconds(0)).isEqualTo(1);
		assertThat(RateLimitHeaders.retryAfterSeconds(1)).isEqualTo(1);
		assertThat(RateLimitHeaders.retryAfterSeconds(1_000)).isEqualTo(1);
		assertThat(RateLimitHeaders.retryAfterSeconds(1_001)).isEqualTo(2);
		assertThat(RateLimitHeaders.retryAfterSeconds(59_000)).isEqualTo(59);
	}

	private static HttpHeaders write(HeaderStyle style, RateLimitDecision decision) {
		HttpHeaders headers = new HttpHeaders();
		new RateLimitHeaders(style).write(decision, headers);
		return headers;
	}

}
