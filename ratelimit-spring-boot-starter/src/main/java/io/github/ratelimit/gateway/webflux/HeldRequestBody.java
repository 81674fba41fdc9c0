package io.github.ratelimit.gateway.webflux;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * A request body read up to a limit before the request is decided, then let through whole: the chunks read so far
 * (held: at most the limit plus the rest of the chunk that crosses it), followed by the rest of the body as it
 * arrives, with the downstream's demand. The reader sees the body's first {@code limit} bytes at most. The body is subscribed to once; {@link #body()} may be subscribed to once, and a body that is never
 * forwarded must be {@link #release() released}.
 */
final class HeldRequestBody extends BaseSubscriber<DataBuffer> {

	private final long limit;

	private final Consumer<ByteBuffer> reader;

	private final Sinks.One<HeldRequestBody> read = Sinks.one();

	private final List<DataBuffer> held = new ArrayList<>();

	private long size;

	private boolean ended;

	private @Nullable Throwable error;

	private @Nullable FluxSink<DataBuffer> relay;

	private HeldRequestBody(long limit, Consumer<ByteBuffer> reader) {
		this.limit = limit;
		this.reader = reader;
	}

	/**
	 * Read a body until it ends or more than {@code limit} bytes were read, showing its first {@code limit} bytes to a
	 * reader.
	 * @param body the request body
	 * @param limit most bytes to show the reader (the chunk that crosses it is held whole)
	 * @param reader sees the bytes read, in order, as views it must not keep nor change the position of
	 * @return the held body, once read so far (never an error: a body that fails is held up to its error, which
	 * {@link #body()} then signals)
	 */
	static Mono<HeldRequestBody> read(Flux<DataBuffer> body, long limit, Consumer<ByteBuffer> reader) {
		HeldRequestBody held = new HeldRequestBody(limit, reader);
		body.subscribe(held);
		return held.read.asMono();
	}

	/**
	 * Whether the whole body was read (it ended within the limit).
	 * @return {@code true} when the reader saw every byte
	 */
	boolean complete() {
		return this.ended && this.error == null;
	}

	/**
	 * The whole body: the held chunks, then the rest.
	 * @return the body, to be subscribed to once
	 */
	Flux<DataBuffer> body() {
		return Flux.create((sink) -> {
			synchronized (this) {
				for (DataBuffer chunk : this.held) {
					sink.next(chunk);
				}
				this.held.clear();
				if (this.error != null) {
					sink.error(this.error);
				}
				else if (this.ended) {
					sink.complete();
				}
				else {
					this.relay = sink;
					sink.onRequest(this::request);
					sink.onCancel(this::cancel);
				}
			}
		});
	}

	/** The body will not be forwarded: the held chunks are released and the rest is not read. */
	synchronized void release() {
		this.held.forEach(DataBufferUtils::release);
		this.held.clear();
		cancel();
	}

	@Override
	protected void hookOnSubscribe(Subscription subscription) {
		request(1);
	}

	@Override
	protected void hookOnNext(DataBuffer chunk) {
		FluxSink<DataBuffer> sink;
		long before;
		synchronized (this) {
			sink = this.relay;
			before = this.size;
			if (sink == null) {
				this.held.add(chunk);
				this.size += chunk.readableByteCount();
			}
		}
		if (sink != null) {
			sink.next(chunk);
			return;
		}
		show(chunk, this.limit - before);
		if (this.size > this.limit) {
			this.read.tryEmitValue(this);
		}
		else {
			request(1);
		}
	}

	/** Show the reader a chunk's first {@code budget} bytes. */
	private void show(DataBuffer chunk, long budget) {
		long left = budget;
		try (DataBuffer.ByteBufferIterator buffers = chunk.readableByteBuffers()) {
			while (left > 0 && buffers.hasNext()) {
				ByteBuffer buffer = buffers.next();
				if (buffer.remaining() > left) {
					buffer = buffer.duplicate().limit(buffer.position() + (int) left);
				}
				left -= buffer.remaining();
				this.reader.accept(buffer);
			}
		}
	}

	@Override
	protected void hookOnComplete() {
		FluxSink<DataBuffer> sink;
		synchronized (this) {
			this.ended = true;
			sink = this.relay;
		}
		if (sink != null) {
			sink.complete();
		}
		this.read.tryEmitValue(this);
	}

	@Override
	protected void hookOnError(Throwable throwable) {
		FluxSink<DataBuffer> sink;
		synchronized (this) {
			this.ended = true;
			this.error = throwable;
			sink = this.relay;
		}
		if (sink != null) {
			sink.error(throwable);
		}
		this.read.tryEmitValue(this);
	}

}
