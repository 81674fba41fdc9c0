package io.github.ratelimit.gateway.route;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import io.github.ratelimit.gateway.chain.Reservation;
import io.github.ratelimit.gateway.usage.EventStreamReader;
import io.github.ratelimit.gateway.usage.InflatingFeed;
import io.github.ratelimit.gateway.usage.JsonFieldReader;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * What one admitted request's answer used, read as the answer passes, and the settlement of its
 * {@link Reservation} once the answer is over. A front end drives it: {@link #answer} when the upstream's response
 * head is known (status and header fields), {@link #body} with each chunk of the body as it is written to the
 * client, and {@link #end} once the exchange is over, however it ended (body complete, stream ended, client gone,
 * upstream error). Its methods may be called from any thread (each holds the meter's monitor: a client that goes away
 * may end it while a chunk is read).
 *
 * <p>The settlement ({@link #end}), by the route's {@link RouteUsage}:
 * <ul>
 * <li>an answer whose status {@code count-when} does not hold gives back everything the request took
 * ({@link Reservation#cancel()});</li>
 * <li>otherwise the request is charged the usage its answer reports ({@code usage}), however far beyond what its
 * limits hold (a value above {@link UsageReading#MAX_VALUE} is charged that, and reported as a problem);
 * an answer that reports none usable (no answer at all, the header or field missing, not a number, negative, a body
 * that is not JSON, a stream cut before the event that carries it) is charged its reservation, the estimate it was
 * admitted on;</li>
 * <li>{@code usage: bytes} charges the body's bytes written to the client, whatever the status (a stream cut short
 * is charged what was sent).</li>
 * </ul>
 * Once the store has answered, the reports get what was reported and what the store charged
 * ({@link UsageReports#settled}).
 * At most {@link JsonFieldReader#MAX_BUFFERED_BYTES} ({@link EventStreamReader#MAX_BUFFERED_BYTES} for a stream)
 * bytes of the answer are held for reading its usage, whatever its size.
 *
 * <p>A {@code json:} field is read from the body as the client is sent it, decoded first when its
 * {@code Content-Encoding} is {@code gzip} or {@code deflate} ({@link InflatingFeed}: at most
 * {@value InflatingFeed#MAX_DECODED_BYTES} decoded bytes, and one inflater's state besides the bytes above); a body
 * in any other coding (or several) is not read, nor one that does not decode: charged its reservation, reported as
 * {@link UsageReading.Kind#ENCODED}. The body the client is sent is never changed.
 */
public final class UsageMeter {

	/** The meter of a request whose answer does not change what it is charged: reads nothing, ends nothing. */
	public static final UsageMeter NONE = new UsageMeter(RouteUsage.NONE, Reservation.NONE, UsageReports.IGNORED);

	private final RouteUsage usage;

	private final Reservation reservation;

	private final UsageReports reports;

	private final AtomicBoolean ended = new AtomicBoolean();

	private int status = -1;

	private @Nullable HttpHeaders headers;

	private @Nullable JsonFieldReader json;

	private @Nullable EventStreamReader events;

	/** Decodes a compressed body for the reader; {@code null} for a body read as it is. */
	private @Nullable InflatingFeed inflating;

	/** Whether the body is in a content coding not read, or did not decode. */
	private boolean encoded;

	private long bytes;

	/**
	 * Meter one request's answer.
	 * @param usage the route's usage settings
	 * @param reservation what the request reserved, ended once by {@link #end}
	 * @param reports where settlements and answers whose usage cannot be read are reported
	 */
	public UsageMeter(RouteUsage usage, Reservation reservation, UsageReports reports) {
		this.usage = usage;
		this.reservation = reservation;
		this.reports = reports;
	}

	/**
	 * Whether this meter reads the answer: a front end that sees {@code false} need not call anything.
	 * @return {@code false} only for {@link #NONE} and meters of routes that do not settle
	 */
	public boolean isActive() {
		return this.usage.settles() && this.reservation != Reservation.NONE;
	}

	/**
	 * The upstream's response head is known.
	 * @param status its status code
	 * @param headers its header fields (read when the exchange ends)
	 * @param contentType its {@code Content-Type}, or {@code null}: a {@code text/event-stream} answer is read event
	 * by event
	 */
	public synchronized void answer(int status, HttpHeaders headers, @Nullable String contentType) {
		this.status = status;
		this.headers = headers;
		if (this.usage.usage() instanceof RouteUsage.Measure.Json field) {
			if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("text/event-stream")) {
				this.events = new EventStreamReader(field.field());
				this.json = null;
			}
			else {
				this.json = new JsonFieldReader(field.field());
				this.events = null;
			}
			decodeFor(headers.get(HttpHeaders.CONTENT_ENCODING));
		}
	}

	/** Read a body in this content coding: as it is, decoded, or not at all. */
	private void decodeFor(@Nullable List<String> codings) {
		List<String> applied = (codings != null) ? codings.stream()
			.flatMap((value) -> Stream.of(value.split(",")))
			.map(String::strip)
			.filter((coding) -> !coding.isEmpty() && !coding.equalsIgnoreCase("identity"))
			.toList() : List.of();
		if (applied.isEmpty()) {
			return;
		}
		this.inflating = (applied.size() == 1) ? InflatingFeed.of(applied.get(0), this::read) : null;
		this.encoded = (this.inflating == null);
	}

	/** Plain bytes of the body to its reader. */
	private void read(ByteBuffer plain) {
		if (this.json != null) {
			this.json.feed(plain);
		}
		else if (this.events != null) {
			this.events.feed(plain);
		}
	}

	/**
	 * A chunk of the answer's body, as written to the client; read, never changed (its position is left alone).
	 * @param chunk the bytes
	 */
	public synchronized void body(ByteBuffer chunk) {
		if (this.ended.get()) {
			return;
		}
		this.bytes += chunk.remaining();
		if (this.encoded) {
			return;
		}
		if (this.inflating != null) {
			this.inflating.feed(chunk);
			this.encoded = this.inflating.failed();
		}
		else {
			read(chunk);
		}
	}

	/**
	 * Whether the rest of the answer's body cannot change what the request is charged, so that a front end whose
	 * client has gone may stop reading the upstream's answer: the meter has ended, or the response head is known and
	 * its status does not count, or the route's usage is not read from the body ({@code count-when} only, a header;
	 * {@code usage: bytes} counts what is sent to the client, and nothing more is), or the body is not read (a coding
	 * not decoded), or the head says no body follows (1xx, 204, 304, {@code Content-Length: 0}), or its reader has
	 * found the usage or knows the body is not JSON. Before the response head:
	 * {@code false}.
	 * @return whether reading on is of no use to the settlement
	 */
	public synchronized boolean decided() {
		if (this.ended.get() || !isActive()) {
			return true;
		}
		if (this.status < 0) {
			return false;
		}
		if (!this.usage.counts(this.status) || !(this.usage.usage() instanceof RouteUsage.Measure.Json)
				|| this.encoded || withoutBody()) {
			return true;
		}
		UsageReading reading = (this.json != null) ? this.json.reading()
				: (this.events != null) ? this.events.reading() : null;
		return reading == null || reading.kind() == UsageReading.Kind.FOUND
				|| reading.kind() == UsageReading.Kind.NOT_JSON;
	}

	/**
	 * Whether the response head says no body follows (RFC 9110, section 6.4.1): a status 1xx, 204 or 304, or a
	 * {@code Content-Length} of 0.
	 */
	private boolean withoutBody() {
		HttpHeaders head = this.headers;
		return this.status < 200 || this.status == 204 || this.status == 304
				|| (head != null && "0".equals(head.getFirst(HttpHeaders.CONTENT_LENGTH)));
	}

	/**
	 * The exchange is over: settle the reservation (once; later calls do nothing).
	 * @param complete whether the answer's body was written in full (not cut short by the client, an error or a
	 * timeout)
	 */
	public synchronized void end(boolean complete) {
		if (!isActive() || !this.ended.compareAndSet(false, true)) {
			return;
		}
		if (this.inflating != null) {
			this.inflating.end();
		}
		RouteUsage.Measure measure = this.usage.usage();
		if (this.status >= 0 && !this.usage.counts(this.status)) {
			report(this.reservation.cancel(), 0);
			return;
		}
		if (measure == null) {
			this.reservation.settle(0); // a route that counts some answers only: this one counts as taken
			return;
		}
		long used = used(measure, complete);
		report(this.reservation.settle(used), used);
	}

	/** Reports a settlement once the store has answered what it charged (a route with {@code usage} only). */
	private void report(CompletionStage<Long> charged, long reported) {
		if (this.usage.usage() == null) {
			return;
		}
		long reserved = this.reservation.reserved();
		charged.thenAccept((units) -> this.reports.settled(reserved, reported, units));
	}

	/** The request was never forwarded: give back everything it took (once; a later {@link #end} does nothing). */
	void abandon() {
		if (this.usage.settles() && this.ended.compareAndSet(false, true)) {
			report(this.reservation.cancel(), 0);
		}
	}

	/** The units to charge: what the answer reports (at most {@link RouteUsage#usageMax}); its reservation when it reports none. */
	private long used(RouteUsage.Measure measure, boolean complete) {
		if (measure instanceof RouteUsage.Measure.Bytes) {
			return charge(UsageReading.found(this.bytes));
		}
		if (this.status < 0) {
			return this.reservation.reserved(); // no answer: nothing reported
		}
		if (measure instanceof RouteUsage.Measure.Header header) {
			return charge(headerReading(header.name()));
		}
		if (this.encoded) {
			return complete ? charge(UsageReading.encoded()) : this.reservation.reserved();
		}
		UsageReading reading;
		if (this.json != null) {
			if (complete) {
				this.json.end();
			}
			reading = this.json.reading();
		}
		else if (this.events != null) {
			if (complete) {
				this.events.end();
			}
			reading = this.events.reading();
		}
		else {
			return this.reservation.reserved();
		}
		if (!complete && reading.kind() != UsageReading.Kind.FOUND) {
			return this.reservation.reserved(); // cut short before its usage: not the answer's fault
		}
		return charge(reading);
	}

	/** The header's one value as a number; several values are not one number. */
	private UsageReading headerReading(String name) {
		List<String> values = (this.headers != null) ? this.headers.get(name) : null;
		if (values == null || values.isEmpty()) {
			return UsageReading.missing();
		}
		return (values.size() == 1) ? UsageReading.ofText(values.get(0).strip()) : UsageReading.notANumber();
	}

	private long charge(UsageReading reading) {
		if (reading.kind() == UsageReading.Kind.FOUND && reading.value() <= this.usage.usageMax()) {
			return reading.value();
		}
		if (reading.kind() == UsageReading.Kind.FOUND || reading.kind() == UsageReading.Kind.TOO_LARGE) {
			this.reports.problem(UsageReading.Kind.TOO_LARGE); // however large: the arithmetic's ceiling
			return this.usage.usageMax();
		}
		this.reports.problem(reading.kind());
		return this.reservation.reserved();
	}

	/** Where a route's meters report settlements, and answers whose usage cannot be read. */
	public interface UsageReports {

		/** Reports nothing. */
		UsageReports IGNORED = new UsageReports() {

			@Override
			public void settled(long reserved, long reported, long charged) {
			}

			@Override
			public void problem(UsageReading.Kind kind) {
			}

		};

		/**
		 * A request of a route with {@code usage} was admitted: its reservation is out until it is settled.
		 * @param reserved units it reserved
		 */
		default void admitted(long reserved) {
		}

		/**
		 * A request of a route with {@code usage} was settled (or given everything back), and the store answered.
		 * @param reserved units it reserved
		 * @param reported units it was settled with: what its answer reported (at most {@link UsageReading#MAX_VALUE}),
		 * its reservation when the answer reported none usable, 0 when its answer did not count
		 * @param charged units its limits counting usage were charged in the end, as the store counts them
		 * ({@link Reservation#settle}): below {@code reported} only where the store could not take all of it (that
		 * part is forgiven)
		 */
		void settled(long reserved, long reported, long charged);

		/**
		 * An answer's usage could not be read (it was charged its reservation), or was above
		 * {@link UsageReading#MAX_VALUE} (charged that).
		 * @param kind what was wrong ({@link UsageReading.Kind#TOO_LARGE} for a value above it)
		 */
		void problem(UsageReading.Kind kind);

	}

	@Override
	public String toString() {
		return "UsageMeter[" + this.usage + ", reserved " + this.reservation.reserved() + "]";
	}

}
