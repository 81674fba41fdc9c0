package io.github.ratelimit.sample.mvc;

import io.github.ratelimit.sample.support.AbstractDemoUpstreamInitializer;

/**
 * Starts this sample's {@link DemoUpstream} when no real upstream is configured (registered in
 * {@code META-INF/spring.factories}; see {@link AbstractDemoUpstreamInitializer}).
 */
public class DemoUpstreamInitializer extends AbstractDemoUpstreamInitializer {

	@Override
	protected DemoUpstream start() {
		return DemoUpstream.start();
	}

}
