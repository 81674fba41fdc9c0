package io.github.ratelimit.sample.support;

import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Starts the sample's demo upstream ({@link #start()}) before the context is refreshed when no real upstream is
 * configured, and points the routes at it.
 *
 * <p>A sample registers its subclass in {@code META-INF/spring.factories}, so it runs for
 * {@code SpringApplication.run(..)} and for {@code @SpringBootTest} alike. When {@value #PROPERTY} (in
 * {@code application.yml} bound to the environment variable {@code UPSTREAM_URI}) has a value, the routes go there
 * and nothing is started. Otherwise the server is started on {@code 127.0.0.1} and a free port, a property source
 * {@value #PROPERTY_SOURCE} setting {@value #PROPERTY} to its address is added in front of all others, and the
 * server is registered as the disposable singleton {@value #BEAN_NAME}, so it stops when the context closes (or its
 * refresh fails).
 */
public abstract class AbstractDemoUpstreamInitializer
		implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/** The property the routes take their {@code uri} from. */
	public static final String PROPERTY = "sample.upstream-uri";

	/** Name of the property source holding the demo upstream's address. */
	public static final String PROPERTY_SOURCE = "sampleDemoUpstream";

	/** Name of the singleton holding the running demo upstream. */
	public static final String BEAN_NAME = "sampleDemoUpstream";

	/** Named after the sample's subclass. */
	private final Logger logger = LoggerFactory.getLogger(getClass());

	/**
	 * Start the demo upstream on a free port of {@code 127.0.0.1}.
	 * @return the running upstream
	 */
	protected abstract AbstractDemoUpstream start();

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		ConfigurableEnvironment environment = context.getEnvironment();
		String configured = environment.getProperty(PROPERTY);
		if (StringUtils.hasText(configured)) {
			this.logger.info("Routing to the upstream at {} (UPSTREAM_URI); the demo upstream is not started",
					configured);
			return;
		}
		AbstractDemoUpstream upstream = start();
		environment.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE, Map.of(PROPERTY, upstream.uri())));
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		beanFactory.registerSingleton(BEAN_NAME, upstream);
		if (beanFactory instanceof DefaultSingletonBeanRegistry registry) {
			registry.registerDisposableBean(BEAN_NAME, upstream);
		}
		else {
			context.addApplicationListener((ContextClosedEvent event) -> upstream.close());
		}
		this.logger.info("Demo upstream listening on {}; set UPSTREAM_URI to route to a real upstream instead",
				upstream.uri());
	}

}
