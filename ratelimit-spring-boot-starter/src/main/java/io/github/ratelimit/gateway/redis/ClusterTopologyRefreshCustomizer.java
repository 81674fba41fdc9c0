package io.github.ratelimit.gateway.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindResult;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Turns on Lettuce's Redis Cluster topology refresh where the application left it off, so that failover,
 * resharding and MOVED/ASK redirections are followed without a restart. Spring Boot leaves both refresh kinds off
 * unless {@code spring.data.redis.lettuce.cluster.refresh.period} / {@code .adaptive} are set.
 *
 * <p>Applied to the limiter's own Cluster client ({@link LimiterConnectionFactory}); only with
 * {@code ratelimit.redis.configure-application-client=true} is it also a bean customising the application's client,
 * as a {@link LettuceClientOptionsBuilderCustomizer}. Only touches cluster clients
 * ({@link ClusterClientOptions.Builder}); settings the application made explicitly under
 * {@code spring.data.redis.lettuce.cluster.refresh.*} are kept ({@link #fromBootProperties(Environment)}): a
 * configured period is used as is, and an explicit {@code adaptive} (true or false) wins. As a bean it runs first
 * among the customizers, so an application's own {@link LettuceClientOptionsBuilderCustomizer} that sets topology
 * refresh options has the last word on the application's client.
 */
public class ClusterTopologyRefreshCustomizer implements LettuceClientOptionsBuilderCustomizer, Ordered {

	/** Periodic refresh used when the application sets no period. */
	public static final Duration DEFAULT_PERIOD = Duration.ofSeconds(10);

	/**
	 * Least time between two refreshes triggered by events (MOVED, ASK, persistent reconnects, uncovered slot,
	 * unknown node).
	 */
	public static final Duration DEFAULT_ADAPTIVE_TIMEOUT = Duration.ofSeconds(2);

	private static final String REFRESH = "spring.data.redis.lettuce.cluster.refresh";

	private final @Nullable Duration period;

	private final boolean adaptive;

	private final boolean dynamicRefreshSources;

	/**
	 * Create a customizer.
	 * @param period periodic refresh interval, {@code null} for none
	 * @param adaptive whether event-triggered (adaptive) refresh is on
	 * @param dynamicRefreshSources whether every known node is asked for the topology (not only the seed nodes)
	 */
	public ClusterTopologyRefreshCustomizer(@Nullable Duration period, boolean adaptive, boolean dynamicRefreshSources) {
		this.period = period;
		this.adaptive = adaptive;
		this.dynamicRefreshSources = dynamicRefreshSources;
	}

	/**
	 * The limiter's refresh settings with Spring Boot's {@code spring.data.redis.lettuce.cluster.refresh.*}
	 * properties where the application set them: {@code period} (default {@link #DEFAULT_PERIOD}), {@code adaptive}
	 * (default true, at most every {@link #DEFAULT_ADAPTIVE_TIMEOUT}), {@code dynamic-refresh-sources} (default true,
	 * as Boot's).
	 * @param environment the application's environment
	 * @return the customizer
	 */
	public static ClusterTopologyRefreshCustomizer fromBootProperties(Environment environment) {
		Binder binder = Binder.get(environment);
		BindResult<Duration> period = binder.bind(REFRESH + ".period", Duration.class);
		BindResult<Boolean> adaptive = binder.bind(REFRESH + ".adaptive", Boolean.class);
		// orElseGet, not orElse: BindResult declares orElse's answer @Nullable (it is its argument when unbound)
		boolean dynamicSources = binder.bind(REFRESH + ".dynamic-refresh-sources", Boolean.class)
			.orElseGet(() -> true);
		return new ClusterTopologyRefreshCustomizer(period.orElseGet(() -> DEFAULT_PERIOD),
				adaptive.orElseGet(() -> true), dynamicSources);
	}

	@Override
	public void customize(ClientOptions.Builder builder) {
		if (builder instanceof ClusterClientOptions.Builder cluster) {
			cluster.topologyRefreshOptions(refreshOptions());
		}
	}

	/**
	 * The refresh options set on cluster clients.
	 * @return the options
	 */
	public ClusterTopologyRefreshOptions refreshOptions() {
		ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder()
			.dynamicRefreshSources(this.dynamicRefreshSources);
		if (this.period != null) {
			refresh.enablePeriodicRefresh(this.period);
		}
		if (this.adaptive) {
			refresh.enableAllAdaptiveRefreshTriggers().adaptiveRefreshTriggersTimeout(DEFAULT_ADAPTIVE_TIMEOUT);
		}
		return refresh.build();
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public String toString() {
		return "ClusterTopologyRefreshCustomizer[period " + this.period + ", adaptive " + this.adaptive
				+ ((this.adaptive) ? " (at most every " + DEFAULT_ADAPTIVE_TIMEOUT + ")" : "") + ", dynamic sources "
				+ this.dynamicRefreshSources + "]";
	}

}
