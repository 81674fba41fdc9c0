package io.github.ratelimit.sample.mvc;

import io.github.ratelimit.sample.support.AbstractDemoUpstreamInitializerTest;

class DemoUpstreamInitializerTest extends AbstractDemoUpstreamInitializerTest {

	@Override
	protected Class<?> application() {
		return SampleGatewayMvcApplication.class;
	}

}
