package io.github.ratelimit.gateway.limits;

/**
 * The calendar unit of a {@link QuotaPeriod}: a quota resets at the start of each day, week, month or year in the
 * period's time zone.
 */
public enum QuotaPeriodUnit {

	/** From the start of a local day (midnight, or the first valid instant of a day without one) to the next. */
	DAY,

	/** Seven local days from the start of the period's first day of the week. */
	WEEK,

	/** From the start of the 1st of a month to the start of the 1st of the next. */
	MONTH,

	/** From the start of 1 January to the start of 1 January of the next year. */
	YEAR

}
