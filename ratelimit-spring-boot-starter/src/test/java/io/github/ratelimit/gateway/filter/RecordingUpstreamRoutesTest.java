package io.github.ratelimit.gateway.filter;

import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.test.redis.TestRedis;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of route tests with a real upstream behind the gateway ({@link RecordingUpstream}, which records the request
 * target it receives) and buckets in a real Redis; profile {@code paths-it}. Every test starts with empty buckets, no
 * remembered denials and nothing received upstream.
 */
@SpringBootTest(classes = GatewayTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "spring.profiles.active=paths-it")
abstract class RecordingUpstreamRoutesTest {

	static final TestRedis redis = TestRedis.shared();

	static final RecordingUpstream upstream = RecordingUpstream.shared();

	@LocalServerPort
	int port;

	@Autowired
	OverLimitCache overLimitCache;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("upstream.uri", upstream::uri);
	}

	@BeforeEach
	void emptyBucketsAndUpstream() {
		redis.flushAll();
		this.overLimitCache.clear();
		upstream.clear();
	}

	/** Send one request as written, from 127.0.0.1. */
	RawHttp.Response send(String method, String target, String... headerLines) {
		return RawHttp.send(this.port, "127.0.0.1", method, target, headerLines);
	}

}
