package io.github.ratelimit.gateway.plan;

/**
 * The plans the limits in force define, as client key resolution needs them: so that a client's plan is decided
 * once, when its key is resolved, and every later step can take it as given. Implemented by the limits in force
 * ({@code LimitResolver}), which follow a configuration refresh.
 */
public interface KnownPlans {

	/**
	 * Whether a plan is configured.
	 * @param plan a plan name
	 * @return whether limits exist for it
	 */
	boolean isKnown(String plan);

	/**
	 * The plan of clients limited by IP address, and of API keys whose plan is not configured.
	 * @return a configured plan name
	 */
	String anonymousPlan();

	/**
	 * The plan of authenticated principals whose credentials name no configured plan
	 * ({@code ratelimit.principal.default-plan}).
	 * @return a configured plan name; by default the {@linkplain #anonymousPlan() anonymous plan}
	 */
	default String principalPlan() {
		return anonymousPlan();
	}

	/**
	 * The plan of clients identified by a request header ({@code key-by: header}; {@code ratelimit.header-plan}).
	 * @return a configured plan name; by default the {@linkplain #anonymousPlan() anonymous plan}
	 */
	default String headerPlan() {
		return anonymousPlan();
	}

	/**
	 * Plans that accept every name, with a fixed anonymous plan (for resolvers used without the limits in force).
	 * @param anonymousPlan the anonymous plan's name
	 * @return the plans
	 */
	static KnownPlans any(String anonymousPlan) {
		return new KnownPlans() {
			@Override
			public boolean isKnown(String plan) {
				return true;
			}

			@Override
			public String anonymousPlan() {
				return anonymousPlan;
			}

			@Override
			public String toString() {
				return "KnownPlans[any, anonymous=" + anonymousPlan + "]";
			}
		};
	}

}
