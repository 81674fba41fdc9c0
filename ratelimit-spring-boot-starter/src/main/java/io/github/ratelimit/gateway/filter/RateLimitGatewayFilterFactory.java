package io.github.ratelimit.gateway.filter;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.chain.RateLimitChecker;
import io.github.ratelimit.gateway.chain.RateLimitDecision;
import io.github.ratelimit.gateway.chain.RateLimitRequest;
import io.github.ratelimit.gateway.client.AmbiguousClientException;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.ClientKeyResolver;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.http.RateLimitHeaders;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.http.RateLimitResponseWriter;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.metrics.DenialLog;
import io.github.ratelimit.gateway.metrics.RateLimitMetrics;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.GatewayToStringStyler;
import org.springframework.cloud.gateway.support.HasRouteId;
import org.springframework.core.style.ToStringCreator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@code RateLimit} gateway filter: limits each client of a route's endpoint group across all gateway
 * instances.
 *
 * <pre>
 * filters: [ RateLimit=search ]                       # shortcut: the endpoint group
 * filters:
 *   - name: RateLimit
 *     args: { group: login, key-by: ip, cost: 1, critical: true }
 *   - name: RateLimit
 *     args: { group: tenants, key-by: header, header: X-Tenant-Id }   # also key-by: principal
 * </pre>
 *
 * Allowed requests go upstream with the rate limit header fields; denied ones get 429 with {@code Retry-After}
 * and a problem body, and consume no tokens. When Redis is unavailable the failure policy
 * ({@code FailurePolicyLimiter}) applies: critical routes answer 503 with {@code Retry-After}, others fall back
 * to a local limiter. Every refusal (429, 503, and 400 for a request without client address or with an ambiguous
 * client) is written by the {@link RateLimitResponseWriter}.
 */
public class RateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitGatewayFilterFactory.Config> {

	/** Name of the filter in route definitions. */
	public static final String FILTER_NAME = "RateLimit";

	/** Start of the exchange attributes holding an attempt's slots, by route and group. */
	private static final String ATTEMPT_SLOTS_ATTRIBUTE = RateLimitGatewayFilterFactory.class.getName() + ".slots.";

	private final RateLimitProperties properties;

	private final LimitResolver limitResolver;

	private final ClientKeyResolver clientKeyResolver;

	private final RateLimitChecker checker;

	private final RateLimitMetrics metrics;

	private final RateLimitHeaders headers;

	private final long failClosedRetryAfterSeconds;

	private final DenialLog denialLog;

	private final RateLimitResponseWriter responseWriter;

	private final Map<String, RouteLimitSettings> routes = new ConcurrentHashMap<>();

	private final PrincipalRoutesNotice principalRoutesNotice = new PrincipalRoutesNotice(
			RateLimitGatewayFilterFactory.class.getClassLoader());

	/**
	 * Create the factory.
	 * @param properties the validated {@code ratelimit.*} properties
	 * @param limitResolver finds the limits of a plan in a group
	 * @param clientKeyResolver identifies the client of a request
	 * @param checker the limiter chain (its outermost layer): checks and consumes tokens, applying the failure policy
	 * @param metrics observes decisions
	 * @param responseWriter writes the answers to refused requests
	 */
	public RateLimitGatewayFilterFactory(RateLimitProperties properties, LimitResolver limitResolver,
			ClientKeyResolver clientKeyResolver, RateLimitChecker checker, RateLimitMetrics metrics,
			RateLimitResponseWriter responseWriter) {
		super(Config.class);
		this.properties = properties;
		this.limitResolver = limitResolver;
		this.clientKeyResolver = clientKeyResolver;
		this.checker = checker;
		this.metrics = metrics;
		this.headers = new RateLimitHeaders(properties.getHeaderStyle());
		this.failClosedRetryAfterSeconds = RateLimitHeaders
			.retryAfterSeconds(properties.getCircuitBreaker().getWaitDurationInOpenState().toMillis());
		this.denialLog = new DenialLog(properties.getDenialLogLevel(), properties.getDenialLogInterval());
		this.responseWriter = responseWriter;
	}

	/**
	 * The resolved settings of every route this factory built a filter for, by route id.
	 * @return an unmodifiable snapshot
	 */
	public Map<String, RouteLimitSettings> routeSettings() {
		return Map.copyOf(this.routes);
	}

	@Override
	public String name() {
		return FILTER_NAME;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("group");
	}

	/**
	 * Build the filter of one route.
	 * @param config the route's arguments
	 * @return the filter
	 * @throws RateLimitConfigurationException if the group is unknown, the cost exceeds a capacity, or the
	 * {@code header} argument is missing with {@code key-by: header}, given with another {@code key-by} or no header
	 * name
	 */
	@Override
	public GatewayFilter apply(Config config) {
		KeyBy keyBy = (config.getKeyBy() != null) ? config.getKeyBy() : KeyBy.API_KEY;
		long cost = (config.getCost() != null) ? config.getCost() : 1L;
		// against the limits in force (validated), not the live properties, which a refresh may have made invalid
		List<ConfigurationViolation> violations = RateLimitRouteValidator.validateFilter(
				this.limitResolver.effectiveProperties(), config.getRouteId(), config.getGroup(), keyBy,
				config.getHeader(), cost);
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		String group = (config.getGroup() != null && !config.getGroup().isBlank()) ? config.getGroup()
				: config.getRouteId();
		boolean critical = (config.getCritical() != null) ? config.getCritical()
				: this.limitResolver.isCriticalGroup(group);
		boolean shadow = (config.getShadow() != null) ? config.getShadow() : this.limitResolver.isShadowGroup(group);
		String routeId = (config.getRouteId() != null) ? config.getRouteId() : group;
		String header = (keyBy == KeyBy.HEADER) ? config.getHeader().strip() : null;
		RouteLimitSettings settings = new RouteLimitSettings(routeId, group, keyBy, header, cost, critical, shadow);
		this.routes.put(routeId, settings);
		if (keyBy == KeyBy.PRINCIPAL) {
			this.principalRoutesNotice.keyedByPrincipal(routeId);
		}
		return new RateLimitFilter(settings);
	}

	/**
	 * The request path, one way: client key (plan decided by the resolver) -> limits -> the limiter chain ->
	 * decision -> metrics and denial log -> HTTP.
	 */
	private Mono<Void> limit(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route) {
		releaseEarlierAttempt(exchange, route);
		return this.clientKeyResolver.resolve(exchange, route.keyBy(), route.header())
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((client) -> client.isPresent() ? check(exchange, chain, route, client.get())
					: this.responseWriter.write(exchange, RateLimitRefusal.clientUnidentified()))
			.onErrorResume(AmbiguousClientException.class,
					(ex) -> this.responseWriter.write(exchange, RateLimitRefusal.ambiguousClient(ex.getMessage())));
	}

	private Mono<Void> check(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route,
			ClientKey client) {
		PlanLimits limits = this.limitResolver.limitsFor(client.plan(), route.group());
		RateLimitRequest request = new RateLimitRequest(client, limits, route.cost(), route.failsClosed());
		return Decisions.onRequestThread(this.checker.check(request), exchange).flatMap((decision) -> {
			this.metrics.recordDecision(route.routeId(), route.group(), decision, route.shadow());
			if (!decision.allowed()) {
				this.denialLog.denied(client, route.routeId(), route.group(), decision, route.shadow());
			}
			return enforce(exchange, chain, decision, route);
		});
	}

	private Mono<Void> enforce(ServerWebExchange exchange, GatewayFilterChain chain, RateLimitDecision decision,
			RouteLimitSettings route) {
		ServerHttpResponse response = exchange.getResponse();
		if (route.shadow()) {
			if (this.properties.isShadowHeaders()) {
				this.headers.write(decision, response.getHeaders());
			}
			return proceed(exchange, chain, decision, route);
		}
		this.headers.write(decision, response.getHeaders());
		if (decision.allowed()) {
			return proceed(exchange, chain, decision, route);
		}
		if (decision.isFailedClosed()) {
			return this.responseWriter.write(exchange,
					RateLimitRefusal.limiterUnavailable(decision, this.failClosedRetryAfterSeconds));
		}
		long retryAfter = RateLimitHeaders.retryAfterSeconds(decision.retryAfterMillis());
		return this.responseWriter.write(exchange, RateLimitRefusal.quotaExceeded(decision, retryAfter));
	}

	/**
	 * The rest of the chain for an admitted request; the concurrency slots it holds are given back once the exchange
	 * is over, however it ends: the response written, an error (upstream refused or timed out), or a cancellation
	 * (the client closed the connection). The {@link SlotReleaseWebFilter} does it; without it (a bean replaced), the
	 * end of this filter's chain does, which for a streamed body is when the upstream's response headers arrived.
	 */
	private Mono<Void> proceed(ServerWebExchange exchange, GatewayFilterChain chain, RateLimitDecision decision,
			RouteLimitSettings route) {
		HeldSlots slots = decision.slots();
		if (slots == HeldSlots.NONE) {
			return chain.filter(exchange);
		}
		Runnable counted = this.metrics.recordInFlight(route.group());
		HeldSlots release = HeldSlots.once(() -> {
			try {
				slots.release();
			}
			finally {
				counted.run();
			}
		});
		// a Retry filter before this one runs it again per attempt: that attempt's slots go back first (see limit)
		exchange.getAttributes().put(attemptSlotsAttribute(route), release);
		if (SlotReleaseWebFilter.releaseWhenDone(exchange, release)) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange).doFinally((signal) -> release.release());
	}

	/** The exchange attribute holding the slots this route's filter took for the exchange's latest attempt. */
	private static String attemptSlotsAttribute(RouteLimitSettings route) {
		return ATTEMPT_SLOTS_ATTRIBUTE + route.routeId() + '|' + route.group();
	}

	/**
	 * Give back the slots an earlier attempt of this exchange took in this route's limits (a {@code Retry} filter
	 * in front runs this filter once per attempt; the earlier attempt is over), so that a retry does not count
	 * against itself.
	 */
	private static void releaseEarlierAttempt(ServerWebExchange exchange, RouteLimitSettings route) {
		if (!SlotReleaseWebFilter.mayHoldSlots(exchange)) {
			return; // the usual case: no attempt of this exchange took a slot (no key is built)
		}
		HeldSlots earlier = exchange.getAttributes().remove(attemptSlotsAttribute(route)) instanceof HeldSlots held
				? held : null;
		if (earlier != null) {
			earlier.release();
		}
	}

	/**
	 * The resolved rate limit settings of one route.
	 *
	 * @param routeId the route id
	 * @param group the endpoint group (the route id when the route names none)
	 * @param keyBy what identifies the client
	 * @param header the request header identifying the client with {@link KeyBy#HEADER}, else {@code null}
	 * @param cost tokens per request
	 * @param critical whether the route fails closed when the limiter is unavailable
	 * @param shadow whether decisions are only observed, never enforced
	 */
	public record RouteLimitSettings(String routeId, String group, KeyBy keyBy, @Nullable String header, long cost,
			boolean critical, boolean shadow) {

		/**
		 * Whether the route's requests are refused while the limiter is unavailable: critical routes that enforce
		 * (a shadow route only observes, so it never refuses, and falls back like any other).
		 * @return {@code critical && !shadow}
		 */
		public boolean failsClosed() {
			return this.critical && !this.shadow;
		}

	}

	/** The filter of one route, with its resolved settings. */
	private final class RateLimitFilter implements GatewayFilter {

		private final RouteLimitSettings settings;

		RateLimitFilter(RouteLimitSettings settings) {
			this.settings = settings;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			return limit(exchange, chain, this.settings);
		}

		@Override
		public String toString() {
			ToStringCreator creator = GatewayToStringStyler.filterToStringCreator(RateLimitGatewayFilterFactory.this)
				.append("group", this.settings.group())
				.append("keyBy", this.settings.keyBy());
			if (this.settings.header() != null) {
				creator.append("header", this.settings.header());
			}
			return creator.append("cost", this.settings.cost())
				.append("critical", this.settings.critical())
				.append("shadow", this.settings.shadow())
				.toString();
		}

	}

	/** Arguments of the {@code RateLimit} filter on one route. */
	public static class Config implements HasRouteId {

		private String group;

		private KeyBy keyBy;

		private String header;

		private Long cost;

		private Boolean critical;

		private Boolean shadow;

		private String routeId;

		/**
		 * The endpoint group whose limits apply; {@code null} to use the route id.
		 * @return the group name or {@code null}
		 */
		public String getGroup() {
			return this.group;
		}

		/**
		 * Set the endpoint group.
		 * @param group a group known to the configuration
		 * @return this config
		 */
		public Config setGroup(String group) {
			this.group = group;
			return this;
		}

		/**
		 * What identifies the client; {@code null} means {@link KeyBy#API_KEY}.
		 * @return the key-by setting or {@code null}
		 */
		public KeyBy getKeyBy() {
			return this.keyBy;
		}

		/**
		 * Set what identifies the client.
		 * @param keyBy api-key, ip, principal or header
		 * @return this config
		 */
		public Config setKeyBy(KeyBy keyBy) {
			this.keyBy = keyBy;
			return this;
		}

		/**
		 * The request header whose value identifies the client; required with {@link KeyBy#HEADER}, refused
		 * otherwise.
		 * @return the header's name or {@code null}
		 */
		public String getHeader() {
			return this.header;
		}

		/**
		 * Set the request header whose value identifies the client ({@code key-by: header}).
		 * @param header a header field name, e.g. {@code X-Tenant-Id}
		 * @return this config
		 */
		public Config setHeader(String header) {
			this.header = header;
			return this;
		}

		/**
		 * Tokens one request takes; {@code null} means 1.
		 * @return the cost in tokens or {@code null}
		 */
		public Long getCost() {
			return this.cost;
		}

		/**
		 * Set the tokens one request takes.
		 * @param cost 1 to the smallest capacity of the limits that apply
		 * @return this config
		 */
		public Config setCost(Long cost) {
			this.cost = cost;
			return this;
		}

		/**
		 * Whether the route fails closed when the limiter is unavailable; {@code null} takes the group's setting.
		 * @return the critical flag or {@code null}
		 */
		public Boolean getCritical() {
			return this.critical;
		}

		/**
		 * Set whether the route fails closed.
		 * @param critical the flag
		 * @return this config
		 */
		public Config setCritical(Boolean critical) {
			this.critical = critical;
			return this;
		}

		/**
		 * Whether the route's decisions are only observed, never enforced; {@code null} takes the group's setting.
		 * @return the shadow flag or {@code null}
		 */
		public Boolean getShadow() {
			return this.shadow;
		}

		/**
		 * Set whether the route runs in shadow mode.
		 * @param shadow the flag
		 * @return this config
		 */
		public Config setShadow(Boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		@Override
		public String getRouteId() {
			return this.routeId;
		}

		@Override
		public void setRouteId(String routeId) {
			this.routeId = routeId;
		}

	}

}
