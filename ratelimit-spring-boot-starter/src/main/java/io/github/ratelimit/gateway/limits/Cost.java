package io.github.ratelimit.gateway.limits;

/**
 * What one script call takes from a set of limits, or gives back: {@code tokens} from each limit counting requests,
 * {@code usage} units from each limit counting usage ({@link LimitDefinition#isUsage()}); a concurrency limit takes
 * one slot per request whatever the cost. Negative values give back (a settlement's difference).
 *
 * @param tokens tokens taken from (or, negative, given back to) each limit counting requests
 * @param usage units taken from (or, negative, given back to) each limit counting usage: a request's reservation
 * @param reserves whether an allowed request holds what it took as a reservation that its answer settles (its
 * route measures answers), so that the decision carries it
 */
public record Cost(long tokens, long usage, boolean reserves) {

	/** Takes nothing: reads the limits. */
	public static final Cost NONE = new Cost(0, 0);

	/** One token from each limit counting requests, nothing from limits counting usage: the default request. */
	public static final Cost ONE = new Cost(1, 0);

	/**
	 * A cost that is not a reservation: what is taken stays taken.
	 * @param tokens tokens taken from (or given back to) each limit counting requests
	 * @param usage units taken from (or given back to) each limit counting usage
	 */
	public Cost(long tokens, long usage) {
		this(tokens, usage, false);
	}

	/**
	 * The cost of a request whose answer settles what it took.
	 * @param tokens tokens taken from each limit counting requests
	 * @param usage units reserved in each limit counting usage
	 * @return the cost, {@link #reserves()}
	 */
	public static Cost reserving(long tokens, long usage) {
		return new Cost(tokens, usage, true);
	}

	/**
	 * A cost in tokens only.
	 * @param tokens tokens taken from each limit counting requests
	 * @return the cost
	 */
	public static Cost tokens(long tokens) {
		return (tokens == 1) ? ONE : (tokens == 0) ? NONE : new Cost(tokens, 0);
	}

	/**
	 * What this cost takes from one limit.
	 * @param limit a rate limit (a concurrency limit's slots are not tokens)
	 * @return {@link #usage()} for a limit counting usage, else {@link #tokens()}
	 */
	public long of(LimitDefinition limit) {
		return limit.isUsage() ? this.usage : this.tokens;
	}

	/**
	 * The opposite cost: what gives this one back.
	 * @return {@code (-tokens, -usage)}
	 */
	public Cost negated() {
		return new Cost(-this.tokens, -this.usage);
	}

	/**
	 * Whether this takes nothing.
	 * @return {@code tokens == 0 && usage == 0}
	 */
	public boolean isNone() {
		return this.tokens == 0 && this.usage == 0;
	}

}
