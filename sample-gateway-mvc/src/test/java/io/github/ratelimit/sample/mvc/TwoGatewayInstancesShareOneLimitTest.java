package io.github.ratelimit.sample.mvc;

import io.github.ratelimit.sample.support.AbstractTwoGatewayInstancesShareOneLimitTest;

class TwoGatewayInstancesShareOneLimitTest extends AbstractTwoGatewayInstancesShareOneLimitTest {

	@Override
	protected Class<?> application() {
		return SampleGatewayMvcApplication.class;
	}

}
