package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.route.UsageMeter;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * The response of an exchange on a route whose answers settle what a request reserved, made by the
 * {@link UsageMeteringGlobalFilter} before Gateway writes the upstream's answer: it shows the {@link UsageMeter} of
 * the exchange's latest admitted attempt ({@link #meter}) the answer as it is written (the status and header fields
 * when the body starts, or when the response completes without one; then each chunk of the body, read in place,
 * never copied nor held), and ends that meter once the exchange is over ({@link #end}). Without a meter (a refused
 * request) it only passes the answer on.
 */
final class UsageMeteringResponse extends ServerHttpResponseDecorator {

	/** Exchange attribute holding this response, for the {@code RateLimit} filter to hand it its meter. */
	static final String ATTRIBUTE = UsageMeteringResponse.class.getName();

	private volatile @Nullable UsageMeter meter;

	private boolean answered;

	UsageMeteringResponse(ServerHttpResponse response) {
		super(response);
	}

	/**
	 * Meter the answer for this attempt's meter; a meter of an earlier attempt (a {@code Retry} filter in front of
	 * the {@code RateLimit} filter) is ended first, as cut short.
	 * @param attempt the admitted attempt's meter
	 */
	void meter(UsageMeter attempt) {
		UsageMeter previous = this.meter;
		this.meter = attempt;
		if (previous != null) {
			previous.end(false);
		}
	}

	/**
	 * The exchange is over: end the meter, if any.
	 * @param complete whether the answer was written in full
	 */
	void end(boolean complete) {
		UsageMeter current = this.meter;
		if (current != null) {
			current.end(complete);
		}
	}

	/**
	 * The upstream's response head has arrived and its answer will not be written (its client has gone): show the
	 * meter its status and header fields now, once, so that the exchange's end settles by them.
	 */
	void upstreamAnswered() {
		answered();
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		UsageMeter current = answered();
		return (current == null) ? super.writeWith(body)
				: super.writeWith(Flux.from(body).doOnNext((buffer) -> read(current, buffer)));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		UsageMeter current = answered();
		return (current == null) ? super.writeAndFlushWith(body) : super.writeAndFlushWith(
				Flux.from(body).map((chunks) -> Flux.from(chunks).doOnNext((buffer) -> read(current, buffer))));
	}

	@Override
	public Mono<Void> setComplete() {
		answered();
		return super.setComplete();
	}

	/**
	 * Show the meter the status and header fields as the upstream gave them (copied onto this response by Gateway's
	 * routing), once.
	 * @return the meter, {@code null} when there is none
	 */
	private synchronized @Nullable UsageMeter answered() {
		UsageMeter current = this.meter;
		if (current == null || this.answered) {
			return current;
		}
		this.answered = true;
		HttpStatusCode status = getStatusCode();
		HttpHeaders headers = getHeaders();
		current.answer((status != null) ? status.value() : 200, headers, headers.getFirst(HttpHeaders.CONTENT_TYPE));
		return current;
	}

	private static void read(UsageMeter meter, DataBuffer buffer) {
		try (DataBuffer.ByteBufferIterator chunks = buffer.readableByteBuffers()) {
			while (chunks.hasNext()) {
				meter.body(chunks.next());
			}
		}
	}

}
