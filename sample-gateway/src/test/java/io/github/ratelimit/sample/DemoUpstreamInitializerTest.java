package io.github.ratelimit.sample;

import io.github.ratelimit.sample.support.AbstractDemoUpstreamInitializerTest;

class DemoUpstreamInitializerTest extends AbstractDemoUpstreamInitializerTest {

	@Override
	protected Class<?> application() {
		return SampleGatewayApplication.class;
	}

}
