package io.github.ratelimit.gateway.route;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.usage.UsageField;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link UsageMeter}'s settlement rules, over a reservation that records how it was ended: what an answer reports is
 * charged (at most the ceiling, 2^53 once resolved), an answer that reports nothing usable is charged its reservation, an answer
 * whose status does not count gives everything back, and a meter ends once.
 */
class UsageMeterTest {

	private final List<String> ended = new ArrayList<>();

	private final List<UsageReading.Kind> problems = new ArrayList<>();

	private final List<long[]> settled = new ArrayList<>();

	/** Most units the reservation's store takes in one settlement. */
	private long storeTakes = Long.MAX_VALUE;

	private final Reservation reservation = new Reservation() {

		@Override
		public CompletionStage<Long> settle(long used) {
			UsageMeterTest.this.ended.add("settle " + used);
			return CompletableFuture.completedFuture(Math.min(used, UsageMeterTest.this.storeTakes));
		}

		@Override
		public CompletionStage<Long> cancel() {
			UsageMeterTest.this.ended.add("cancel");
			return CompletableFuture.completedFuture(0L);
		}

		@Override
		public long reserved() {
			return 300;
		}

	};

	private final UsageMeter.UsageReports reports = new UsageMeter.UsageReports() {

		@Override
		public void settled(long reserved, long reported, long charged) {
			UsageMeterTest.this.settled.add(new long[] { reserved, reported, charged });
		}

		@Override
		public void problem(UsageReading.Kind kind) {
			UsageMeterTest.this.problems.add(kind);
		}

	};

	private static final RouteUsage JSON = new RouteUsage(
			new RouteUsage.Measure.Json(UsageField.parse("usage.total_tokens")), new RouteUsage.Reserve.Fixed(300), 400,
			1000, null);

	@Test
	void aJsonAnswerIsChargedWhatItReports() {
		UsageMeter meter = meter(JSON);
		meter.answer(200, new HttpHeaders(), "application/json");
		meter.body(bytes("{\"usage\":{\"total_"));
		meter.body(bytes("tokens\":120}}"));
		meter.end(true);
		assertThat(this.ended).containsExactly("settle 120");
		assertThat(this.settled).singleElement().satisfies((s) -> assertThat(s).containsExactly(300, 120, 120));
		assertThat(this.problems).isEmpty();
	}

	@Test
	void theReportsGetWhatWasReportedAndWhatTheStoreCharged() {
		this.storeTakes = 700; // say a debt beyond what the store carries
		UsageMeter meter = meter(JSON);
		meter.answer(200, new HttpHeaders(), "application/json");
		meter.body(bytes("{\"usage\":{\"total_tokens\":900}}"));
		meter.end(true);
		assertThat(this.ended).containsExactly("settle 900"); // beyond the reservation and the capacity: all of it
		assertThat(this.settled).singleElement().satisfies((s) -> assertThat(s).containsExactly(300, 900, 700));
	}

	@Test
	void anEventStreamIsReadEventByEvent() {
		UsageMeter meter = meter(JSON);
		meter.answer(200, new HttpHeaders(), "text/event-stream; charset=utf-8");
		meter.body(bytes("data: {\"usage\":{\"total_tokens\":57}}\n\ndata: [DONE]\n\n"));
		meter.end(true);
		assertThat(this.ended).containsExactly("settle 57");
	}

	@Test
	void aValueAboveTheCeilingIsChargedTheCeilingAndReported() {
		UsageMeter meter = meter(JSON);
		meter.answer(200, new HttpHeaders(), "application/json");
		meter.body(bytes("{\"usage\":{\"total_tokens\":5000}}"));
		meter.end(true);
		assertThat(this.ended).containsExactly("settle 1000");
		assertThat(this.problems).containsExactly(UsageReading.Kind.TOO_LARGE);
	}

	@Test
	void anAnswerWithoutUsableUsageIsChargedItsReservationAndReported() {
		UsageMeter notJson = meter(JSON);
		notJson.answer(200, new HttpHeaders(), "text/html");
		notJson.body(bytes("<html></html>"));
		notJson.end(true);
		RouteUsage header = new RouteUsage(new RouteUsage.Measure.Header("X-Usage"), new RouteUsage.Reserve.Fixed(300),
				300, 1000, null);
		UsageMeter negative = meter(header);
		negative.answer(200, headers("X-Usage", "-5"), null);
		negative.end(true);
		UsageMeter missing = meter(header);
		missing.answer(200, new HttpHeaders(), null);
		missing.end(true);
		assertThat(this.ended).containsExactly("settle 300", "settle 300", "settle 300");
		assertThat(this.problems).containsExactly(UsageReading.Kind.NOT_JSON, UsageReading.Kind.NEGATIVE,
				UsageReading.Kind.MISSING);
	}

	@Test
	void aNumberBeyondWhatAReadingHoldsIsChargedTheCapacityAndAHeaderWithSeveralValuesItsReservation() {
		RouteUsage header = new RouteUsage(new RouteUsage.Measure.Header("X-Usage"), new RouteUsage.Reserve.Fixed(300),
				300, 1000, null);
		UsageMeter huge = meter(header);
		huge.answer(200, headers("X-Usage", "1e30"), null);
		huge.end(true);
		UsageMeter several = meter(header);
		several.answer(200, headers("X-Usage", "10", "500"), null);
		several.end(true);
		assertThat(this.ended).containsExactly("settle 1000", "settle 300");
		assertThat(this.problems).containsExactly(UsageReading.Kind.TOO_LARGE, UsageReading.Kind.NOT_A_NUMBER);
	}

	@Test
	void anAnswerCutShortOrNeverGivenIsChargedItsReservationWithoutAProblem() {
		UsageMeter cut = meter(JSON);
		cut.answer(200, new HttpHeaders(), "application/json");
		cut.body(bytes("{\"choices\":[{\"text\":\"par"));
		cut.end(false);
		meter(JSON).end(false);
		assertThat(this.ended).containsExactly("settle 300", "settle 300");
		assertThat(this.problems).isEmpty();
	}

	@Test
	void bytesAreChargedAsSentEvenWhenCutShort() {
		RouteUsage bytes = new RouteUsage(new RouteUsage.Measure.Bytes(), new RouteUsage.Reserve.Fixed(300), 300, 1000,
				null);
		UsageMeter meter = meter(bytes);
		meter.answer(200, new HttpHeaders(), null);
		meter.body(ByteBuffer.wrap(new byte[70]));
		meter.body(ByteBuffer.wrap(new byte[30]));
		meter.end(false);
		assertThat(this.ended).containsExactly("settle 100");
	}

	@Test
	void anAnswerWhoseStatusDoesNotCountGivesEverythingBackAndAMeterEndsOnce() {
		BitSet failures = new BitSet();
		failures.set(401);
		failures.set(403);
		RouteUsage login = new RouteUsage(null, null, 0, 0, failures);
		UsageMeter success = meter(login);
		success.answer(200, new HttpHeaders(), null);
		success.end(true);
		success.end(true);
		UsageMeter failure = meter(login);
		failure.answer(401, new HttpHeaders(), null);
		failure.end(true);
		UsageMeter noAnswer = meter(login);
		noAnswer.end(false);
		assertThat(this.ended).containsExactly("cancel", "settle 0", "settle 0");
	}

	private static HttpHeaders headers(String name, String... values) {
		HttpHeaders headers = new HttpHeaders();
		headers.addAll(name, List.of(values));
		return headers;
	}

	private UsageMeter meter(RouteUsage usage) {
		return new UsageMeter(usage, this.reservation, this.reports);
	}

	private static ByteBuffer bytes(String text) {
		return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
	}

}
