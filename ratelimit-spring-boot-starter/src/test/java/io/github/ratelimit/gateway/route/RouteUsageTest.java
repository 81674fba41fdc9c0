package io.github.ratelimit.gateway.route;

import java.net.InetAddress;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RouteUsage}: what a request reserves (its estimate, capped at {@code reserve-max}; {@code reserve-max} when it
 * carries none usable) and which answers count.
 */
class RouteUsageTest {

	@Test
	void aHeaderEstimateIsCappedAndAMissingOrBadOneReservesTheMost() {
		RouteUsage usage = parse("header:X-Usage", "header:X-Max-Tokens", 400L, null).resolved(1_000);
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("250"))), null)).isEqualTo(250);
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("9000"))), null)).isEqualTo(400);
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("12.5"))), null)).isEqualTo(13);
		assertThat(usage.reservation(request(Map.of()), null)).isEqualTo(400);
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("many"))), null)).isEqualTo(400);
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("-3"))), null)).isEqualTo(400);
		// two values: which one the client meant is not known
		assertThat(usage.reservation(request(Map.of("X-Max-Tokens", List.of("1", "2"))), null)).isEqualTo(400);
	}

	@Test
	void aBodyEstimateIsTheReadingTheFrontEndGives() {
		RouteUsage usage = parse("json:usage.total_tokens", "json:max_tokens", null, null).resolved(1_000);
		assertThat(usage.reserveMax()).isEqualTo(1_000);
		assertThat(usage.reservation(request(Map.of()), UsageReading.found(300))).isEqualTo(300);
		assertThat(usage.reservation(request(Map.of()), UsageReading.notJson())).isEqualTo(1_000);
		assertThat(usage.reservation(request(Map.of()), null)).isEqualTo(1_000);
	}

	@Test
	void withoutReserveARequestReservesTheMost() {
		RouteUsage usage = parse("bytes", null, 2_000L, null).resolved(10_000);
		assertThat(usage.reservation(request(Map.of()), null)).isEqualTo(2_000);
		assertThat(usage.usageMax()).isEqualTo(UsageReading.MAX_VALUE); // an answer is charged all it reports
	}

	@Test
	void countWhenHoldsCodesAndClasses() {
		RouteUsage usage = parse(null, null, null, "401, 403,5xx");
		assertThat(usage.settles()).isTrue();
		assertThat(usage.counts(401)).isTrue();
		assertThat(usage.counts(503)).isTrue();
		assertThat(usage.counts(200)).isFalse();
		assertThat(usage.counts(404)).isFalse();
		assertThat(RouteUsage.NONE.counts(200)).isTrue();
		assertThat(RouteUsage.NONE.settles()).isFalse();
	}

	private static RouteUsage parse(@Nullable String usage, @Nullable String reserve, @Nullable Long reserveMax,
			@Nullable String countWhen) {
		List<ConfigurationViolation> v = new ArrayList<>();
		RouteUsage parsed = RouteUsage.parse(usage, reserve, reserveMax, countWhen, "r", v);
		assertThat(v).isEmpty();
		assertThat(parsed).isNotNull();
		return parsed;
	}

	private static ClientRequest request(Map<String, List<String>> headers) {
		return new ClientRequest() {

			@Override
			public List<String> headerValues(String name) {
				return headers.getOrDefault(name, List.of());
			}

			@Override
			public @Nullable InetAddress remoteAddress() {
				return null;
			}

			@Override
			public @Nullable Principal principal() {
				return null;
			}

		};
	}

}
