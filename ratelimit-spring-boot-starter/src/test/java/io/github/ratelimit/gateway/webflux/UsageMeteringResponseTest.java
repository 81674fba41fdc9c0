package io.github.ratelimit.gateway.webflux;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.route.RouteUsage;
import io.github.ratelimit.gateway.route.UsageMeter;
import io.github.ratelimit.gateway.usage.UsageField;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.mock.http.server.reactive.MockServerHttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link UsageMeteringResponse} in front of a server whose write never ends once it has cancelled its exchange (as
 * Reactor Netty's, which cancels the exchange of a 204 answer it has sent whole, and then never ends the write it
 * had started): once told the client has gone, the response stops waiting for that write, reads the rest of the
 * upstream's body into the meter, and completes, so that the chain ends and the meter settles. Pure logic over
 * Spring's mock response: the same answers through a real gateway are in {@code UsageHostileIntegrationTest}.
 */
class UsageMeteringResponseTest {

	private static final RouteUsage JSON = new RouteUsage(
			new RouteUsage.Measure.Json(UsageField.parse("usage.total_tokens")), new RouteUsage.Reserve.Fixed(100), 400,
			1000, null);

	private final List<String> ended = new CopyOnWriteArrayList<>();

	private final Reservation reservation = new Reservation() {

		@Override
		public CompletionStage<Long> settle(long used) {
			UsageMeteringResponseTest.this.ended.add("settle " + used);
			return CompletableFuture.completedFuture(used);
		}

		@Override
		public CompletionStage<Long> cancel() {
			UsageMeteringResponseTest.this.ended.add("cancel");
			return CompletableFuture.completedFuture(0L);
		}

		@Override
		public long reserved() {
			return 100;
		}

	};

	private final UsageMeter meter = new UsageMeter(JSON, this.reservation, new UsageMeter.UsageReports() {

		@Override
		public void settled(long reserved, long reported, long charged) {
		}

		@Override
		public void problem(UsageReading.Kind kind) {
		}

	});

	/** A server's response that takes every chunk written (and releases it) but never ends the write. */
	private final ServerHttpResponseDecorator neverEnding = new ServerHttpResponseDecorator(
			new MockServerHttpResponse()) {

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return Flux.from(body).doOnNext(DataBufferUtils::release).then(Mono.never());
		}

	};

	@Test
	void anAnswerWithoutABodyWrittenWholeEndsOnceTheServerCancels() {
		UsageMeteringResponse response = metering(HttpStatus.NO_CONTENT);
		Mono<Void> write = response.writeWith(Flux.empty());
		StepVerifier.create(write).then(response::clientGone).expectComplete().verify(Duration.ofSeconds(10));
		response.end(true);
		assertThat(this.ended).containsExactly("settle 100");
	}

	@Test
	void aClientGoneMidAnswerHasTheRestReadIntoTheMeterThoughTheWriteNeverEnds() {
		UsageMeteringResponse response = metering(HttpStatus.OK);
		Sinks.Many<DataBuffer> upstream = Sinks.many().unicast().onBackpressureBuffer();
		Mono<Void> write = response.writeWith(upstream.asFlux());
		StepVerifier.create(write)
			.then(() -> upstream.tryEmitNext(chunk("{\"usage\":{\"total_")))
			.then(response::clientGone)
			.then(() -> upstream.tryEmitNext(chunk("tokens\":30}}")))
			.then(upstream::tryEmitComplete)
			.expectComplete()
			.verify(Duration.ofSeconds(10));
		response.end(true);
		assertThat(this.ended).containsExactly("settle 30");
	}

	private UsageMeteringResponse metering(HttpStatus status) {
		UsageMeteringResponse response = new UsageMeteringResponse(this.neverEnding, null);
		response.setStatusCode(status);
		response.getHeaders().set(HttpHeaders.CONTENT_TYPE, "application/json");
		response.meter(this.meter);
		return response;
	}

	private static DataBuffer chunk(String text) {
		return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
	}

}
