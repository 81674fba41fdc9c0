package io.github.ratelimit.gateway.mvc;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitConfigurationException;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;

/**
 * Checks, once the application context has started, the {@code RateLimit} filters built from Java
 * ({@link RateLimitFilterFunctions}) while it started, and makes the configured routes known to the limiter. A filter
 * naming a group is checked against the limits; one without a group takes its route's id as its group, known on its
 * first request: it is checked here against every rule but that group's limits. With the starter switched off
 * ({@code ratelimit.enabled=false}, {@link #disabled()}) one WARN names the filters, which let every request pass.
 */
public final class RateLimitFilterFunctionsCheck implements SmartInitializingSingleton, ApplicationContextAware {

	private static final Logger logger = LoggerFactory.getLogger(RateLimitFilterFunctionsCheck.class);

	private final @Nullable RateLimitRoutes routes;

	private final @Nullable ServerMvcRouteValidator configuredRoutes;

	/** When this check's application context started, in milliseconds since the epoch; 0 when unknown. */
	private long contextStartedAt;

	/**
	 * Create the check.
	 * @param routes resolves and checks the routes' arguments
	 * @param configuredRoutes knows the {@code RateLimit} filters of the configured routes; {@code null} for none
	 */
	public RateLimitFilterFunctionsCheck(RateLimitRoutes routes, @Nullable ServerMvcRouteValidator configuredRoutes) {
		this.routes = routes;
		this.configuredRoutes = configuredRoutes;
	}

	private RateLimitFilterFunctionsCheck() {
		this.routes = null;
		this.configuredRoutes = null;
	}

	/**
	 * The check with the starter switched off: names the filters that let every request pass.
	 * @return the check
	 */
	public static RateLimitFilterFunctionsCheck disabled() {
		return new RateLimitFilterFunctionsCheck();
	}

	/**
	 * Check the filters built while the context started, or, switched off, say which filters let every request
	 * pass; then make the configured routes known to the limiter (Java routes become known on their first request,
	 * when their id is).
	 * @throws RateLimitConfigurationException naming every filter whose arguments do not fit the limits
	 */
	@Override
	public void afterSingletonsInstantiated() {
		List<RateLimitHandlerFilterFunction> built = builtWhileStarting();
		RateLimitRoutes routes = this.routes;
		if (routes == null) {
			if (!built.isEmpty()) {
				logger.warn("ratelimit.enabled=false: {} RateLimit filter(s) let every request pass: {}", built.size(),
						built);
			}
			return;
		}
		List<ConfigurationViolation> violations = new ArrayList<>();
		for (RateLimitHandlerFilterFunction filter : built) {
			// without a group, the route's id is the group; not known yet: every rule but that group's limits
			// (checked against the plans' default limits here, against the group's on the first request)
			violations.addAll(routes.violations(filter.toString(), filter.arguments()));
		}
		if (!violations.isEmpty()) {
			throw new RateLimitConfigurationException(violations);
		}
		if (this.configuredRoutes != null) {
			this.configuredRoutes.configuredFilters().forEach(routes::settings);
		}
	}

	/** The filters built while this context started, taken from the queue; other contexts' stay in it. */
	private List<RateLimitHandlerFilterFunction> builtWhileStarting() {
		List<RateLimitHandlerFilterFunction> built = new ArrayList<>();
		List<WeakReference<RateLimitHandlerFilterFunction>> others = new ArrayList<>();
		for (WeakReference<RateLimitHandlerFilterFunction> entry; (entry = RateLimitFilterFunctions.UNCHECKED
			.poll()) != null;) {
			RateLimitHandlerFilterFunction filter = entry.get();
			if (filter == null || filter.builtAt() < this.contextStartedAt) {
				continue; // gone, or left over by an earlier context of this JVM that failed to start
			}
			if (filter.builtBy() == Thread.currentThread()) {
				built.add(filter); // built while this context started, on the thread that starts it
			}
			else {
				others.add(entry); // another context's, starting at the same time
			}
		}
		RateLimitFilterFunctions.UNCHECKED.addAll(others);
		return built;
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.contextStartedAt = applicationContext.getStartupDate();
	}

	@Override
	public String toString() {
		return "RateLimitFilterFunctionsCheck[" + ((this.routes != null) ? this.routes : "disabled") + "]";
	}

}
