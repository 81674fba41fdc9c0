package io.github.ratelimit.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;
import org.reactivestreams.Publisher;

/**
 * The upstream of the protection benchmark (issue 41): a model backend that really overloads. A fixed number of
 * workers ({@code --workers}, default 16) each serve one request at a time for a fixed service time
 * ({@code --service-ms}, default 50 ms, spent sleeping: a model of work, not work), behind an unbounded FIFO queue.
 * Its capacity is therefore known (workers ÷ service time: 320 requests/s by default), and beyond it the queue, and
 * the latency, grow without bound.
 *
 * <p>A request carries its client's deadline ({@value #DEADLINE_HEADER}: epoch milliseconds) and a tag
 * ({@value #TAG_HEADER}, e.g. {@code adaptive/2x/critical}). Every request is served once it reaches a worker, even
 * if its client has gone (as a thread-pool server does): work finished after the deadline is counted as wasted.
 * {@code GET /stats} answers the counters: a first line {@code queued <n> busy <n>}, then one line per tag
 * {@code <tag> <done> <wasted> <service_ns>} (tab-separated); {@code GET /idle} answers once nothing is queued
 * or in service. With {@code --samples FILE} it writes its queue every
 * 100 ms ({@code epoch_ms queued busy done wasted}). Run by {@code src/benchmarks/protection-run}:
 * {@code BenchmarkMain model-upstream --port P [--workers 16] [--service-ms 50] [--samples FILE]}.
 */
final class ModelUpstream {

	/** The request header with the client's deadline, epoch milliseconds. */
	static final String DEADLINE_HEADER = "X-Client-Deadline";

	/** The request header with the request's tag ({@code run/phase/class}), by which the counters are kept. */
	static final String TAG_HEADER = "X-Bench-Tag";

	private static final String BODY = "{\"upstream\":\"model\"}";

	private final ThreadPoolExecutor workers;

	private final long serviceNanos;

	private final AtomicInteger busy = new AtomicInteger();

	private final AtomicLong doneTotal = new AtomicLong();

	private final AtomicLong wastedTotal = new AtomicLong();

	private final Map<String, LongAdder[]> counters = new ConcurrentHashMap<>();

	/** Requests taken and not yet served; guarded by this. */
	private int pending;

	/** Completed when {@link #pending} falls to 0; guarded by this. */
	private CompletableFuture<Void> idle = CompletableFuture.completedFuture(null);

	ModelUpstream(int workers, Duration serviceTime) {
		AtomicInteger number = new AtomicInteger();
		this.workers = new ThreadPoolExecutor(workers, workers, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				(task) -> {
					Thread thread = new Thread(task, "worker-" + number.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.serviceNanos = serviceTime.toNanos();
	}

	/** Serve a request: queue it for a worker; the answer is written when the worker is done. */
	Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		if (request.uri().startsWith("/stats")) {
			return response.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN).sendString(Mono.just(stats()));
		}
		if (request.uri().startsWith("/idle")) {
			return response.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
				.sendString(Mono.fromFuture(idle()).thenReturn("idle"));
		}
		String deadlineText = request.requestHeaders().get(DEADLINE_HEADER);
		long deadline = (deadlineText != null) ? Long.parseLong(deadlineText.strip()) : Long.MAX_VALUE;
		String tag = request.requestHeaders().get(TAG_HEADER, "untagged");
		CompletableFuture<String> answer = new CompletableFuture<>();
		taken();
		this.workers.execute(() -> {
			this.busy.incrementAndGet();
			long start = System.nanoTime();
			long end = start + this.serviceNanos;
			long now;
			while ((now = System.nanoTime()) < end) {
				LockSupport.parkNanos(end - now);
			}
			boolean wasted = System.currentTimeMillis() > deadline;
			LongAdder[] count = this.counters.computeIfAbsent(tag,
					(t) -> new LongAdder[] { new LongAdder(), new LongAdder(), new LongAdder() });
			count[0].increment();
			if (wasted) {
				count[1].increment();
				this.wastedTotal.incrementAndGet();
			}
			count[2].add(now - start);
			this.doneTotal.incrementAndGet();
			this.busy.decrementAndGet();
			served();
			answer.complete(BODY);
		});
		return response.status(HttpResponseStatus.OK)
			.header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
			.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(BODY.length()))
			.sendString(Mono.fromFuture(answer));
	}

	private synchronized void taken() {
		if (this.pending++ == 0) {
			this.idle = new CompletableFuture<>();
		}
	}

	private void served() {
		CompletableFuture<Void> nowIdle = null;
		synchronized (this) {
			if (--this.pending == 0) {
				nowIdle = this.idle;
			}
		}
		if (nowIdle != null) {
			nowIdle.complete(null);
		}
	}

	/** Completes once nothing is queued or in service (at once if nothing is). */
	private synchronized CompletableFuture<Void> idle() {
		return this.idle;
	}

	/** The counters as {@code GET /stats} answers them. */
	String stats() {
		StringBuilder text = new StringBuilder();
		text.append("queued\t").append(this.workers.getQueue().size()).append("\tbusy\t").append(this.busy.get())
			.append('\n');
		this.counters.forEach((tag, count) -> text.append(tag).append('\t').append(count[0].sum()).append('\t')
			.append(count[1].sum()).append('\t').append(count[2].sum()).append('\n'));
		return text.toString();
	}

	/** One line of the queue samples. */
	String sample() {
		return System.currentTimeMillis() + "\t" + this.workers.getQueue().size() + "\t" + this.busy.get() + "\t"
				+ this.doneTotal.get() + "\t" + this.wastedTotal.get();
	}

	/**
	 * Serve until the JVM is stopped: {@code --port N} (required), {@code --host H} (default {@code 127.0.0.1}),
	 * {@code --workers W} (16), {@code --service-ms S} (50), {@code --samples FILE} (none).
	 * @param options the command line options
	 * @throws Exception if the server cannot start or the samples cannot be written
	 */
	static void serve(Map<String, String> options) throws Exception {
		String host = options.getOrDefault("host", "127.0.0.1");
		int port = Integer.parseInt(options.get("port"));
		int workers = Integer.parseInt(options.getOrDefault("workers", "16"));
		long serviceMs = Long.parseLong(options.getOrDefault("service-ms", "50"));
		ModelUpstream upstream = new ModelUpstream(workers, Duration.ofMillis(serviceMs));
		LoopResources loops = LoopResources.create("model-upstream", 1, 2, true);
		DisposableServer server = HttpServer.create()
			.host(host)
			.port(port)
			.runOn(loops)
			.handle(upstream::handle)
			.bindNow(Duration.ofSeconds(10));
		ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "upstream-sampler");
			thread.setDaemon(true);
			return thread;
		});
		BufferedWriter samples = null;
		if (options.containsKey("samples")) {
			samples = Files.newBufferedWriter(Path.of(options.get("samples")), StandardCharsets.UTF_8);
			samples.write("epoch_ms\tqueued\tbusy\tdone\twasted\n");
			BufferedWriter out = samples;
			sampler.scheduleAtFixedRate(() -> {
				try {
					out.write(upstream.sample());
					out.write('\n');
					out.flush();
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			}, 0, 100, TimeUnit.MILLISECONDS);
		}
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			sampler.shutdownNow();
			server.disposeNow(Duration.ofSeconds(5));
			loops.disposeLater().block(Duration.ofSeconds(5));
			stopped.countDown();
		}, "model-upstream-shutdown"));
		System.err.printf("model upstream on http://%s:%d: %d workers x %d ms (capacity %.0f requests/s), unbounded queue%n",
				host, server.port(), workers, serviceMs, workers * 1000.0 / serviceMs);
		stopped.await();
		if (samples != null) {
			samples.close();
		}
	}

}
