package io.github.ratelimit.sample.mvc;

import io.github.ratelimit.sample.support.AbstractWithoutRedisTest;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class WithoutRedisTest extends AbstractWithoutRedisTest {

	/** The blocking connection's reason is the refusal itself. */
	@Override
	protected String refusalReasonPattern() {
		return "Connection refused";
	}

}
