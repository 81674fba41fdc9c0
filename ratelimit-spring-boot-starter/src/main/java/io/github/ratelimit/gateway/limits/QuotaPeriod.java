package io.github.ratelimit.gateway.limits;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The period a quota counts in, after which it resets: either a calendar {@link QuotaPeriodUnit unit} (day, week,
 * month, year) in a time zone, or a fixed duration.
 *
 * <p>A calendar period starts at the start of its first local day in {@link #zone()}, as
 * {@link LocalDate#atStartOfDay(ZoneId)} gives it: local midnight, or the first valid instant of a day whose midnight
 * falls in a daylight-saving gap (e.g. America/Sao_Paulo on 2018-11-04: 01:00). The first day is the local date itself
 * ({@link QuotaPeriodUnit#DAY DAY}), the {@link #firstDayOfWeek()} on or before it ({@link QuotaPeriodUnit#WEEK WEEK}),
 * the 1st of its month ({@link QuotaPeriodUnit#MONTH MONTH}) or 1 January of its year
 * ({@link QuotaPeriodUnit#YEAR YEAR}). A period ends where the next one starts, so a day lasts 23 or 25 hours across
 * a daylight-saving change, and a week, month or year containing one is an hour shorter or longer. The periods never
 * overlap: where a zone's local date went back (America/St_Johns ended daylight saving at 00:01 until 2011, so that
 * 23:01 to 23:59 of a Saturday came again after Sunday had started), an instant belongs to the latest period that
 * started at or before it.
 *
 * <p>A fixed period of {@code d} starts at a multiple of {@code d} since the Unix epoch, as a fixed window does:
 * {@code floor(epochMillis / d) * d}, in milliseconds.
 *
 * <p>Every period is half-open, {@code [start, end)}: an instant exactly at a boundary belongs to the period starting
 * there. Every boundary is a whole number of milliseconds since the epoch (a whole number of seconds for a calendar
 * period, as zone offsets are whole seconds).
 *
 * @param unit the calendar unit, or {@code null} for a fixed period
 * @param zone the time zone of a calendar period: a region such as {@code Europe/Berlin} or a fixed offset such as
 * {@code +03:28}; {@link ZoneOffset#UTC} for a fixed period, whatever was given
 * @param firstDayOfWeek the day a {@link QuotaPeriodUnit#WEEK WEEK} starts on; {@link DayOfWeek#MONDAY} for any other
 * period, whatever was given
 * @param fixedDuration the length of a fixed period, a whole number of milliseconds from {@link #MIN_FIXED_DURATION}
 * to {@link #MAX_FIXED_DURATION}, or {@code null} for a calendar period
 */
public record QuotaPeriod(@Nullable QuotaPeriodUnit unit, ZoneId zone, DayOfWeek firstDayOfWeek,
		@Nullable Duration fixedDuration) {

	/** The first day of the week unless one is given. */
	public static final DayOfWeek DEFAULT_FIRST_DAY_OF_WEEK = DayOfWeek.MONDAY;

	/** The shortest fixed period: 1 second. */
	public static final Duration MIN_FIXED_DURATION = Duration.ofSeconds(1);

	/** The longest fixed period: 36,500 days (100 years). */
	public static final Duration MAX_FIXED_DURATION = Duration.ofDays(36_500);

	/** The fewest boundaries {@link #boundariesAround(Instant, int)} returns. */
	public static final int MIN_BOUNDARIES = 3;

	/**
	 * Validate the period and set the components it does not use to their fixed values.
	 * @throws IllegalArgumentException if neither or both of {@code unit} and {@code fixedDuration} are given, or the
	 * fixed duration is shorter than 1 s, longer than 36,500 days or not a whole number of milliseconds
	 * @throws NullPointerException if {@code zone} or {@code firstDayOfWeek} is {@code null}
	 */
	public QuotaPeriod {
		Objects.requireNonNull(zone, "zone");
		Objects.requireNonNull(firstDayOfWeek, "firstDayOfWeek");
		if ((unit == null) == (fixedDuration == null)) {
			throw new IllegalArgumentException("a quota period is either a calendar unit (day, week, month, year) or a "
					+ "fixed duration, was unit " + unit + " and duration " + fixedDuration);
		}
		if (fixedDuration != null) {
			if (fixedDuration.compareTo(MIN_FIXED_DURATION) < 0 || fixedDuration.compareTo(MAX_FIXED_DURATION) > 0) {
				throw new IllegalArgumentException("a fixed quota period is from 1 s to 36500 days (100 years), was "
						+ fixedDuration);
			}
			if (fixedDuration.getNano() % 1_000_000 != 0) {
				throw new IllegalArgumentException("a fixed quota period is a whole number of milliseconds, was "
						+ fixedDuration);
			}
			zone = ZoneOffset.UTC;
		}
		if (unit != QuotaPeriodUnit.WEEK) {
			firstDayOfWeek = DEFAULT_FIRST_DAY_OF_WEEK;
		}
	}

	/**
	 * A calendar period; a week starts on {@link #DEFAULT_FIRST_DAY_OF_WEEK Monday}.
	 * @param unit the calendar unit
	 * @param zone the time zone the period's days are counted in
	 * @return the period
	 */
	public static QuotaPeriod of(QuotaPeriodUnit unit, ZoneId zone) {
		return new QuotaPeriod(unit, zone, DEFAULT_FIRST_DAY_OF_WEEK, null);
	}

	/**
	 * A calendar period.
	 * @param unit the calendar unit
	 * @param zone the time zone the period's days are counted in
	 * @param firstDayOfWeek the day a {@link QuotaPeriodUnit#WEEK WEEK} starts on (not used by other units)
	 * @return the period
	 */
	public static QuotaPeriod of(QuotaPeriodUnit unit, ZoneId zone, DayOfWeek firstDayOfWeek) {
		return new QuotaPeriod(unit, zone, firstDayOfWeek, null);
	}

	/**
	 * A fixed period, aligned to multiples of its duration since the Unix epoch.
	 * @param duration the length, a whole number of milliseconds from 1 s to 36,500 days
	 * @return the period
	 * @throws IllegalArgumentException if the duration is out of range or not whole milliseconds
	 */
	public static QuotaPeriod fixed(Duration duration) {
		return new QuotaPeriod(null, ZoneOffset.UTC, DEFAULT_FIRST_DAY_OF_WEEK, duration);
	}

	/**
	 * Whether this is a fixed period rather than a calendar one.
	 * @return {@code true} when {@link #fixedDuration()} is set
	 */
	public boolean isFixed() {
		return this.fixedDuration != null;
	}

	/**
	 * The period containing an instant.
	 * @param instant any instant
	 * @return the half-open period {@code [start, end)} with {@code start <= instant < end}
	 * @throws DateTimeException if the period reaches beyond the range of {@link LocalDate} (a calendar period) or of
	 * a {@code long} of milliseconds since the epoch (a fixed period)
	 */
	public Interval periodAt(Instant instant) {
		Duration duration = this.fixedDuration;
		if (duration != null) {
			return fixedPeriodAt(instant, duration.toMillis());
		}
		LocalDate first = firstDate(LocalDate.ofInstant(instant, this.zone));
		Instant start = startOf(first);
		while (start.isAfter(instant)) {
			first = step(first, -1);
			start = startOf(first);
		}
		Instant end = startOf(step(first, 1));
		while (!end.isAfter(instant)) {
			first = step(first, 1);
			start = end;
			end = startOf(step(first, 1));
		}
		return new Interval(start, end);
	}

	/**
	 * The boundaries of the periods around an instant, for a Redis script to pick the period containing Redis' own
	 * time: {@code b0 < b1 < ... < b(count-1)}, where {@code b0} is the start of the period before the one containing
	 * {@code instant}, {@code b1} the start of the period containing it, {@code b2} its end (the next period's start),
	 * and each further boundary the end of the period after. Consecutive boundaries are the start and end of one
	 * period as {@link #periodAt(Instant)} gives it.
	 * <p>Contract: the script takes the {@code i} with {@code b(i) <= now < b(i+1)} for Redis' {@code now}, which is
	 * exactly {@code periodAt(now)}; it finds none, and must not count, when {@code now < b0} or
	 * {@code now >= b(count-1)}. So with {@code instant} from the gateway's clock, the right period is picked whenever
	 * Redis' clock is behind the gateway's by at most the length of the previous period, or ahead of it by less than
	 * the time from {@code instant} to {@code b(count-1)}: with {@code count} 4, a gateway clock off by less than the
	 * shortest of the previous, current and next periods in either direction. With {@code count} 3 a Redis clock ahead
	 * is covered only until the current period's end.
	 * @param instant the instant the gateway takes as now
	 * @param count how many boundaries, at least {@value #MIN_BOUNDARIES}
	 * @return {@code count} strictly increasing boundaries, an unmodifiable list
	 * @throws IllegalArgumentException if {@code count} is below {@value #MIN_BOUNDARIES}
	 * @throws DateTimeException as {@link #periodAt(Instant)}, for any of the periods
	 */
	public List<Instant> boundariesAround(Instant instant, int count) {
		if (count < MIN_BOUNDARIES) {
			throw new IllegalArgumentException(
					"boundaries around an instant are at least " + MIN_BOUNDARIES + ", was " + count);
		}
		Interval current = periodAt(instant);
		List<Instant> boundaries = new ArrayList<>(count);
		boundaries.add(periodAt(current.start().minusNanos(1)).start());
		boundaries.add(current.start());
		Instant end = current.end();
		boundaries.add(end);
		while (boundaries.size() < count) {
			end = periodAt(end).end();
			boundaries.add(end);
		}
		return Collections.unmodifiableList(boundaries);
	}

	/**
	 * The longest any period can last: the fixed duration, or the calendar unit's longest length plus 3 hours for the
	 * largest daylight-saving and zone-offset changes (a day: 27 h; a week: 7 days 3 h; a month: 31 days 3 h; a year:
	 * 366 days 3 h). An upper bound for TTLs and for what a fallback counts, not the length of any one period.
	 * @return the longest length, at least {@link #MIN_FIXED_DURATION}
	 */
	public Duration longest() {
		Duration duration = this.fixedDuration;
		if (duration != null) {
			return duration;
		}
		Duration days = switch (Objects.requireNonNull(this.unit)) {
			case DAY -> Duration.ofDays(1);
			case WEEK -> Duration.ofDays(7);
			case MONTH -> Duration.ofDays(31);
			case YEAR -> Duration.ofDays(366);
		};
		return days.plusHours(3);
	}

	/**
	 * The name of this period in configuration and in default policy names: {@code day}, {@code week},
	 * {@code month}, {@code year}, or a fixed duration's {@linkplain LimitDefinition#periodLabel label} ({@code 30s},
	 * {@code 12h}, {@code 1500ms}).
	 * @return the label
	 */
	public String label() {
		Duration duration = this.fixedDuration;
		if (duration == null) {
			return Objects.requireNonNull(this.unit).name().toLowerCase(java.util.Locale.ROOT);
		}
		return LimitDefinition.periodLabel(duration);
	}

	/**
	 * The length of the period containing an instant in whole seconds, as {@code RateLimit-Policy}'s {@code w} takes
	 * it.
	 * @param instant any instant
	 * @return the length in seconds, rounded up (a calendar period is always whole seconds), at least 1
	 * @throws DateTimeException as {@link #periodAt(Instant)}
	 */
	public long seconds(Instant instant) {
		Duration length = periodAt(instant).length();
		return length.getSeconds() + ((length.getNano() > 0) ? 1 : 0);
	}

	/**
	 * The time from an instant to the end of the period containing it: when the quota resets.
	 * @param instant any instant
	 * @return the time until the next boundary, above zero and at most the period's length
	 * @throws DateTimeException as {@link #periodAt(Instant)}
	 */
	public Duration untilEnd(Instant instant) {
		return Duration.between(instant, periodAt(instant).end());
	}

	private static Interval fixedPeriodAt(Instant instant, long millis) {
		try {
			long start = Math.multiplyExact(Math.floorDiv(instant.toEpochMilli(), millis), millis);
			return new Interval(Instant.ofEpochMilli(start), Instant.ofEpochMilli(Math.addExact(start, millis)));
		}
		catch (ArithmeticException ex) {
			throw new DateTimeException("the fixed quota period of " + instant + " is beyond epoch milliseconds", ex);
		}
	}

	private LocalDate firstDate(LocalDate date) {
		return switch (Objects.requireNonNull(this.unit)) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(this.firstDayOfWeek));
			case MONTH -> date.withDayOfMonth(1);
			case YEAR -> date.withDayOfYear(1);
		};
	}

	private LocalDate step(LocalDate first, int periods) {
		return switch (Objects.requireNonNull(this.unit)) {
			case DAY -> first.plusDays(periods);
			case WEEK -> first.plusWeeks(periods);
			case MONTH -> first.plusMonths(periods);
			case YEAR -> first.plusYears(periods);
		};
	}

	private Instant startOf(LocalDate first) {
		return first.atStartOfDay(this.zone).toInstant();
	}

	/**
	 * One period: the half-open interval {@code [start, end)}.
	 *
	 * @param start the first instant of the period
	 * @param end the first instant after it: the next period's start
	 */
	public record Interval(Instant start, Instant end) {

		/**
		 * Validate the bounds.
		 * @throws IllegalArgumentException if {@code end} is not after {@code start}
		 */
		public Interval {
			if (!end.isAfter(start)) {
				throw new IllegalArgumentException("a period ends after it starts, was [" + start + ", " + end + ")");
			}
		}

		/**
		 * The period's length.
		 * @return {@code end - start}, above zero
		 */
		public Duration length() {
			return Duration.between(this.start, this.end);
		}

		/**
		 * Whether an instant is in the period.
		 * @param instant any instant
		 * @return {@code start <= instant < end}
		 */
		public boolean contains(Instant instant) {
			return !instant.isBefore(this.start) && instant.isBefore(this.end);
		}

	}

}
