package io.github.ratelimit.gateway.properties;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.cloud.gateway.config.GatewayProperties;

/**
 * Validates the configuration when the application context starts, independently of which beans the application
 * replaces: a bad value stops start-up with a {@link RateLimitConfigurationException} naming each property.
 */
public class RateLimitConfigurationCheck implements InitializingBean {

	private static final Logger logger = LoggerFactory.getLogger(RateLimitConfigurationCheck.class);

	private final RateLimitProperties properties;

	private final GatewayProperties gateway;

	/**
	 * Create the check.
	 * @param properties the bound {@code ratelimit.*} properties
	 * @param gateway the gateway's route definitions, or {@code null}
	 */
	public RateLimitConfigurationCheck(RateLimitProperties properties, GatewayProperties gateway) {
		this.properties = properties;
		this.gateway = gateway;
	}

	@Override
	public void afterPropertiesSet() {
		RateLimitConfigurationValidator.validate(this.properties, this.gateway);
		for (String gap : RateLimitConfigurationValidator.globalLimitGaps(this.properties)) {
			logger.warn(gap);
		}
	}

}
