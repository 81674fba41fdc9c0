package io.github.ratelimit.gateway.route;

import java.util.BitSet;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.gateway.client.ClientRequest;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.usage.UsageField;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.jspecify.annotations.Nullable;

/**
 * How a route's answers decide what a request is charged: what the answer used ({@code usage}, charged in the
 * limits counting usage), what a request reserves before it is forwarded ({@code reserve}, at most
 * {@code reserve-max}), and which answers count at all ({@code count-when}). A request reserves its estimate (and its
 * cost) in the same script call as every other limit; once its answer is over it is settled: unused units go back,
 * excess is charged.
 *
 * <pre>
 * args: { group: chat, usage: "json:usage.total_tokens", reserve: "json:max_tokens", reserve-max: 4000 }
 * args: { group: downloads, usage: bytes, reserve: 1000000 }
 * args: { group: login, key-by: ip, count-when: "401,403" }
 * </pre>
 *
 * @param usage how the answer's usage is read; {@code null} when the route has no limit counting usage
 * @param reserve what a request reserves in the limits counting usage before it is forwarded; {@code null} without
 * {@code usage}
 * @param reserveMax most units one request reserves (a reservation read from the request is capped at it, and a
 * request that does not carry one reserves it); 0 without {@code usage}
 * @param usageMax most units one answer is charged: {@link UsageReading#MAX_VALUE} (2^53, the script's arithmetic
 * ceiling; a bucket owes all the rest of an answer's usage, however far beyond its capacity); 0 without
 * {@code usage}
 * @param countWhen the answer statuses that count (the others give back everything the request took);
 * {@code null} when every answer counts
 */
public record RouteUsage(@Nullable Measure usage, @Nullable Reserve reserve, long reserveMax, long usageMax,
		@Nullable BitSet countWhen) {

	/** A route whose answers do not change what it is charged. */
	public static final RouteUsage NONE = new RouteUsage(null, null, 0, 0, null);

	/**
	 * Whether the route's requests are settled once their answers are over.
	 * @return whether the route measures usage or counts only some answers
	 */
	public boolean settles() {
		return this.usage != null || this.countWhen != null;
	}

	/**
	 * Whether an answer with this status counts.
	 * @param status the answer's HTTP status code
	 * @return {@code true} when {@code count-when} is not set or holds the status
	 */
	public boolean counts(int status) {
		return this.countWhen == null || (status >= 0 && this.countWhen.get(status));
	}

	/**
	 * The units a request reserves in the limits counting usage: the fixed {@code reserve}, or the value the request
	 * carries (its header, or its JSON body's field as the front end read it), capped at {@code reserve-max}; a
	 * request that carries none, or one that is not a whole number of at least 0, reserves {@code reserve-max}.
	 * @param request the request
	 * @param body the JSON body's value at the {@code reserve} path, or {@code null} when not read
	 * @return units, 0 to {@code reserve-max}; 0 on a route without {@code usage}
	 */
	public long reservation(ClientRequest request, @Nullable UsageReading body) {
		Reserve reserved = this.reserve;
		if (this.usage == null || reserved == null) {
			return 0;
		}
		UsageReading read;
		if (reserved instanceof Reserve.Fixed fixed) {
			return Math.min(fixed.units(), this.reserveMax);
		}
		else if (reserved instanceof Reserve.Header header) {
			List<String> values = request.headerValues(header.name());
			read = (values.size() == 1) ? UsageReading.ofText(values.get(0).strip()) : UsageReading.missing();
		}
		else {
			read = (body != null) ? body : UsageReading.missing();
		}
		return (read.kind() == UsageReading.Kind.FOUND) ? Math.min(read.value(), this.reserveMax) : this.reserveMax;
	}

	/** Where an answer's usage is read. */
	public sealed interface Measure {

		/**
		 * A response header the upstream sets, e.g. {@code header:X-Usage-Tokens}.
		 * @param name the header field's name
		 */
		record Header(String name) implements Measure {

			@Override
			public String toString() {
				return "header:" + this.name;
			}

		}

		/**
		 * A number in the JSON body ({@code json:usage.total_tokens}), or in the last event of a
		 * {@code text/event-stream} answer that carries it.
		 * @param field the path of object keys
		 */
		record Json(UsageField field) implements Measure {

			@Override
			public String toString() {
				return "json:" + this.field;
			}

		}

		/** The bytes of the answer's body, as sent to the client. */
		record Bytes() implements Measure {

			@Override
			public String toString() {
				return "bytes";
			}

		}

	}

	/** What a request reserves before it is forwarded. */
	public sealed interface Reserve {

		/**
		 * A fixed number of units, e.g. {@code reserve: 500}.
		 * @param units units, 1 or more
		 */
		record Fixed(long units) implements Reserve {

			@Override
			public String toString() {
				return Long.toString(this.units);
			}

		}

		/**
		 * A request header's value, e.g. {@code header:X-Max-Tokens}.
		 * @param name the header field's name
		 */
		record Header(String name) implements Reserve {

			@Override
			public String toString() {
				return "header:" + this.name;
			}

		}

		/**
		 * A number in the request's JSON body, e.g. {@code json:max_tokens}.
		 * @param field the path of object keys
		 */
		record Json(UsageField field) implements Reserve {

			@Override
			public String toString() {
				return "json:" + this.field;
			}

		}

	}

	/**
	 * Parse the usage arguments of a route.
	 * @param usage the {@code usage} argument, or {@code null}
	 * @param reserve the {@code reserve} argument, or {@code null}
	 * @param reserveMax the {@code reserve-max} argument, or {@code null}
	 * @param countWhen the {@code count-when} argument, or {@code null}
	 * @param property the filter's property, the arguments named after it ({@code <property>.args.<name>})
	 * @param v where problems are added
	 * @return the route's usage, its {@code reserveMax} 0 when not given (the caller resolves it); {@code null}
	 * when an argument is invalid (problems were added)
	 */
	static @Nullable RouteUsage parse(@Nullable String usage, @Nullable String reserve, @Nullable Long reserveMax,
			@Nullable String countWhen, String property, List<ConfigurationViolation> v) {
		int before = v.size();
		Measure measure = (usage != null) ? parseUsage(usage, property + ".args.usage", v) : null;
		Reserve reserved = (reserve != null) ? parseReserve(reserve, property + ".args.reserve", v) : null;
		BitSet statuses = (countWhen != null) ? parseCountWhen(countWhen, property + ".args.count-when", v) : null;
		if (usage == null && (reserve != null || reserveMax != null)) {
			v.add(new ConfigurationViolation(property + ".args." + ((reserve != null) ? "reserve" : "reserve-max"),
					"applies only with usage, which the route does not set.",
					"set usage (where an answer's usage is read), or remove it."));
		}
		if (reserveMax != null && reserveMax < 1) {
			v.add(new ConfigurationViolation(property + ".args.reserve-max",
					"must be a whole number of units of at least 1, was " + reserveMax + ".",
					"remove it (default: the smallest capacity of the group's limits counting usage) or set 1 or more."));
		}
		if (reserved instanceof Reserve.Fixed fixed && reserveMax != null && fixed.units() > reserveMax) {
			v.add(new ConfigurationViolation(property + ".args.reserve",
					"is " + fixed.units() + " units, more than reserve-max " + reserveMax + ".",
					"lower reserve or raise reserve-max."));
		}
		if (v.size() > before) {
			return null;
		}
		if (measure == null && statuses == null) {
			return NONE;
		}
		return new RouteUsage(measure, (measure != null && reserved == null) ? null : reserved,
				(reserveMax != null) ? reserveMax : 0, 0, statuses);
	}

	/**
	 * This usage with its ceilings resolved: {@code reserve-max} the one given, else the smallest capacity of the
	 * limits counting usage that can apply (a route without {@code reserve} reserves it); {@code usageMax}
	 * {@link UsageReading#MAX_VALUE}.
	 * @param smallestUsageCapacity the smallest capacity of the group's limits counting usage
	 * @return the resolved usage
	 */
	RouteUsage resolved(long smallestUsageCapacity) {
		if (this.usage == null) {
			return this;
		}
		long max = (this.reserveMax > 0) ? this.reserveMax : smallestUsageCapacity;
		return new RouteUsage(this.usage, (this.reserve != null) ? this.reserve : new Reserve.Fixed(max), max,
				UsageReading.MAX_VALUE, this.countWhen);
	}

	/**
	 * Parse a {@code usage} argument.
	 * @param value the argument, e.g. {@code json:usage.total_tokens}, {@code header:X-Usage}, {@code bytes}
	 * @param property the argument's property, to name in a problem
	 * @param v where a problem is added
	 * @return the measure, or {@code null} when the value is not one (a problem was added)
	 */
	static @Nullable Measure parseUsage(String value, String property, List<ConfigurationViolation> v) {
		String spec = value.strip();
		if (spec.equalsIgnoreCase("bytes")) {
			return new Measure.Bytes();
		}
		String fix = "use json:<field path> (e.g. json:usage.total_tokens, also read from the last event of a "
				+ "text/event-stream answer), header:<response header> or bytes.";
		if (startsWith(spec, "header:")) {
			String name = spec.substring(7).strip();
			if (RouteArgumentRules.isToken(name)) {
				return new Measure.Header(name);
			}
		}
		else if (startsWith(spec, "json:")) {
			UsageField field = parseField(spec.substring(5), property, v, fix);
			return (field != null) ? new Measure.Json(field) : null;
		}
		v.add(new ConfigurationViolation(property, "must say where an answer's usage is read, was '" + value + "'.", fix));
		return null;
	}

	/**
	 * Parse a {@code reserve} argument.
	 * @param value the argument, e.g. {@code 500}, {@code header:X-Max-Tokens}, {@code json:max_tokens}
	 * @param property the argument's property, to name in a problem
	 * @param v where a problem is added
	 * @return the reserve, or {@code null} when the value is not one (a problem was added)
	 */
	static @Nullable Reserve parseReserve(String value, String property, List<ConfigurationViolation> v) {
		String spec = value.strip();
		String fix = "use a number of units (e.g. 500), header:<request header> or json:<field path of the request "
				+ "body> (e.g. json:max_tokens).";
		if (startsWith(spec, "header:")) {
			String name = spec.substring(7).strip();
			if (RouteArgumentRules.isToken(name)) {
				return new Reserve.Header(name);
			}
		}
		else if (startsWith(spec, "json:")) {
			UsageField field = parseField(spec.substring(5), property, v, fix);
			return (field != null) ? new Reserve.Json(field) : null;
		}
		else {
			Long units = RouteArgumentRules.parseLong(spec);
			if (units != null && units >= 1) {
				return new Reserve.Fixed(units);
			}
		}
		v.add(new ConfigurationViolation(property, "must say what a request reserves, was '" + value + "'.", fix));
		return null;
	}

	/**
	 * Parse a {@code count-when} argument: status codes and classes, separated by commas.
	 * @param value the argument, e.g. {@code 401,403} or {@code 4xx}
	 * @param property the argument's property, to name in a problem
	 * @param v where a problem is added
	 * @return the statuses that count, or {@code null} when the value is not a list of them (a problem was added)
	 */
	static @Nullable BitSet parseCountWhen(String value, String property, List<ConfigurationViolation> v) {
		BitSet statuses = new BitSet(600);
		for (String part : value.split(",")) {
			String status = part.strip().toLowerCase(Locale.ROOT);
			if (status.length() == 3 && status.endsWith("xx") && status.charAt(0) >= '1' && status.charAt(0) <= '5') {
				int from = (status.charAt(0) - '0') * 100;
				statuses.set(from, from + 100);
				continue;
			}
			Long code = RouteArgumentRules.parseLong(status);
			if (code == null || code < 100 || code > 599) {
				v.add(new ConfigurationViolation(property,
						"must list HTTP status codes (100 to 599) or classes (4xx), was '" + value + "'.",
						"use e.g. count-when: \"401,403\" to count failed logins only."));
				return null;
			}
			statuses.set(code.intValue());
		}
		return statuses;
	}

	private static @Nullable UsageField parseField(String path, String property, List<ConfigurationViolation> v,
			String fix) {
		try {
			return UsageField.parse(path.strip());
		}
		catch (IllegalArgumentException ex) {
			v.add(new ConfigurationViolation(property, "names no JSON field: " + ex.getMessage(), fix));
			return null;
		}
	}

	private static boolean startsWith(String value, String prefix) {
		return value.regionMatches(true, 0, prefix, 0, prefix.length());
	}

}
