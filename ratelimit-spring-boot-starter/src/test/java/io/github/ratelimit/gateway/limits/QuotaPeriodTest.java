package io.github.ratelimit.gateway.limits;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import io.github.ratelimit.gateway.limits.QuotaPeriod.Interval;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static io.github.ratelimit.gateway.limits.QuotaPeriodUnit.DAY;
import static io.github.ratelimit.gateway.limits.QuotaPeriodUnit.MONTH;
import static io.github.ratelimit.gateway.limits.QuotaPeriodUnit.WEEK;
import static io.github.ratelimit.gateway.limits.QuotaPeriodUnit.YEAR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * {@link QuotaPeriod}: calendar periods across daylight-saving changes, month ends, leap years and year ends, fixed
 * periods, the boundaries a script picks its period from, and validation. Every instant is fixed; the expected
 * boundaries are written out in UTC.
 */
class QuotaPeriodTest {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

	private static final ZoneId PLUS_0328 = ZoneId.of("+03:28");

	private static Instant at(String utc) {
		return Instant.parse(utc);
	}

	private static Interval interval(String start, String end) {
		return new Interval(at(start), at(end));
	}

	@Test
	void berlinSpringDayLasts23HoursAndItsWeekAndMonthAnHourLess() {
		Instant sunday = at("2026-03-29T12:00:00Z"); // clocks went 02:00 CET -> 03:00 CEST at 01:00Z
		QuotaPeriod day = QuotaPeriod.of(DAY, BERLIN);
		assertThat(day.periodAt(sunday)).isEqualTo(interval("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"));
		assertThat(day.periodAt(sunday).length()).isEqualTo(Duration.ofHours(23));
		assertThat(day.seconds(sunday)).isEqualTo(82_800);
		assertThat(day.periodAt(at("2026-03-28T12:00:00Z")).length()).isEqualTo(Duration.ofHours(24));
		assertThat(QuotaPeriod.of(WEEK, BERLIN).periodAt(sunday))
			.isEqualTo(interval("2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, BERLIN).seconds(sunday)).isEqualTo(167 * 3600);
		assertThat(QuotaPeriod.of(MONTH, BERLIN).periodAt(sunday))
			.isEqualTo(interval("2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"));
		assertThat(QuotaPeriod.of(MONTH, BERLIN).seconds(sunday)).isEqualTo((31 * 24 - 1) * 3600);
	}

	@Test
	void berlinAutumnDayLasts25HoursAndItsWeekAndMonthAnHourMore() {
		Instant sunday = at("2026-10-25T12:00:00Z"); // clocks went 03:00 CEST -> 02:00 CET at 01:00Z
		QuotaPeriod day = QuotaPeriod.of(DAY, BERLIN);
		assertThat(day.periodAt(sunday)).isEqualTo(interval("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"));
		assertThat(day.seconds(sunday)).isEqualTo(90_000);
		// the repeated hour 02:00-03:00 local, both times, is the same day
		assertThat(day.periodAt(at("2026-10-25T00:30:00Z"))).isEqualTo(day.periodAt(sunday));
		assertThat(day.periodAt(at("2026-10-25T01:30:00Z"))).isEqualTo(day.periodAt(sunday));
		assertThat(QuotaPeriod.of(WEEK, BERLIN).periodAt(sunday))
			.isEqualTo(interval("2026-10-18T22:00:00Z", "2026-10-25T23:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, BERLIN).seconds(sunday)).isEqualTo(169 * 3600);
		assertThat(QuotaPeriod.of(MONTH, BERLIN).periodAt(sunday))
			.isEqualTo(interval("2026-09-30T22:00:00Z", "2026-10-31T23:00:00Z"));
		assertThat(QuotaPeriod.of(MONTH, BERLIN).seconds(sunday)).isEqualTo((31 * 24 + 1) * 3600);
	}

	@Test
	void newYorkSpringAndAutumnDays() {
		QuotaPeriod day = QuotaPeriod.of(DAY, NEW_YORK);
		// 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z)
		assertThat(day.periodAt(at("2026-03-08T12:00:00Z")))
			.isEqualTo(interval("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"));
		assertThat(day.seconds(at("2026-03-08T12:00:00Z"))).isEqualTo(23 * 3600);
		assertThat(day.periodAt(at("2026-11-01T12:00:00Z")))
			.isEqualTo(interval("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"));
		assertThat(day.seconds(at("2026-11-01T12:00:00Z"))).isEqualTo(25 * 3600);
		// 2026-03-09 00:30 EDT is the next day; 2026-03-08 23:30 EDT is not
		assertThat(day.periodAt(at("2026-03-09T04:30:00Z")).start()).isEqualTo(at("2026-03-09T04:00:00Z"));
		assertThat(day.periodAt(at("2026-03-09T03:30:00Z")).start()).isEqualTo(at("2026-03-08T05:00:00Z"));
	}

	@Test
	void newYorkWeeksAndMonthsAcrossDaylightSaving() {
		Instant spring = at("2026-03-08T12:00:00Z");
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK).periodAt(spring))
			.isEqualTo(interval("2026-03-02T05:00:00Z", "2026-03-09T04:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK, DayOfWeek.SUNDAY).periodAt(spring))
			.isEqualTo(interval("2026-03-08T05:00:00Z", "2026-03-15T04:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK, DayOfWeek.SUNDAY).seconds(spring)).isEqualTo(167 * 3600);
		assertThat(QuotaPeriod.of(MONTH, NEW_YORK).periodAt(spring))
			.isEqualTo(interval("2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"));
		Instant autumn = at("2026-11-01T12:00:00Z");
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK).periodAt(autumn))
			.isEqualTo(interval("2026-10-26T04:00:00Z", "2026-11-02T05:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK).seconds(autumn)).isEqualTo(169 * 3600);
		assertThat(QuotaPeriod.of(MONTH, NEW_YORK).periodAt(autumn))
			.isEqualTo(interval("2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z"));
		assertThat(QuotaPeriod.of(MONTH, NEW_YORK).seconds(autumn)).isEqualTo((30 * 24 + 1) * 3600);
	}

	@Test
	void aFixedOffsetZoneStartsItsDaysAtItsMidnight() {
		QuotaPeriod day = QuotaPeriod.of(DAY, PLUS_0328);
		assertThat(day.zone()).isEqualTo(ZoneOffset.ofHoursMinutes(3, 28));
		assertThat(day.periodAt(at("2026-06-15T00:00:00Z")))
			.isEqualTo(interval("2026-06-14T20:32:00Z", "2026-06-15T20:32:00Z"));
		assertThat(day.periodAt(at("2026-06-14T20:31:59.999Z")))
			.isEqualTo(interval("2026-06-13T20:32:00Z", "2026-06-14T20:32:00Z"));
		assertThat(day.periodAt(at("2026-06-14T20:32:00Z")).start()).isEqualTo(at("2026-06-14T20:32:00Z"));
		assertThat(day.untilEnd(at("2026-06-15T20:31:00Z"))).isEqualTo(Duration.ofMinutes(1));
		assertThat(QuotaPeriod.of(MONTH, PLUS_0328).periodAt(at("2026-03-01T00:00:00Z")))
			.isEqualTo(interval("2026-02-28T20:32:00Z", "2026-03-31T20:32:00Z"));
		assertThat(QuotaPeriod.of(YEAR, PLUS_0328).periodAt(at("2026-12-31T21:00:00Z")))
			.isEqualTo(interval("2026-12-31T20:32:00Z", "2027-12-31T20:32:00Z"));
	}

	@ParameterizedTest
	@CsvSource({ "2026-01-31T23:59:59.999Z, 2026-01-01T00:00:00Z, 2026-02-01T00:00:00Z, 31",
			"2026-02-01T00:00:00Z,      2026-02-01T00:00:00Z, 2026-03-01T00:00:00Z, 28",
			"2026-02-28T23:59:59.999Z, 2026-02-01T00:00:00Z, 2026-03-01T00:00:00Z, 28",
			"2026-03-01T00:00:00Z,      2026-03-01T00:00:00Z, 2026-04-01T00:00:00Z, 31",
			"2026-04-30T23:59:59Z,      2026-04-01T00:00:00Z, 2026-05-01T00:00:00Z, 30",
			"2026-12-31T23:59:59.999Z, 2026-12-01T00:00:00Z, 2027-01-01T00:00:00Z, 31",
			"2028-02-29T12:00:00Z,      2028-02-01T00:00:00Z, 2028-03-01T00:00:00Z, 29",
			"2028-02-28T23:59:59.999Z, 2028-02-01T00:00:00Z, 2028-03-01T00:00:00Z, 29",
			"2100-02-28T23:59:59.999Z, 2100-02-01T00:00:00Z, 2100-03-01T00:00:00Z, 28",
			"2000-02-29T00:00:00Z,      2000-02-01T00:00:00Z, 2000-03-01T00:00:00Z, 29" })
	void monthsEndOnTheirLastDayWithLeapYears(String instant, String start, String end, long days) {
		QuotaPeriod month = QuotaPeriod.of(MONTH, ZoneOffset.UTC);
		assertThat(month.periodAt(at(instant))).isEqualTo(interval(start, end));
		assertThat(month.seconds(at(instant))).isEqualTo(days * 86_400);
	}

	@Test
	void aMonthInAZoneEndsAtItsLocalMidnight() {
		QuotaPeriod month = QuotaPeriod.of(MONTH, BERLIN);
		// 2026-01-31 23:30 CET is January, 2026-02-01 00:00 CET February
		assertThat(month.periodAt(at("2026-01-31T22:30:00Z")))
			.isEqualTo(interval("2025-12-31T23:00:00Z", "2026-01-31T23:00:00Z"));
		assertThat(month.periodAt(at("2026-01-31T23:00:00Z")))
			.isEqualTo(interval("2026-01-31T23:00:00Z", "2026-02-28T23:00:00Z"));
		assertThat(QuotaPeriod.of(MONTH, NEW_YORK).periodAt(at("2028-03-01T04:59:59Z")))
			.isEqualTo(interval("2028-02-01T05:00:00Z", "2028-03-01T05:00:00Z"));
	}

	@Test
	void yearsAcross2027And2028() {
		QuotaPeriod year = QuotaPeriod.of(YEAR, ZoneOffset.UTC);
		assertThat(year.periodAt(at("2027-12-31T23:59:59.999999999Z")))
			.isEqualTo(interval("2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"));
		assertThat(year.seconds(at("2027-06-01T00:00:00Z"))).isEqualTo(365 * 86_400L);
		assertThat(year.periodAt(at("2028-01-01T00:00:00Z")))
			.isEqualTo(interval("2028-01-01T00:00:00Z", "2029-01-01T00:00:00Z"));
		assertThat(year.seconds(at("2028-01-01T00:00:00Z"))).isEqualTo(366 * 86_400L);
		QuotaPeriod berlin = QuotaPeriod.of(YEAR, BERLIN);
		assertThat(berlin.periodAt(at("2027-12-31T22:59:59.999Z")))
			.isEqualTo(interval("2026-12-31T23:00:00Z", "2027-12-31T23:00:00Z"));
		assertThat(berlin.periodAt(at("2027-12-31T23:00:00Z")))
			.isEqualTo(interval("2027-12-31T23:00:00Z", "2028-12-31T23:00:00Z"));
		assertThat(berlin.untilEnd(at("2027-12-31T22:00:00Z"))).isEqualTo(Duration.ofHours(1));
	}

	@Test
	void weeksStartOnTheirFirstDayAcrossAYearEnd() {
		// 2026-12-31 is a Thursday, 2027-01-03 a Sunday, 2027-01-04 a Monday
		QuotaPeriod monday = QuotaPeriod.of(WEEK, ZoneOffset.UTC);
		QuotaPeriod sunday = QuotaPeriod.of(WEEK, ZoneOffset.UTC, DayOfWeek.SUNDAY);
		Instant newYear = at("2027-01-01T00:00:00Z");
		assertThat(monday.periodAt(newYear)).isEqualTo(interval("2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"));
		assertThat(sunday.periodAt(newYear)).isEqualTo(interval("2026-12-27T00:00:00Z", "2027-01-03T00:00:00Z"));
		assertThat(sunday.periodAt(at("2027-01-03T00:00:00Z")))
			.isEqualTo(interval("2027-01-03T00:00:00Z", "2027-01-10T00:00:00Z"));
		assertThat(monday.periodAt(at("2027-01-03T00:00:00Z"))).isEqualTo(monday.periodAt(newYear));
		assertThat(monday.periodAt(at("2027-01-03T23:59:59.999999999Z"))).isEqualTo(monday.periodAt(newYear));
		assertThat(monday.periodAt(at("2027-01-04T00:00:00Z")).start()).isEqualTo(at("2027-01-04T00:00:00Z"));
		assertThat(monday.seconds(newYear)).isEqualTo(7 * 86_400);
	}

	@Test
	void anInstantAtABoundaryBelongsToTheNewPeriodAndOneBeforeToTheOld() {
		for (QuotaPeriod period : List.of(QuotaPeriod.of(DAY, BERLIN), QuotaPeriod.of(WEEK, NEW_YORK),
				QuotaPeriod.of(MONTH, PLUS_0328), QuotaPeriod.of(YEAR, BERLIN),
				QuotaPeriod.fixed(Duration.ofSeconds(10)))) {
			Instant boundary = period.periodAt(at("2026-10-25T12:00:00Z")).end();
			assertThat(period.periodAt(boundary).start()).as("%s at %s", period, boundary).isEqualTo(boundary);
			assertThat(period.periodAt(boundary.minusNanos(1)).end()).as("%s before %s", period, boundary)
				.isEqualTo(boundary);
			assertThat(period.periodAt(boundary.minusMillis(1)).end()).isEqualTo(boundary);
			assertThat(period.untilEnd(boundary.minusNanos(1))).isEqualTo(Duration.ofNanos(1));
			assertThat(period.untilEnd(boundary)).isEqualTo(period.periodAt(boundary).length());
		}
		QuotaPeriod day = QuotaPeriod.of(DAY, BERLIN);
		assertThat(day.periodAt(at("2026-03-29T22:00:00Z")).start()).isEqualTo(at("2026-03-29T22:00:00Z"));
		assertThat(day.periodAt(at("2026-03-29T21:59:59.999999999Z")).start()).isEqualTo(at("2026-03-28T23:00:00Z"));
	}

	@Test
	void fixedPeriodsAreAlignedToMultiplesOfTheirDurationSinceTheEpoch() {
		QuotaPeriod tenSeconds = QuotaPeriod.fixed(Duration.ofSeconds(10));
		assertThat(tenSeconds.isFixed()).isTrue();
		assertThat(tenSeconds.periodAt(at("2026-06-15T12:34:56.789Z")))
			.isEqualTo(interval("2026-06-15T12:34:50Z", "2026-06-15T12:35:00Z"));
		assertThat(tenSeconds.periodAt(at("2026-06-15T12:34:59.999999999Z")).end())
			.isEqualTo(at("2026-06-15T12:35:00Z"));
		assertThat(tenSeconds.periodAt(at("2026-06-15T12:35:00Z")))
			.isEqualTo(interval("2026-06-15T12:35:00Z", "2026-06-15T12:35:10Z"));
		assertThat(tenSeconds.periodAt(at("1969-12-31T23:59:55.500Z"))) // floor, not truncation, before the epoch
			.isEqualTo(interval("1969-12-31T23:59:50Z", "1970-01-01T00:00:00Z"));
		assertThat(tenSeconds.seconds(at("2026-06-15T12:34:56Z"))).isEqualTo(10);
		assertThat(tenSeconds.untilEnd(at("2026-06-15T12:34:56.789Z"))).isEqualTo(Duration.ofMillis(3_211));
		QuotaPeriod oneDay = QuotaPeriod.fixed(Duration.ofDays(1));
		assertThat(oneDay.periodAt(at("2026-03-29T12:00:00Z"))) // UTC days: no daylight saving
			.isEqualTo(interval("2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"));
		assertThat(oneDay.seconds(at("2026-03-29T12:00:00Z"))).isEqualTo(86_400);
		QuotaPeriod odd = QuotaPeriod.fixed(Duration.ofMillis(1_500));
		assertThat(odd.periodAt(at("1970-01-01T00:00:02Z"))).isEqualTo(interval("1970-01-01T00:00:01.500Z",
				"1970-01-01T00:00:03Z"));
		assertThat(odd.seconds(at("1970-01-01T00:00:02Z"))).isEqualTo(2); // rounded up
	}

	@Test
	void aDayWhoseMidnightDoesNotExistStartsAtItsFirstValidInstant() {
		// America/Sao_Paulo 2018-11-04: 00:00 -03:00 -> 01:00 -02:00
		QuotaPeriod saoPaulo = QuotaPeriod.of(DAY, ZoneId.of("America/Sao_Paulo"));
		assertThat(saoPaulo.periodAt(at("2018-11-04T12:00:00Z")))
			.isEqualTo(interval("2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"));
		assertThat(saoPaulo.periodAt(at("2018-11-04T02:59:59Z")))
			.isEqualTo(interval("2018-11-03T03:00:00Z", "2018-11-04T03:00:00Z"));
		// Asia/Gaza 2019-03-29: 00:00 +02:00 -> 01:00 +03:00
		QuotaPeriod gaza = QuotaPeriod.of(DAY, ZoneId.of("Asia/Gaza"));
		assertThat(gaza.periodAt(at("2019-03-29T12:00:00Z")))
			.isEqualTo(interval("2019-03-28T22:00:00Z", "2019-03-29T21:00:00Z"));
		assertThat(gaza.seconds(at("2019-03-29T12:00:00Z"))).isEqualTo(23 * 3600);
	}

	@Test
	void aSkippedDayHasNoPeriodAndARepeatedDateBelongsToTheLaterDay() {
		// Pacific/Apia skipped 2011-12-30: 2011-12-29 24:00 -10:00 -> 2011-12-31 00:00 +14:00 (10:00Z)
		QuotaPeriod apia = QuotaPeriod.of(DAY, ZoneId.of("Pacific/Apia"));
		assertThat(apia.periodAt(at("2011-12-30T09:59:59Z")))
			.isEqualTo(interval("2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z"));
		assertThat(apia.periodAt(at("2011-12-30T10:00:00Z")))
			.isEqualTo(interval("2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z"));
		assertThat(apia.boundariesAround(at("2011-12-30T09:00:00Z"), 4)).containsExactly(at("2011-12-28T10:00:00Z"),
				at("2011-12-29T10:00:00Z"), at("2011-12-30T10:00:00Z"), at("2011-12-31T10:00:00Z"));
		// America/St_Johns 2006-10-29 00:01 -02:30 -> 2006-10-28 23:01 -03:30: Sunday started at 02:30Z, then
		// Saturday 23:01-23:59 came again; that hour is Sunday's, so the days do not overlap
		QuotaPeriod stJohns = QuotaPeriod.of(DAY, ZoneId.of("America/St_Johns"));
		Interval saturday = interval("2006-10-28T02:30:00Z", "2006-10-29T02:30:00Z");
		Interval sunday = interval("2006-10-29T02:30:00Z", "2006-10-30T03:30:00Z");
		assertThat(stJohns.periodAt(at("2006-10-29T02:29:00Z"))).isEqualTo(saturday); // 23:59 -02:30
		assertThat(stJohns.periodAt(at("2006-10-29T02:30:00Z"))).isEqualTo(sunday); // 00:00 -02:30
		assertThat(stJohns.periodAt(at("2006-10-29T03:00:00Z"))).isEqualTo(sunday); // 23:30 -03:30, Saturday again
		assertThat(stJohns.periodAt(at("2006-10-29T12:00:00Z"))).isEqualTo(sunday);
	}

	@Test
	void theContainingPeriodIsTheLatestStartingAtOrBeforeAnInstantEveryHalfHourFor400Days() {
		record Case(ZoneId zone, String from) {
		}
		for (Case c : List.of(new Case(BERLIN, "2026-01-01T00:00:00Z"), new Case(NEW_YORK, "2026-01-01T00:00:00Z"),
				new Case(ZoneId.of("America/St_Johns"), "2006-01-01T00:00:00Z"),
				new Case(ZoneId.of("Pacific/Kwajalein"), "1969-01-01T00:00:00Z"),
				new Case(ZoneId.of("Pacific/Apia"), "2011-06-01T00:00:00Z"))) {
			for (QuotaPeriodUnit unit : QuotaPeriodUnit.values()) {
				QuotaPeriod period = QuotaPeriod.of(unit, c.zone());
				Interval previous = period.periodAt(at(c.from()));
				for (Instant t = at(c.from()); t.isBefore(at(c.from()).plus(Duration.ofDays(400))); t = t
					.plus(Duration.ofMinutes(30))) {
					Interval p = period.periodAt(t);
					assertThat(p.contains(t)).as("%s %s", period, t).isTrue();
					assertThat(p.equals(previous) || p.start().equals(previous.end())).as("%s %s", period, t).isTrue();
					assertThat(period.periodAt(p.start())).isEqualTo(p);
					previous = p;
				}
			}
		}
	}

	@Test
	void boundariesAroundADaylightSavingWeek() {
		assertThat(QuotaPeriod.of(DAY, BERLIN).boundariesAround(at("2026-03-29T12:00:00Z"), 5)).containsExactly(
				at("2026-03-27T23:00:00Z"), at("2026-03-28T23:00:00Z"), at("2026-03-29T22:00:00Z"),
				at("2026-03-30T22:00:00Z"), at("2026-03-31T22:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, BERLIN).boundariesAround(at("2026-10-25T12:00:00Z"), 4)).containsExactly(
				at("2026-10-11T22:00:00Z"), at("2026-10-18T22:00:00Z"), at("2026-10-25T23:00:00Z"),
				at("2026-11-01T23:00:00Z"));
		assertThat(QuotaPeriod.of(WEEK, NEW_YORK, DayOfWeek.SUNDAY).boundariesAround(at("2026-03-08T06:00:00Z"), 3))
			.containsExactly(at("2026-03-01T05:00:00Z"), at("2026-03-08T05:00:00Z"), at("2026-03-15T04:00:00Z"));
		assertThat(QuotaPeriod.fixed(Duration.ofSeconds(10)).boundariesAround(at("2026-06-15T12:34:50Z"), 4))
			.containsExactly(at("2026-06-15T12:34:40Z"), at("2026-06-15T12:34:50Z"), at("2026-06-15T12:35:00Z"),
					at("2026-06-15T12:35:10Z"));
		assertThat(QuotaPeriod.of(MONTH, ZoneOffset.UTC).boundariesAround(at("2028-02-29T00:00:00Z"), 3))
			.containsExactly(at("2028-01-01T00:00:00Z"), at("2028-02-01T00:00:00Z"), at("2028-03-01T00:00:00Z"));
	}

	/**
	 * What the script does with the boundaries: picks the period containing Redis' now, or none.
	 */
	private static Interval pick(List<Instant> boundaries, Instant now) {
		for (int i = 0; i + 1 < boundaries.size(); i++) {
			if (!now.isBefore(boundaries.get(i)) && now.isBefore(boundaries.get(i + 1))) {
				return new Interval(boundaries.get(i), boundaries.get(i + 1));
			}
		}
		return null;
	}

	@Test
	void aScriptPicksRedisPeriodFromFourBoundariesWhenTheGatewayClockIsOffByLessThanAPeriod() {
		QuotaPeriod day = QuotaPeriod.of(DAY, BERLIN);
		// gateway instants around the 23-hour day's boundaries, Redis clocks up to 22 h 59 min either way
		for (String gateway : List.of("2026-03-28T22:59:59.999Z", "2026-03-28T23:00:00Z", "2026-03-29T12:00:00Z",
				"2026-03-29T21:59:59.999Z", "2026-03-29T22:00:00Z")) {
			List<Instant> boundaries = day.boundariesAround(at(gateway), 4);
			for (long offsetMinutes = -(23 * 60 - 1); offsetMinutes <= 23 * 60 - 1; offsetMinutes += 7) {
				Instant redisNow = at(gateway).plus(Duration.ofMinutes(offsetMinutes));
				assertThat(pick(boundaries, redisNow)).as("gateway %s, Redis %s", gateway, redisNow)
					.isEqualTo(day.periodAt(redisNow));
			}
		}
		List<Instant> three = day.boundariesAround(at("2026-03-29T21:59:00Z"), 3);
		assertThat(pick(three, at("2026-03-29T22:00:00Z"))).isNull(); // Redis a minute ahead, past b2: no period
		assertThat(pick(three, at("2026-03-27T23:00:00Z"))).isEqualTo(day.periodAt(at("2026-03-27T23:00:00Z")));
		assertThat(pick(three, at("2026-03-27T22:59:59.999Z"))).isNull(); // before b0
	}

	@Test
	void aCalendarPeriodTakesAUnitAndAFixedPeriodADuration() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new QuotaPeriod(null, ZoneOffset.UTC, DayOfWeek.MONDAY, null))
			.withMessage("a quota period is either a calendar unit (day, week, month, year) or a fixed duration, was "
					+ "unit null and duration null");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new QuotaPeriod(DAY, ZoneOffset.UTC, DayOfWeek.MONDAY, Duration.ofDays(1)))
			.withMessage("a quota period is either a calendar unit (day, week, month, year) or a fixed duration, was "
					+ "unit DAY and duration PT24H");
		assertThatNullPointerException().isThrownBy(() -> QuotaPeriod.of(DAY, null)).withMessage("zone");
		assertThatNullPointerException().isThrownBy(() -> QuotaPeriod.of(WEEK, BERLIN, null))
			.withMessage("firstDayOfWeek");
	}

	@Test
	void aFixedPeriodIsWholeMillisecondsFromOneSecondTo36500Days() {
		for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(999), Duration.ofSeconds(-10),
				Duration.ofDays(36_500).plusMillis(1))) {
			assertThatIllegalArgumentException().isThrownBy(() -> QuotaPeriod.fixed(bad))
				.withMessage("a fixed quota period is from 1 s to 36500 days (100 years), was " + bad);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> QuotaPeriod.fixed(Duration.ofSeconds(1).plusNanos(1)))
			.withMessage("a fixed quota period is a whole number of milliseconds, was PT1.000000001S");
		assertThat(QuotaPeriod.fixed(Duration.ofSeconds(1)).fixedDuration()).isEqualTo(Duration.ofSeconds(1));
		assertThat(QuotaPeriod.fixed(Duration.ofDays(36_500)).periodAt(at("2026-01-01T00:00:00Z")))
			.isEqualTo(interval("1970-01-01T00:00:00Z", "2069-12-07T00:00:00Z"));
	}

	@Test
	void componentsAPeriodDoesNotUseAreSetToTheirFixedValues() {
		QuotaPeriod fixed = new QuotaPeriod(null, BERLIN, DayOfWeek.SUNDAY, Duration.ofSeconds(10));
		assertThat(fixed.zone()).isEqualTo(ZoneOffset.UTC);
		assertThat(fixed.firstDayOfWeek()).isEqualTo(DayOfWeek.MONDAY);
		assertThat(fixed).isEqualTo(QuotaPeriod.fixed(Duration.ofSeconds(10)));
		assertThat(QuotaPeriod.of(DAY, BERLIN, DayOfWeek.SUNDAY)).isEqualTo(QuotaPeriod.of(DAY, BERLIN));
		assertThat(QuotaPeriod.of(WEEK, BERLIN, DayOfWeek.SUNDAY).firstDayOfWeek()).isEqualTo(DayOfWeek.SUNDAY);
		assertThat(QuotaPeriod.of(WEEK, BERLIN).firstDayOfWeek()).isEqualTo(DayOfWeek.MONDAY);
		assertThat(QuotaPeriod.of(MONTH, BERLIN).isFixed()).isFalse();
	}

	@Test
	void boundariesAreAtLeastThreeAndPeriodsNonEmpty() {
		QuotaPeriod day = QuotaPeriod.of(DAY, BERLIN);
		assertThatIllegalArgumentException().isThrownBy(() -> day.boundariesAround(at("2026-03-29T12:00:00Z"), 2))
			.withMessage("boundaries around an instant are at least 3, was 2");
		assertThatIllegalArgumentException().isThrownBy(() -> interval("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"))
			.withMessage("a period ends after it starts, was [2026-01-01T00:00:00Z, 2026-01-01T00:00:00Z)");
		assertThat(interval("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z").contains(at("2026-01-02T00:00:00Z")))
			.isFalse();
	}

	@Test
	void aPeriodBeyondTheRangeOfTimeIsAnError() {
		assertThatExceptionOfType(DateTimeException.class)
			.isThrownBy(() -> QuotaPeriod.of(YEAR, ZoneOffset.UTC).periodAt(Instant.MAX));
		assertThatExceptionOfType(DateTimeException.class)
			.isThrownBy(() -> QuotaPeriod.fixed(Duration.ofSeconds(10)).periodAt(Instant.MAX));
	}

}
