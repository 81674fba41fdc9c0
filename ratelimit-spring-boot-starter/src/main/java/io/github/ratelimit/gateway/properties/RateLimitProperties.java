package io.github.ratelimit.gateway.properties;

import java.time.DayOfWeek;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.http.HeaderStyle;
import io.github.ratelimit.gateway.http.RequestPathCheck;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LeaseBudget;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.LimitScope;

import io.github.ratelimit.gateway.properties.PropertyRules.Between;
import io.github.ratelimit.gateway.properties.PropertyRules.Matches;
import io.github.ratelimit.gateway.properties.PropertyRules.Min;
import io.github.ratelimit.gateway.properties.PropertyRules.MinDuration;
import io.github.ratelimit.gateway.properties.PropertyRules.NotBlank;
import io.github.ratelimit.gateway.properties.PropertyRules.Percent;
import io.github.ratelimit.gateway.properties.PropertyRules.PositiveDuration;
import io.github.ratelimit.gateway.properties.PropertyRules.Required;
import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of the distributed rate limiter, bound from the {@code ratelimit.*} properties.
 *
 * <p>Plans hold limits, either for all endpoint groups ({@code default}) or for one group ({@code groups.<group>});
 * API keys map to plans; clients without a known API key are limited by IP address under the
 * {@link #getAnonymousPlan() anonymous plan}. A field's range rule is declared on it ({@link PropertyRules}); rules
 * across properties are {@link RateLimitPropertiesValidator}'s. A bad value stops start-up with a message naming the
 * property and its fix.
 */
@ConfigurationProperties(prefix = RateLimitProperties.PREFIX)
public class RateLimitProperties {

	/** Prefix of every property of this starter. */
	public static final String PREFIX = "ratelimit";

	/** The switch of the whole starter, {@value}: {@code false} turns it off (see {@link #isEnabled()}). */
	public static final String ENABLED = PREFIX + ".enabled";

	/**
	 * Whether rate limiting is on. When off, routes that name the RateLimit filter pass every request unchecked
	 * (one WARN at start-up names them), and the starter makes no limiter, no path check, no Redis connection, no
	 * health component and no endpoint, and leaves the rest of this configuration unread.
	 */
	private boolean enabled = true;

	/**
	 * Name of the request header that carries the client's API key. Requests without it, with an empty value or
	 * with a key no plan knows are limited by client IP under the anonymous plan.
	 */
	@NotBlank(fix = "name the request header that carries the API key, e.g. X-API-Key.")
	private String apiKeyHeader = "X-API-Key";

	/**
	 * Number of reverse-proxy hops in front of the gateway whose X-Forwarded-For entries are trusted (0 to 32).
	 * 0 ignores X-Forwarded-For and limits by the TCP peer address; 1 takes the rightmost entry (written by the one
	 * trusted proxy); n takes the n-th entry from the right. Entries a client wrote itself are never trusted as
	 * long as this matches the real number of proxies.
	 */
	@Between(min = 0, max = 32, fix = "set it to the number of reverse proxies in front of the gateway (0 if none).")
	private int trustedProxies = 0;

	/** Plan applied to clients limited by IP address (no, empty or unknown API key). Must name a plan. */
	private String anonymousPlan = "anonymous";

	/**
	 * Plan of clients identified by a request header on key-by: header routes (a tenant or client id set by an
	 * upstream authenticator). Must name a plan; unset, the anonymous plan.
	 */
	private @Nullable String headerPlan;

	/** Clients identified by their authenticated principal (key-by: principal routes). */
	private final Principal principal = new Principal();

	/** Plans by name. Each plan has a non-empty default list of limits and optional per-group lists. */
	private Map<String, Plan> plans = new LinkedHashMap<>();

	/** Endpoint groups by name, with settings shared by every route of the group. */
	private Map<String, Group> groups = new LinkedHashMap<>();

	/**
	 * Upstream protections by name: a concurrency limit per gateway instance in front of an upstream, adaptive or
	 * fixed, that sheds (503) the lowest priorities first when the upstream is full. Routes take one by name
	 * (RateLimit argument protect).
	 */
	private Map<String, Protection> protections = new LinkedHashMap<>();

	/**
	 * Guaranteed shares of every upstream protection's limit, by priority below critical (high, normal, low), as
	 * percentages such as 40%, adding up to at most 100%; critical takes no share. Default: high 50%, normal 30%,
	 * low 20%.
	 */
	private Map<String, String> priorities = new LinkedHashMap<>();

	/**
	 * Static API key to plan mapping, for small installs, demos and tests. Keys are credentials: they are hashed
	 * before use in Redis and never logged.
	 */
	private Map<String, String> apiKeys = new LinkedHashMap<>();

	/** Which rate limit header fields responses carry. */
	@Required(fix = "use one of ietf, legacy, both, none.")
	private HeaderStyle headerStyle = HeaderStyle.IETF;

	/**
	 * Longest time one limiter check may wait for Redis; past it the check counts as failed and the failure policy
	 * applies (local fallback, or fail closed on critical routes). Must be positive.
	 */
	@PositiveDuration(fix = "set a duration such as 100ms.")
	private Duration redisTimeout = Duration.ofMillis(20);

	/** Circuit breaker around Redis calls. */
	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	/** What non-critical routes do while Redis is unavailable. */
	private final Fallback fallback = new Fallback();

	/** Local memory of denials, so clients far over their limit cost no Redis call per request. */
	private final OverLimitCache overLimitCache = new OverLimitCache();

	/** Token leases of limits that take them (a lease budget such as 2% on a token-bucket limit). */
	private final Leases leases = new Leases();

	/** Routes whose answers decide what a request is charged (the RateLimit filter's usage and reserve). */
	private final Usage usage = new Usage();

	/** Calendar quotas ({@code type: quota}): the time zone and week their periods are counted in. */
	private final Quota quota = new Quota();

	/** The limiter's Redis client. */
	private final Redis redis = new Redis();

	/**
	 * Whether every route runs in shadow mode: decisions are computed, counted and logged but never enforced (a
	 * request over its limit goes through), to measure new limits before switching them on. Groups and routes can
	 * also be put in shadow mode one by one.
	 */
	private boolean shadowMode;

	/** Whether responses in shadow mode carry the rate limit header fields (off: clients see nothing). */
	private boolean shadowHeaders;

	/**
	 * Level of the denial log (off, error, warn, info, debug, trace): the full line of a client's first denial in
	 * an endpoint group per denial-log-interval, and the summary line of its further denials.
	 */
	@Required(fix = "use one of off, error, warn, info, debug, trace.")
	private DenialLogLevel denialLogLevel = DenialLogLevel.INFO;

	/**
	 * How long one full denial log line per client and endpoint group stands for all its denials: the client's
	 * further denials in the group are counted, and when the interval (started by the full line) ends one summary
	 * line gives their number. Must be positive; e.g. 1m (the default), 10s. Read at start-up.
	 */
	@PositiveDuration(fix = "set a duration such as 1m: one full denial log line per client and endpoint group "
			+ "per interval.")
	private Duration denialLogInterval = Duration.ofMinutes(1);

	/** Prefix of every Redis key the limiter writes (letters, digits, '-', '_', ':' and '.'). */
	@Matches(regexp = "[A-Za-z0-9_.:-]+", what = "letters, digits, '-', '_', ':' or '.'",
			fix = "use a short prefix such as rl.")
	private String keyPrefix = "rl";

	/**
	 * What the gateway does with a request whose path is not in canonical form (empty or dot segments, encoded
	 * '/', '\', '.', '%' or ';'), checked before route matching so that no spelling of a path escapes its endpoint
	 * group: reject answers 400 Bad Request with a problem body, normalize routes and forwards the canonical path
	 * (RFC 3986 section 6.2.2; what has no canonical form is still refused), allow routes every path as written (a
	 * path may then reach another group's limits).
	 */
	private RequestPathCheck.Policy nonCanonicalPaths = RequestPathCheck.Policy.REJECT;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getApiKeyHeader() {
		return this.apiKeyHeader;
	}

	public void setApiKeyHeader(String apiKeyHeader) {
		this.apiKeyHeader = apiKeyHeader;
	}

	public int getTrustedProxies() {
		return this.trustedProxies;
	}

	public void setTrustedProxies(int trustedProxies) {
		this.trustedProxies = trustedProxies;
	}

	public String getAnonymousPlan() {
		return this.anonymousPlan;
	}

	public void setAnonymousPlan(String anonymousPlan) {
		this.anonymousPlan = anonymousPlan;
	}

	/**
	 * The plan of clients identified by a request header, as configured.
	 * @return the plan name, or {@code null} when unset (then the anonymous plan applies)
	 */
	public @Nullable String getHeaderPlan() {
		return this.headerPlan;
	}

	/**
	 * Set the plan of clients identified by a request header.
	 * @param headerPlan a plan name, or {@code null} for the anonymous plan
	 */
	public void setHeaderPlan(@Nullable String headerPlan) {
		this.headerPlan = headerPlan;
	}

	public Principal getPrincipal() {
		return this.principal;
	}

	public Map<String, Plan> getPlans() {
		return this.plans;
	}

	public void setPlans(Map<String, Plan> plans) {
		this.plans = plans;
	}

	public Map<String, Group> getGroups() {
		return this.groups;
	}

	public void setGroups(Map<String, Group> groups) {
		this.groups = groups;
	}

	public Map<String, Protection> getProtections() {
		return this.protections;
	}

	public void setProtections(Map<String, Protection> protections) {
		this.protections = protections;
	}

	public Map<String, String> getPriorities() {
		return this.priorities;
	}

	public void setPriorities(Map<String, String> priorities) {
		this.priorities = priorities;
	}

	public Map<String, String> getApiKeys() {
		return this.apiKeys;
	}

	public void setApiKeys(Map<String, String> apiKeys) {
		this.apiKeys = apiKeys;
	}

	public HeaderStyle getHeaderStyle() {
		return this.headerStyle;
	}

	public void setHeaderStyle(HeaderStyle headerStyle) {
		this.headerStyle = headerStyle;
	}

	public Duration getRedisTimeout() {
		return this.redisTimeout;
	}

	public void setRedisTimeout(Duration redisTimeout) {
		this.redisTimeout = redisTimeout;
	}

	public boolean isShadowMode() {
		return this.shadowMode;
	}

	public void setShadowMode(boolean shadowMode) {
		this.shadowMode = shadowMode;
	}

	public boolean isShadowHeaders() {
		return this.shadowHeaders;
	}

	public void setShadowHeaders(boolean shadowHeaders) {
		this.shadowHeaders = shadowHeaders;
	}

	public DenialLogLevel getDenialLogLevel() {
		return this.denialLogLevel;
	}

	public void setDenialLogLevel(DenialLogLevel denialLogLevel) {
		this.denialLogLevel = denialLogLevel;
	}

	/**
	 * How long one full denial log line per client and endpoint group stands for all its denials.
	 * @return a positive duration, 1 minute by default
	 */
	public Duration getDenialLogInterval() {
		return this.denialLogInterval;
	}

	/**
	 * Set how long one full denial log line per client and endpoint group stands for all its denials.
	 * @param denialLogInterval a positive duration
	 */
	public void setDenialLogInterval(Duration denialLogInterval) {
		this.denialLogInterval = denialLogInterval;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public Fallback getFallback() {
		return this.fallback;
	}

	public OverLimitCache getOverLimitCache() {
		return this.overLimitCache;
	}

	public Leases getLeases() {
		return this.leases;
	}

	public Usage getUsage() {
		return this.usage;
	}

	public Quota getQuota() {
		return this.quota;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public RequestPathCheck.Policy getNonCanonicalPaths() {
		return this.nonCanonicalPaths;
	}

	public void setNonCanonicalPaths(RequestPathCheck.Policy nonCanonicalPaths) {
		this.nonCanonicalPaths = nonCanonicalPaths;
	}

	/**
	 * An upstream protection: the concurrency limit of one upstream in each gateway instance, adaptive (found from
	 * latency) or fixed.
	 */
	public static class Protection {

		/** The default of retry-after. */
		static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

		/** Whether the limit is adaptive (found from the upstream's latency) or fixed (max-in-flight). */
		private ProtectionLimit limit = ProtectionLimit.ADAPTIVE;

		/** How an adaptive limit follows latency: vegas (the default) or gradient (Netflix's Gradient2). Adaptive only. */
		private @Nullable AdaptiveAlgorithm algorithm;

		/** Least adaptive limit, at least 1. Adaptive only; default 4. */
		private @Nullable Integer min;

		/** Largest adaptive limit, at least min. Adaptive only; default 1000. */
		private @Nullable Integer max;

		/** Adaptive limit before the first latency sample, from min to max. Adaptive only; default 20 (within min..max). */
		private @Nullable Integer initial;

		/** Requests in flight to the upstream from this instance, at least 1. Fixed only, and required there. */
		private @Nullable Integer maxInFlight;

		/** Retry-After of a shed request, in whole seconds (at least 1 s; rounded up). */
		private Duration retryAfter = DEFAULT_RETRY_AFTER;

		/** Whether requests that would be shed are forwarded all the same, and only counted (meters, denial log). */
		private boolean shadow;

		public ProtectionLimit getLimit() {
			return this.limit;
		}

		public void setLimit(ProtectionLimit limit) {
			this.limit = limit;
		}

		public @Nullable AdaptiveAlgorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable AdaptiveAlgorithm algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable Integer getMin() {
			return this.min;
		}

		public void setMin(@Nullable Integer min) {
			this.min = min;
		}

		public @Nullable Integer getMax() {
			return this.max;
		}

		public void setMax(@Nullable Integer max) {
			this.max = max;
		}

		public @Nullable Integer getInitial() {
			return this.initial;
		}

		public void setInitial(@Nullable Integer initial) {
			this.initial = initial;
		}

		public @Nullable Integer getMaxInFlight() {
			return this.maxInFlight;
		}

		public void setMaxInFlight(@Nullable Integer maxInFlight) {
			this.maxInFlight = maxInFlight;
		}

		public Duration getRetryAfter() {
			return this.retryAfter;
		}

		public void setRetryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

	}

	/** Whether an upstream protection's limit is found from latency or fixed. */
	public enum ProtectionLimit {

		/** Found from the upstream's latency, between min and max. */
		ADAPTIVE,

		/** A fixed number of requests in flight (max-in-flight). */
		FIXED

	}

	/** A plan (tier) such as free or pro: the limits its clients get. */
	public static class Plan {

		/** Limits applied to every endpoint group the plan does not list under groups. Not empty. */
		private List<Limit> defaultLimits = new ArrayList<>();

		/** Limits per endpoint group, replacing the default list for that group. */
		private Map<String, List<Limit>> groups = new LinkedHashMap<>();

		/**
		 * Time zone of this plan's quota periods (a region such as Europe/Berlin, or a fixed offset such as +03:28),
		 * overriding ratelimit.quota.zone: its clients' days, weeks, months and years start at local midnight there.
		 */
		private @Nullable String quotaZone;

		/**
		 * Priority of this plan's requests in upstream protections: critical, high, normal or low. A route's priority
		 * argument overrides it.
		 */
		private Priority priority = Priority.NORMAL;

		public Priority getPriority() {
			return this.priority;
		}

		public void setPriority(Priority priority) {
			this.priority = priority;
		}

		public @Nullable String getQuotaZone() {
			return this.quotaZone;
		}

		public void setQuotaZone(@Nullable String quotaZone) {
			this.quotaZone = quotaZone;
		}

		/**
		 * Limits applied to every endpoint group the plan does not list under {@code groups}.
		 * @return the default limits, never {@code null}
		 */
		public List<Limit> getDefault() {
			return this.defaultLimits;
		}

		/**
		 * Set the limits applied to every endpoint group the plan does not list under {@code groups}.
		 * @param defaultLimits the default limits
		 */
		public void setDefault(List<Limit> defaultLimits) {
			this.defaultLimits = defaultLimits;
		}

		public Map<String, List<Limit>> getGroups() {
			return this.groups;
		}

		public void setGroups(Map<String, List<Limit>> groups) {
			this.groups = groups;
		}

	}

	/**
	 * One limit. With the default token bucket: a bucket of {@code capacity} tokens that gains {@code refill-tokens}
	 * tokens per {@code refill-period}, continuously (a fraction of a token per fraction of the period). With a window
	 * algorithm: at most {@code capacity} tokens per {@code refill-period} window. With {@code type: concurrency}: at
	 * most {@code max-in-flight} requests of the client in flight at once, across every instance. With
	 * {@code type: quota}: at most {@code limit} tokens per {@code period} of the calendar, reset at its end.
	 */
	public static class Limit {

		/**
		 * What the limit counts: rate (the default: tokens per time, set with capacity, refill-tokens, refill-period
		 * and algorithm) or concurrency (requests in flight at once, set with max-in-flight and
		 * max-request-duration) or quota (tokens per period of the calendar, reset at its end: set with limit and
		 * period). Every kind can share one list: a request must pass every limit, and a denied one takes from none.
		 */
		private Type type = Type.RATE;

		/** Quotas only: most tokens (requests, at cost 1) of the client per period (1 to 2^53). */
		private long limit;

		/**
		 * Quotas only: the period the quota counts in and resets after: day, week, month or year (starting at local
		 * midnight in the plan's quota-zone, else ratelimit.quota.zone), or a fixed duration such as 30s or 12h
		 * (aligned to the Unix epoch, 1s to 36500d).
		 */
		private @Nullable String period;

		public long getLimit() {
			return this.limit;
		}

		public void setLimit(long limit) {
			this.limit = limit;
		}

		public @Nullable String getPeriod() {
			return this.period;
		}

		public void setPeriod(@Nullable String period) {
			this.period = period;
		}

		/**
		 * The most tokens this limit can hold for a request: a rate limit's capacity, a quota's limit (a
		 * concurrency limit: its capacity, 0, as it counts slots).
		 * @return tokens, 0 when not set
		 */
		public long maxTokens() {
			return isQuota() ? this.limit : this.capacity;
		}

		/**
		 * Whether this is a quota.
		 * @return {@code true} for {@code type: quota}
		 */
		public boolean isQuota() {
			return this.type == Type.QUOTA;
		}

		/**
		 * Concurrency limits only: most requests of the client (or, with scope global, of the endpoint group) in
		 * flight at once, across every gateway instance (1 to 1,000,000). A request holds its slot from admission
		 * until its response completes, however it ends.
		 */
		private long maxInFlight;

		/**
		 * Concurrency limits only: the longest a request may hold its slot (1ms to 7d, default 30s). A slot that is
		 * never given back (its gateway instance died) is free again this long after it was taken, and not before;
		 * set it at least as long as the route's response timeout, or a slow request's slot frees while it still
		 * runs.
		 */
		private @Nullable Duration maxRequestDuration;

		/**
		 * Most tokens the bucket holds, i.e. the largest burst (1 to 2^53); for window algorithms, tokens per window
		 * (sliding-window-log: 1 to 1,000,000).
		 */
		private long capacity;

		/**
		 * Tokens added per refill period (1 to 2^53). Window algorithms: leave it out (it is then the capacity) or set
		 * it equal to capacity.
		 */
		private long refillTokens;

		/**
		 * Period over which refill-tokens are added, e.g. 1s, 1m, 15m, 1d (1 ms to 3650 days); for window algorithms,
		 * the window.
		 */
		private @Nullable Duration refillPeriod;

		/** Policy name shown to clients in the rate limit header fields; derived from plan and group when unset. */
		private @Nullable String name;

		/**
		 * How the limit is enforced: token-bucket (continuous refill, bursts up to capacity), sliding-window-log (at
		 * most capacity tokens in any refill-period long window, exact; one Redis entry per admitted token, so
		 * capacity is at most 1,000,000), sliding-window-counter (the same, approximated from two counters) or
		 * fixed-window (at most capacity tokens per refill-period window aligned to the epoch; up to twice that
		 * across a window edge). Window algorithms take capacity tokens per
		 * refill-period: leave refill-tokens out or set it equal to capacity.
		 */
		private Algorithm algorithm = Algorithm.TOKEN_BUCKET;

		/**
		 * Who shares the limit: client (the default: one bucket per client) or global (one bucket shared by every
		 * client of the endpoint group, whatever their plan, to protect the backend). A request must
		 * pass every limit of both scopes and a denied one takes from none; a client denied by its own limits never
		 * takes from the global ones. Plans that give a group global limits must give it the same ones (they are one
		 * shared bucket). Costs a second Redis call per request in groups that have global limits.
		 */
		private LimitScope scope = LimitScope.CLIENT;

		/**
		 * Token leases, token buckets only: off (the default: every request asks Redis) or a precision budget in
		 * percent of the capacity, e.g. 2% (above 0, at most 50%): an instance that sees a client often takes up to
		 * that many tokens ahead in one Redis call and spends them locally for at most ratelimit.leases.duration.
		 * Never admits more than the limit; costs at most about the budget in under-admission per instance while a
		 * lease is out.
		 */
		private @Nullable LeaseBudget lease;

		/**
		 * What a token of this limit stands for: requests (the default: a request takes its route's cost), or a unit
		 * of usage such as tokens or bytes (lower-case letters, digits and '-'): a request then reserves its route's
		 * estimate (the RateLimit filter's reserve) and is charged what its answer used (usage) once the answer is
		 * over. Token buckets, fixed and sliding window counters only; no lease. One usage unit per plan and group.
		 */
		private String unit = LimitDefinition.REQUESTS;

		public String getUnit() {
			return this.unit;
		}

		public void setUnit(String unit) {
			this.unit = unit;
		}

		public Type getType() {
			return this.type;
		}

		public void setType(Type type) {
			this.type = type;
		}

		public long getMaxInFlight() {
			return this.maxInFlight;
		}

		public void setMaxInFlight(long maxInFlight) {
			this.maxInFlight = maxInFlight;
		}

		public @Nullable Duration getMaxRequestDuration() {
			return this.maxRequestDuration;
		}

		public void setMaxRequestDuration(@Nullable Duration maxRequestDuration) {
			this.maxRequestDuration = maxRequestDuration;
		}

		/**
		 * Whether this is a concurrency limit.
		 * @return {@code true} for {@code type: concurrency}
		 */
		public boolean isConcurrency() {
			return this.type == Type.CONCURRENCY;
		}

		public long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(long capacity) {
			this.capacity = capacity;
		}

		public long getRefillTokens() {
			return this.refillTokens;
		}

		public void setRefillTokens(long refillTokens) {
			this.refillTokens = refillTokens;
		}

		public @Nullable Duration getRefillPeriod() {
			return this.refillPeriod;
		}

		public void setRefillPeriod(@Nullable Duration refillPeriod) {
			this.refillPeriod = refillPeriod;
		}

		public @Nullable String getName() {
			return this.name;
		}

		public void setName(@Nullable String name) {
			this.name = name;
		}

		public Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public LimitScope getScope() {
			return this.scope;
		}

		public void setScope(LimitScope scope) {
			this.scope = scope;
		}

		public @Nullable LeaseBudget getLease() {
			return this.lease;
		}

		public void setLease(@Nullable LeaseBudget lease) {
			this.lease = lease;
		}

		/** What a limit counts. */
		public enum Type {

			/** Tokens per time: a token bucket or a window algorithm. */
			RATE,

			/** Requests in flight at once ({@link Algorithm#CONCURRENCY}). */
			CONCURRENCY,

			/** Tokens per period of the calendar, reset at its end ({@link Algorithm#QUOTA}). */
			QUOTA

		}

	}

	/**
	 * Clients identified by their authenticated principal ({@code key-by: principal}): the principal's name (e.g. a
	 * JWT's {@code sub}) is hashed into the client id; its plan comes from a claim or a granted authority (with
	 * Spring Security on the class path), else {@code default-plan}.
	 */
	public static class Principal {

		/**
		 * Name of the token claim (or OAuth2 principal attribute) whose string value names the principal's plan.
		 * Empty to read no claim. Read at start-up.
		 */
		private String planClaim = "plan";

		/**
		 * Prefix of the granted authority naming the principal's plan: with PLAN_, authority PLAN_pro names plan pro
		 * (the first such authority counts; the claim wins over authorities). With Spring Security's JWT defaults,
		 * scopes are authorities SCOPE_ followed by the scope: SCOPE_plan: reads a scope plan:pro. Empty to read no
		 * authority. Read at start-up.
		 */
		private String planAuthorityPrefix = "PLAN_";

		/**
		 * Plan of authenticated principals whose credentials name no plan, or a plan the limits do not define. Must
		 * name a plan; unset, the anonymous plan.
		 */
		private @Nullable String defaultPlan;

		public String getPlanClaim() {
			return this.planClaim;
		}

		public void setPlanClaim(String planClaim) {
			this.planClaim = planClaim;
		}

		public String getPlanAuthorityPrefix() {
			return this.planAuthorityPrefix;
		}

		public void setPlanAuthorityPrefix(String planAuthorityPrefix) {
			this.planAuthorityPrefix = planAuthorityPrefix;
		}

		/**
		 * The plan of principals whose credentials name no configured plan, as configured.
		 * @return the plan name, or {@code null} when unset (then the anonymous plan applies)
		 */
		public @Nullable String getDefaultPlan() {
			return this.defaultPlan;
		}

		/**
		 * Set the plan of principals whose credentials name no configured plan.
		 * @param defaultPlan a plan name, or {@code null} for the anonymous plan
		 */
		public void setDefaultPlan(@Nullable String defaultPlan) {
			this.defaultPlan = defaultPlan;
		}

	}

	/** Settings of one endpoint group. */
	public static class Group {

		/**
		 * Whether the group is critical (login, OTP): when the limiter cannot decide, its requests are refused
		 * (fail closed) instead of let through.
		 */
		private boolean critical;

		/** Whether the group's limits run in shadow mode: computed, counted and logged, never enforced. */
		private boolean shadow;

		public boolean isCritical() {
			return this.critical;
		}

		public void setCritical(boolean critical) {
			this.critical = critical;
		}

		public boolean isShadow() {
			return this.shadow;
		}

		public void setShadow(boolean shadow) {
			this.shadow = shadow;
		}

	}

	/**
	 * Resilience4j circuit breaker settings for the Redis calls (breaker name {@code ratelimit-redis}). When the
	 * application defines a {@code CircuitBreakerRegistry} bean that already holds a breaker of that name, that
	 * breaker and its settings are used instead.
	 */
	public static class CircuitBreaker {

		/** Failure rate, in percent (1 to 100), at or above which the breaker opens. */
		@Percent(fix = "use e.g. 50.")
		private float failureRateThreshold = 50;

		/** Number of most recent calls whose outcome the failure rate is computed over (at least 1). */
		@Min(value = 1, fix = "use e.g. 20.")
		private int slidingWindowSize = 20;

		/** Calls needed before the failure rate is computed (at least 1): the breaker opens after this many failures at the soonest. */
		@Min(value = 1, fix = "use e.g. 5.")
		private int minimumNumberOfCalls = 5;

		/** Time the breaker stays open (no Redis calls at all) before letting trial calls through. */
		@MinDuration(value = "1ms", fix = "use e.g. 5s.")
		private Duration waitDurationInOpenState = Duration.ofSeconds(5);

		/** Trial calls allowed while half-open; if enough succeed the breaker closes (at least 1). */
		@Min(value = 1, fix = "use e.g. 3.")
		private int permittedCallsInHalfOpenState = 3;

		public float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public int getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(int slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public int getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(int minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public int getPermittedCallsInHalfOpenState() {
			return this.permittedCallsInHalfOpenState;
		}

		public void setPermittedCallsInHalfOpenState(int permittedCallsInHalfOpenState) {
			this.permittedCallsInHalfOpenState = permittedCallsInHalfOpenState;
		}

	}

	/** Behaviour of non-critical routes while Redis is unavailable (error, timeout, breaker open). */
	public static class Fallback {

		/** Whether requests are limited locally (local) or simply let through (allow). */
		@Required(fix = "use local or allow.")
		private FallbackMode mode = FallbackMode.LOCAL;

		/**
		 * Expected number of gateway instances (at least 1): each instance's local limiter holds 1/instances of every
		 * limit. Used until the instance count has been learned from Redis.
		 */
		@Min(value = 1, fix = "set the number of gateway instances sharing the limits (e.g. the replica count).")
		private int instances = 1;

		/**
		 * Whether instances announce themselves in Redis (a heartbeat every heartbeat-interval) so that each knows
		 * how many share the limits; the last count seen is kept while Redis is down.
		 */
		private boolean learnInstances = true;

		/** Interval of the instance heartbeat; an instance not heard from for 3 intervals no longer counts. */
		@MinDuration(value = "100ms", fix = "use e.g. 5s.")
		private Duration heartbeatInterval = Duration.ofSeconds(5);

		/** Most client buckets the local limiter keeps in memory (least recently used ones are dropped first). */
		@Min(value = 1, fix = "use e.g. 100000.")
		private long maxBuckets = 100_000;

		public FallbackMode getMode() {
			return this.mode;
		}

		public void setMode(FallbackMode mode) {
			this.mode = mode;
		}

		public int getInstances() {
			return this.instances;
		}

		public void setInstances(int instances) {
			this.instances = instances;
		}

		public boolean isLearnInstances() {
			return this.learnInstances;
		}

		public void setLearnInstances(boolean learnInstances) {
			this.learnInstances = learnInstances;
		}

		public Duration getHeartbeatInterval() {
			return this.heartbeatInterval;
		}

		public void setHeartbeatInterval(Duration heartbeatInterval) {
			this.heartbeatInterval = heartbeatInterval;
		}

		public long getMaxBuckets() {
			return this.maxBuckets;
		}

		public void setMaxBuckets(long maxBuckets) {
			this.maxBuckets = maxBuckets;
		}

	}

	/** Log level of the denial log line. */
	public enum DenialLogLevel {

		/** No denial log line. */
		OFF,

		/** ERROR. */
		ERROR,

		/** WARN. */
		WARN,

		/** INFO. */
		INFO,

		/** DEBUG. */
		DEBUG,

		/** TRACE. */
		TRACE

	}

	/**
	 * The over-limit cache: each instance remembers a denial until its Retry-After and denies the same client's
	 * requests (same group, same cost) locally meanwhile. Exact for token buckets: see
	 * {@code io.github.ratelimit.gateway.chain.OverLimitCache}.
	 */
	public static class OverLimitCache {

		/** Whether denials are remembered until their Retry-After. */
		private boolean enabled = true;

		/** Most denials remembered per instance (at least 1). */
		@Min(value = 1, fix = "use e.g. 100000, or set over-limit-cache.enabled=false.")
		private long maxEntries = 100_000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public long getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(long maxEntries) {
			this.maxEntries = maxEntries;
		}

	}

	/**
	 * Token leases: how long an instance may spend tokens it took ahead from a shared bucket, and how many clients'
	 * leases it keeps. Only limits with a {@code lease} budget take leases.
	 */
	public static class Leases {

		/**
		 * Longest time an instance spends a lease (above 0, at most 10s); unspent tokens then go back to Redis. Longer
		 * leases save more Redis calls for clients that send a few requests per second, and hold their tokens away
		 * from the other instances longer.
		 */
		@PositiveDuration(max = "10s",
				fix = "set a short duration such as 500ms or 1s (unspent leased tokens are held that long).")
		private Duration duration = Duration.ofSeconds(1);

		/** Most clients (per endpoint group) whose lease an instance keeps (at least 1); the least recently used give theirs back. */
		@Min(value = 1, fix = "set how many clients' leases an instance keeps, e.g. 100000.")
		private long maxEntries = 100_000;

		public Duration getDuration() {
			return this.duration;
		}

		public void setDuration(Duration duration) {
			this.duration = duration;
		}

		public long getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(long maxEntries) {
			this.maxEntries = maxEntries;
		}

	}

	/** Routes whose answers decide what a request is charged. */
	public static class Usage {

		/** Least {@code reserve-body-limit}. */
		public static final DataSize MIN_RESERVE_BODY_LIMIT = DataSize.ofKilobytes(1);

		/** Largest {@code reserve-body-limit}. */
		public static final DataSize MAX_RESERVE_BODY_LIMIT = DataSize.ofMegabytes(16);

		/**
		 * Most bytes of a request body read for the request's estimate, on routes with reserve: json:<field> (1KB to
		 * 16MB). The body is held until the request is decided, so each such request holds at most this much; a
		 * field that comes later counts as absent (the request reserves reserve-max), and the body is forwarded
		 * whole either way.
		 */
		private DataSize reserveBodyLimit = DataSize.ofKilobytes(64);

		public DataSize getReserveBodyLimit() {
			return this.reserveBodyLimit;
		}

		public void setReserveBodyLimit(DataSize reserveBodyLimit) {
			this.reserveBodyLimit = reserveBodyLimit;
		}

	}

	/** The calendar of quotas ({@code type: quota}). */
	public static class Quota {

		/**
		 * Time zone of quota periods unless a plan sets its quota-zone: a region such as Europe/Berlin (days of 23 or
		 * 25 hours across daylight-saving changes) or a fixed offset such as +03:28 (default UTC).
		 */
		private String zone = "UTC";

		/** The day a week quota (period: week) starts on, at local midnight (default monday). */
		private DayOfWeek firstDayOfWeek = DayOfWeek.MONDAY;

		public String getZone() {
			return this.zone;
		}

		public void setZone(String zone) {
			this.zone = zone;
		}

		public DayOfWeek getFirstDayOfWeek() {
			return this.firstDayOfWeek;
		}

		public void setFirstDayOfWeek(DayOfWeek firstDayOfWeek) {
			this.firstDayOfWeek = firstDayOfWeek;
		}

	}

	/**
	 * The limiter's Redis client. By default the limiter reaches Redis through a Lettuce client of its own, copied
	 * from the application's connection factory (same Redis, credentials, TLS, timeouts) with the settings the
	 * limiter needs: commands rejected while disconnected, reconnect attempts at most 1 s apart and, on a Cluster,
	 * topology refresh; the application's own client keeps Spring Boot's settings.
	 */
	public static class Redis {

		/** Prefix of these properties. */
		public static final String PREFIX = RateLimitProperties.PREFIX + ".redis";

		/**
		 * Whether the limiter's Lettuce settings (commands rejected while disconnected, reconnect attempts at most
		 * 1 s apart, Cluster topology refresh) are applied to the application's own Redis client too, which the
		 * limiter then shares instead of having one of its own. Off by default: Spring Session, caches, the
		 * application's templates and Gateway's RedisRateLimiter keep Spring Boot's Lettuce settings (commands
		 * queued while disconnected, Lettuce's reconnect delay). Read at start-up.
		 */
		private boolean configureApplicationClient;

		public boolean isConfigureApplicationClient() {
			return this.configureApplicationClient;
		}

		public void setConfigureApplicationClient(boolean configureApplicationClient) {
			this.configureApplicationClient = configureApplicationClient;
		}

	}

}
