package io.github.ratelimit.gateway.mvc;

import java.lang.ref.WeakReference;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.github.ratelimit.gateway.route.RateLimitArguments;

import org.springframework.cloud.gateway.server.mvc.common.Configurable;
import org.springframework.cloud.gateway.server.mvc.common.Shortcut;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The {@code RateLimit} filter of Spring Cloud Gateway Server MVC, in the style of Gateway's own
 * {@code *FilterFunctions}: limits each client of a route's endpoint group across all gateway instances, with the
 * same arguments, limits, headers, problem bodies and failure policy as the WebFlux {@code RateLimit} filter.
 *
 * <p>From Java:
 * <pre>
 * route("search").GET("/api/search/**", http()).before(uri(upstream))
 *     .filter(RateLimitFilterFunctions.rateLimit("search")).build();
 * route("login").POST("/api/login", http()).before(uri(upstream))
 *     .filter(rateLimit(new RateLimitArguments().setGroup("login").setKeyBy(KeyBy.IP).setCritical(true))).build();
 * </pre>
 * From configuration ({@code spring.cloud.gateway.server.webmvc.routes[i].filters}, found through
 * {@link FilterSupplier}, listed in {@code META-INF/spring.factories}):
 * <pre>
 * filters: [ RateLimit=search ]                       # shortcut: the endpoint group
 * filters:
 *   - name: RateLimit
 *     args: { group: login, key-by: ip, cost: 1, critical: true }
 * </pre>
 *
 * The filter finds the front end ({@link ServerMvcFrontEnd}) in the request's application context on its first
 * request. Arguments are checked at start-up: configured routes by {@link ServerMvcRouteValidator} (each problem
 * named after its property), filters built from Java while the context starts by
 * {@link RateLimitFilterFunctionsCheck}. A filter without a
 * group takes its route's id as its group, known on its first request: at start-up it is checked against every
 * rule but that group's limits, which its first request checks.
 */
public final class RateLimitFilterFunctions {

	/**
	 * Filters built but not yet checked against the limits, drained by the check of the context that built them
	 * once it has started; held weakly, so that a filter no context took (built after its start) is not kept alive.
	 */
	static final Queue<WeakReference<RateLimitHandlerFilterFunction>> UNCHECKED = new ConcurrentLinkedQueue<>();

	private RateLimitFilterFunctions() {
	}

	/**
	 * The {@code RateLimit} filter limiting by API key under the group's limits.
	 * @param group the endpoint group, one the {@code ratelimit.*} properties define
	 * @return the filter
	 */
	@Shortcut
	public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(String group) {
		return rateLimit(new RateLimitArguments().setGroup(group));
	}

	/**
	 * The {@code RateLimit} filter with all its arguments: group, key-by, header, cost, critical, shadow.
	 * @param arguments the arguments; copied, so changing them later changes nothing
	 * @return the filter
	 */
	@Shortcut("group")
	@Configurable
	public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(RateLimitArguments arguments) {
		RateLimitHandlerFilterFunction filter = new RateLimitHandlerFilterFunction(arguments);
		UNCHECKED.add(new WeakReference<>(filter));
		return filter;
	}

	/** Makes the {@code RateLimit} filter known to Gateway Server MVC's route configuration. */
	public static class FilterSupplier extends SimpleFilterSupplier {

		/** Create the supplier of the static methods of {@link RateLimitFilterFunctions}. */
		public FilterSupplier() {
			super(RateLimitFilterFunctions.class);
		}

	}

}
