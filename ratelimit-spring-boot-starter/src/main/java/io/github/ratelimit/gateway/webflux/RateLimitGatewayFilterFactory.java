package io.github.ratelimit.gateway.webflux;

import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.ratelimit.gateway.chain.HeldSlots;
import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.protection.UpstreamPermit;
import io.github.ratelimit.gateway.route.AttemptSlots;
import io.github.ratelimit.gateway.route.RateLimitArguments;
import io.github.ratelimit.gateway.route.RateLimitHandler;
import io.github.ratelimit.gateway.route.RateLimitOutcome;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteUsage;
import io.github.ratelimit.gateway.route.UsageMeter;
import io.github.ratelimit.gateway.usage.JsonFieldReader;
import io.github.ratelimit.gateway.usage.UsageReading;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.GatewayToStringStyler;
import org.springframework.cloud.gateway.support.HasRouteId;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.style.ToStringCreator;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
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
 * Allowed requests go upstream with the rate limit header fields; refused ones (429 denied, 503 limiter unavailable
 * on a route that fails closed, 400 client not identified or ambiguous) get the same fields, where the outcome has
 * them, and the {@link RateLimitResponseWriter}'s answer. The {@link RateLimitHandler} decides; this filter adapts
 * its future once and writes HTTP.
 */
public class RateLimitGatewayFilterFactory extends AbstractGatewayFilterFactory<RateLimitGatewayFilterFactory.Config> {

	/** Name of the filter in route definitions. */
	public static final String FILTER_NAME = "RateLimit";

	private final RateLimitHandler handler;

	private final RateLimitRoutes routes;

	private final RateLimitResponseWriter responseWriter;

	private final long reserveBodyLimit;

	/**
	 * Create the factory; logs a WARN when the Reactor Netty on the class path can leave a request on a keep-alive
	 * connection unanswered (before 1.3.8, see {@code src/docs/reports/keep-alive-report.md}).
	 * @param handler decides each request
	 * @param routes resolves and checks each route's arguments
	 * @param responseWriter writes the answers to refused requests
	 * @param reserveBodyLimit most bytes of a request body read for its estimate ({@code reserve: json:<field>};
	 * {@code ratelimit.usage.reserve-body-limit})
	 */
	public RateLimitGatewayFilterFactory(RateLimitHandler handler, RateLimitRoutes routes,
			RateLimitResponseWriter responseWriter, long reserveBodyLimit) {
		super(Config.class);
		ReactorNettyVersionCheck.warnIfAffected();
		this.handler = handler;
		this.routes = routes;
		this.responseWriter = responseWriter;
		this.reserveBodyLimit = reserveBodyLimit;
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
	 * name (see {@link RateLimitRoutes#settings})
	 */
	@Override
	public GatewayFilter apply(Config config) {
		return new RateLimitFilter(this.routes.settings(config.getRouteId(), config));
	}

	/** One request: the principal where the route limits by it -> the handler's outcome -> HTTP. */
	private Mono<Void> limit(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route) {
		if (SlotReleaseWebFilter.mayHoldSlots(exchange)) { // an earlier attempt of this exchange (Retry) took slots
			AttemptSlots.endPrevious(attributes(exchange), route,
					() -> UpstreamRequestGlobalFilter.sentAndUnanswered(exchange));
		}
		if (!(route.usage().reserve() instanceof RouteUsage.Reserve.Json estimate)) {
			return limit(exchange, chain, route, null);
		}
		// the estimate is in the body: read it (up to the limit), decide, then forward the whole body
		JsonFieldReader reader = new JsonFieldReader(estimate.field());
		return HeldRequestBody.read(exchange.getRequest().getBody(), this.reserveBodyLimit, reader::feed)
			.flatMap((held) -> {
				if (held.complete()) {
					reader.end();
				}
				ServerWebExchange forwarded = exchange.mutate()
					.request(new ServerHttpRequestDecorator(exchange.getRequest()) {
						@Override
						public Flux<DataBuffer> getBody() {
							return held.body();
						}
					})
					.build();
				return limit(forwarded, chain, route, reader.reading()).doFinally((signal) -> held.release());
			});
	}

	private Mono<Void> limit(ServerWebExchange exchange, GatewayFilterChain chain, RouteLimitSettings route,
			@Nullable UsageReading estimate) {
		Mono<RateLimitOutcome> outcome = (route.keyBy() != KeyBy.PRINCIPAL) ? decide(exchange, route, null, estimate)
				: exchange.getPrincipal()
					.map(Optional::of)
					.defaultIfEmpty(Optional.empty())
					.flatMap((principal) -> decide(exchange, route, principal.orElse(null), estimate));
		return outcome.flatMap((decided) -> {
			decided.writeHeaders(exchange.getResponse().getHeaders());
			RateLimitRefusal refusal = decided.refusal();
			return (refusal == null) ? proceed(exchange, chain, decided, route)
					: this.responseWriter.write(exchange, refusal);
		});
	}

	private Mono<RateLimitOutcome> decide(ServerWebExchange exchange, RouteLimitSettings route,
			@Nullable Principal principal, @Nullable UsageReading estimate) {
		return Outcomes.toMono(this.handler.handle(new ExchangeClientRequest(exchange, principal), route,
				Outcomes.requestThread(exchange), estimate));
	}

	/**
	 * The rest of the chain for an admitted request, its answer shown to the outcome's {@link UsageMeter} (when the
	 * route settles what it reserved) by the {@link UsageMeteringGlobalFilter}, which ends it once the exchange is
	 * over; without that filter (a bean replaced) the meter ends when this filter's chain does, having seen the
	 * answer's status and header fields but not its body.
	 */
	private Mono<Void> proceed(ServerWebExchange exchange, GatewayFilterChain chain, RateLimitOutcome decided,
			RouteLimitSettings route) {
		UpstreamPermit permit = decided.permit();
		if (permit != UpstreamPermit.NONE) { // its latency: to the answer's header fields (or the gateway's error)
			exchange.getResponse().beforeCommit(() -> {
				HttpStatusCode status = exchange.getResponse().getStatusCode();
				permit.answered((status != null) ? status.value() : 200);
				return Mono.empty();
			});
		}
		UsageMeter meter = decided.meter();
		if (!meter.isActive()) {
			return proceed(exchange, chain, decided.slots(), route);
		}
		if (exchange.getAttribute(UsageMeteringResponse.ATTRIBUTE) instanceof UsageMeteringResponse metering) {
			metering.meter(meter);
			return proceed(exchange, chain, decided.slots(), route);
		}
		return proceed(exchange, chain, decided.slots(), route).doFinally((signal) -> {
			HttpStatusCode status = exchange.getResponse().getStatusCode();
			if (status != null && exchange.getAttribute(ServerWebExchangeUtils.CLIENT_RESPONSE_ATTR) != null) {
				HttpHeaders headers = exchange.getResponse().getHeaders();
				meter.answer(status.value(), headers, headers.getFirst(HttpHeaders.CONTENT_TYPE));
			}
			meter.end(signal == SignalType.ON_COMPLETE);
		});
	}

	/**
	 * The rest of the chain for an admitted request; the concurrency slots it holds are ended once the exchange is
	 * over, however it ends: by the {@link SlotReleaseWebFilter}, or without it (a bean replaced) given back when this
	 * filter's chain ends, which for a streamed body is when the upstream's response headers arrived.
	 */
	private Mono<Void> proceed(ServerWebExchange exchange, GatewayFilterChain chain, HeldSlots slots,
			RouteLimitSettings route) {
		if (slots == HeldSlots.NONE) {
			return chain.filter(exchange);
		}
		AttemptSlots.remember(attributes(exchange), route, slots);
		if (SlotReleaseWebFilter.releaseWhenDone(exchange, slots)) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange).doFinally((signal) -> slots.release());
	}

	private static AttemptSlots.Attributes attributes(ServerWebExchange exchange) {
		Map<String, Object> attributes = exchange.getAttributes();
		return new AttemptSlots.Attributes() {

			@Override
			public @Nullable Object remove(String name) {
				return attributes.remove(name);
			}

			@Override
			public void put(String name, Object value) {
				attributes.put(name, value);
			}

		};
	}

	/** The filter of one route, with its resolved settings. */
	final class RateLimitFilter implements GatewayFilter {

		private final RouteLimitSettings settings;

		RateLimitFilter(RouteLimitSettings settings) {
			this.settings = settings;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			return limit(exchange, chain, this.settings);
		}

		/** Whether the route's answers settle what a request reserved ({@code usage} or {@code count-when}). */
		boolean settles() {
			return this.settings.usage().settles();
		}

		/**
		 * Whether the upstream's answer decides the charge beyond the bytes sent ({@code count-when}, or a
		 * {@code usage} read from a header field or the body), so that a client gone must not stop the call.
		 */
		boolean settlesByAnswer() {
			RouteUsage usage = this.settings.usage();
			return usage.countWhen() != null || usage.usage() instanceof RouteUsage.Measure.Json
					|| usage.usage() instanceof RouteUsage.Measure.Header;
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

		private @Nullable String routeId;

		@Override
		public @Nullable String getRouteId() {
			return this.routeId;
		}

		@Override
		public void setRouteId(@Nullable String routeId) {
			this.routeId = routeId;
		}

	}

}
