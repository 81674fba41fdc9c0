package io.github.ratelimit.gateway.webflux;

import java.time.Duration;

import io.github.ratelimit.gateway.route.UsageMeter;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
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
 *
 * <p>When the client goes away while the body may still change the charge ({@link UsageMeter#decided()} is
 * {@code false}; on a route run as an {@link AnswerAwaitingCall}, before the body or in its middle) the rest of the
 * upstream's body is read into the meter only: nothing is written to the client, each chunk is released once read,
 * and reading stops (the upstream's body cancelled, which closes its connection) once the meter has decided, or after
 * the drain limit (the route's response timeout) has passed; the write then completes, so that the chain ends and the
 * meter settles ({@link #end}: complete only when the body was read to its end).
 */
final class UsageMeteringResponse extends ServerHttpResponseDecorator {

	/** Exchange attribute holding this response, for the {@code RateLimit} filter to hand it its meter. */
	static final String ATTRIBUTE = UsageMeteringResponse.class.getName();

	private volatile @Nullable UsageMeter meter;

	private boolean answered;

	/** Longest time the rest of a body is read for a client gone; {@code null}: until it ends. */
	private final @Nullable Duration drainLimit;

	/** Whether the client has gone (told by the {@link AnswerAwaitingCall}): a body is then read, not written. */
	private volatile boolean clientGone;

	/** Completes once the client has gone: a write to it still running may never end, so nobody waits for it. */
	private final Sinks.Empty<Void> gone = Sinks.empty();

	/** Whether reading a body for a client gone stopped before its end. */
	private volatile boolean drainCutShort;

	UsageMeteringResponse(ServerHttpResponse response, @Nullable Duration drainLimit) {
		super(response);
		this.drainLimit = drainLimit;
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
			current.end(complete && !this.drainCutShort);
		}
	}

	/**
	 * The upstream's response head has arrived and its answer will not be written (its client has gone): show the
	 * meter its status and header fields now, once, so that the exchange's end settles by them.
	 * @return whether the meter has decided ({@link UsageMeter#decided()}; no meter: {@code true}): {@code false}
	 * when the body must be read on
	 */
	boolean upstreamAnswered() {
		UsageMeter current = answered();
		return current == null || current.decided();
	}

	/** The client has gone: a body not yet written is read into the meter only. */
	void clientGone() {
		this.clientGone = true;
		this.gone.tryEmitEmpty();
	}

	@Override
	public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
		UsageMeter current = answered();
		if (current == null) {
			return super.writeWith(body);
		}
		Relay relay = new Relay(Flux.from(body), current);
		if (this.clientGone) {
			return relay.drainAlone();
		}
		return relay.after(super.writeWith(relay.toClient()));
	}

	@Override
	public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
		UsageMeter current = answered();
		if (current == null) {
			return super.writeAndFlushWith(body);
		}
		Relay relay = new Relay(Flux.from(body).concatMap(Flux::from), current);
		if (this.clientGone) {
			return relay.drainAlone();
		}
		return relay.after(super.writeAndFlushWith(relay.toClient().map(Mono::just)));
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

	/**
	 * The upstream's body on its way to the client, shown to the meter chunk by chunk; when the client's side
	 * cancels (the client gone) and the meter has not decided, it reads the rest into the meter only.
	 */
	private final class Relay extends BaseSubscriber<DataBuffer> {

		private final Flux<? extends DataBuffer> source;

		private final UsageMeter meter;

		private final Sinks.Empty<Void> finished = Sinks.empty();

		private volatile @Nullable FluxSink<DataBuffer> sink;

		private volatile boolean draining;

		/** Whether the upstream's body has been subscribed to (by the client's write, or to read it alone). */
		private volatile boolean subscribed;

		private volatile @Nullable Disposable limit;

		Relay(Flux<? extends DataBuffer> source, UsageMeter meter) {
			this.source = source;
			this.meter = meter;
		}

		/** The body for the client's write: what the upstream sends, at the client's pace. */
		Flux<DataBuffer> toClient() {
			return Flux.<DataBuffer>create((sink) -> {
				this.sink = sink;
				this.source.subscribe(this);
				sink.onRequest(this::request);
				sink.onCancel(this::drain);
			}).doOnDiscard(DataBuffer.class, DataBufferUtils::release); // chunks the sink holds when cancelled
		}

		/** Read the body into the meter alone (the client went before it): completes once reading is over. */
		Mono<Void> drainAlone() {
			this.draining = true;
			startLimit();
			this.source.subscribe(this);
			return this.finished.asMono();
		}

		/**
		 * The client's write, then, if the client went during it, the end of reading the rest. Once the client has
		 * gone the write is not waited for (cancelled, which reads the rest into the meter): a server that has
		 * cancelled its exchange may never end a write it had started (a 204 answer sent whole, then the exchange
		 * cancelled by the server), and a chain left waiting for it would never end its meter.
		 */
		Mono<Void> after(Mono<Void> write) {
			Mono<Void> written = write.onErrorResume((ex) -> {
				drain(); // a write to a connection gone: read on, unless the meter has decided
				return this.draining ? Mono.empty() : Mono.error(ex);
			});
			return Mono.firstWithSignal(written, UsageMeteringResponse.this.gone.asMono())
				.then(Mono.defer(() -> (this.subscribed || this.draining) ? awaitDrained() : drainAlone()));
		}

		private Mono<Void> awaitDrained() {
			return this.draining ? this.finished.asMono() : Mono.empty();
		}

		/** The client's side cancelled: read on into the meter, unless it has decided. */
		private void drain() {
			if (isDisposed()) {
				return;
			}
			if (this.meter.decided()) {
				cutShort();
				return;
			}
			this.draining = true;
			startLimit();
			request(Long.MAX_VALUE);
		}

		private void startLimit() {
			Duration drainLimit = UsageMeteringResponse.this.drainLimit;
			if (drainLimit != null) {
				this.limit = Mono.delay(drainLimit).subscribe((tick) -> cutShort());
			}
		}

		/** Stop reading before the body's end. */
		private void cutShort() {
			UsageMeteringResponse.this.drainCutShort = true;
			cancel();
		}

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			this.subscribed = true;
			if (this.draining) {
				subscription.request(Long.MAX_VALUE);
			}
		}

		@Override
		protected void hookOnNext(DataBuffer buffer) {
			read(this.meter, buffer);
			FluxSink<DataBuffer> client = this.sink;
			if (!this.draining && client != null && !client.isCancelled()) {
				client.next(buffer);
				return;
			}
			DataBufferUtils.release(buffer);
			if (this.meter.decided()) {
				cutShort();
			}
		}

		@Override
		protected void hookOnComplete() {
			FluxSink<DataBuffer> client = this.sink;
			if (!this.draining && client != null) {
				client.complete();
			}
		}

		@Override
		protected void hookOnError(Throwable error) {
			FluxSink<DataBuffer> client = this.sink;
			if (!this.draining && client != null) {
				client.error(error);
			}
			else {
				UsageMeteringResponse.this.drainCutShort = true;
			}
		}

		@Override
		protected void hookFinally(SignalType type) {
			Disposable timer = this.limit;
			if (timer != null) {
				timer.dispose();
			}
			this.finished.tryEmitEmpty();
		}

	}

	private static void read(UsageMeter meter, DataBuffer buffer) {
		try (DataBuffer.ByteBufferIterator chunks = buffer.readableByteBuffers()) {
			while (chunks.hasNext()) {
				meter.body(chunks.next());
			}
		}
	}

}
