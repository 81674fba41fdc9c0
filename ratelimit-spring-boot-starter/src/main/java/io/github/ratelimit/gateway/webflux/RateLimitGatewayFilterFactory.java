package io.github.ratelimit.gateway.webflux;

import java.security.Principal;
import java.util.List;
import java.util.Optional;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteOutcome;
import io.github.ratelimit.gateway.route.RouteRateLimiter;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.GatewayToStringStyler;
import org.springframework.cloud.gateway.support.HasRouteId;
import org.springframework.core.style.ToStringCreator;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@code RateLimit} gateway filter of the WebFlux server: limits each client of a route's endpoint group across
 * all gateway instances.
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
 * to a local limiter. The request path itself is the {@link RouteRateLimiter}'s, shared with the Server MVC front
 * end; this filter adapts its future once and writes HTTP. Every refusal (429, 503, and 400 for a request without
 * client address or with an ambiguous client) is written by the {@link RateLimitResponseWriter}.
 */
public class RateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitGatewayFilterFactory.Config> {

	/** Name of the filter in route definitions. */
	public static final String FILTER_NAME = "RateLimit";

	/** Start of the exchange attributes holding an attempt's slots, by route and group. */
	private static final String ATTEMPT_SLOTS_ATTRIBUTE = RateLimitGatewayFilterFactory.class.getName() + ".slots.";

	private static final Mono<Optional<Principal>> NO_PRINCIPAL = Mono.just(Optional.empty());

	private final RouteRateLimiter limiter;

	private final RateLimitResponseWriter responseWriter;

	/**
	 * Create the factory; logs a WARN when the Reactor Netty on the class path can leave a request on a keep-alive
	 * connection unanswered (before 1.3.8, see {@code src/docs/keep-alive-report.md}).
	 * @param limiter the request path shared by the front ends
	 * @param responseWriter writes the answers to refused requests
	 */
	public RateLimitGatewayFilterFactory(RouteRateLimiter limiter, RateLimitResponseWriter responseWriter) {
		super(Config.class);
		ReactorNettyVersionCheck.warnIfAffected();
		this.limiter = limiter;
		this.responseWriter = responseWriter;
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
	 * name (see {@link RouteRateLimiter#settings})
	 */
	@Override
	public GatewayFilter apply(Config config) {
		return new RateLimitFilter(this.limiter.settings(config.getRouteId(), config));
	}

	/** The request path: client key -> the limiter chain (its future adapted once) -> outcome -> HTTP. */
	private Mono<Void> limit(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route) {
		releaseEarlierAttempt(exchange, route);
		Mono<Optional<Principal>> principal = (route.keyBy() == KeyBy.PRINCIPAL)
				? exchange.getPrincipal().map(Optional::of).defaultIfEmpty(Optional.empty()) : NO_PRINCIPAL;
		return principal
			.flatMap((known) -> Mono.fromCompletionStage(
					this.limiter.client(new ExchangeClientRequest(exchange, known.orElse(null)), route)))
			.flatMap((client) -> {
				if (client.isIdentified()) {
					return check(exchange, chain, route, client.client());
				}
				return this.responseWriter.write(exchange, client.isAmbiguous()
						? RateLimitRefusal.ambiguousClient(client.ambiguity()) : RateLimitRefusal.clientUnidentified());
			});
	}

	private Mono<Void> check(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route,
			ClientKey client) {
		return Decisions.onRequestThread(this.limiter.check(client, route), exchange).flatMap((decision) -> {
			RouteOutcome outcome = this.limiter.enforce(client, route, decision);
			this.limiter.writeHeaders(outcome, exchange.getResponse().getHeaders());
			return outcome.admitted() ? proceed(exchange, chain, outcome, route)
					: this.responseWriter.write(exchange, outcome.refusal());
		});
	}

	/**
	 * The rest of the chain for an admitted request; the concurrency slots it holds are given back once the exchange
	 * is over, however it ends: the response written, an error (upstream refused or timed out), or a cancellation
	 * (the client closed the connection). The {@link SlotReleaseWebFilter} does it; without it (a bean replaced), the
	 * end of this filter's chain does, which for a streamed body is when the upstream's response headers arrived.
	 */
	private Mono<Void> proceed(ServerWebExchange exchange, GatewayFilterChain chain, RouteOutcome outcome,
			RouteLimitSettings route) {
		HeldSlots release = this.limiter.hold(route, outcome);
		if (release == HeldSlots.NONE) {
			return chain.filter(exchange);
		}
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
	 * End the slots an earlier attempt of this exchange took in this route's limits (a {@code Retry} filter in front
	 * runs this filter once per attempt): given back when the upstream answered that attempt or never got it, so that
	 * a retry does not count against itself; kept until they expire when it was sent and not answered (a timeout),
	 * since the upstream may still be working on it, so the retry needs a slot of its own.
	 */
	private static void releaseEarlierAttempt(ServerWebExchange exchange, RouteLimitSettings route) {
		if (!SlotReleaseWebFilter.mayHoldSlots(exchange)) {
			return; // the usual case: no attempt of this exchange took a slot (no key is built)
		}
		HeldSlots earlier = exchange.getAttributes().remove(attemptSlotsAttribute(route)) instanceof HeldSlots held
				? held : null;
		if (earlier == null) {
			return;
		}
		if (UpstreamRequestGlobalFilter.sentAndUnanswered(exchange)) {
			earlier.keep();
		}
		else {
			earlier.release();
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

	/** Arguments of the {@code RateLimit} filter on one route, with the route's id. */
	public static class Config extends RateLimitArguments implements HasRouteId {

		private String routeId;

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
