package io.github.ratelimit.sample;

import io.github.ratelimit.sample.support.AbstractTwoGatewayInstancesShareOneLimitTest;

class TwoGatewayInstancesShareOneLimitTest extends AbstractTwoGatewayInstancesShareOneLimitTest {

	@Override
	protected Class<?> application() {
		return SampleGatewayApplication.class;
	}

}
