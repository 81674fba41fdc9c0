package io.github.ratelimit.frontends;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The gateway of this module's tests, started once per {@link FrontEnd}: what it is (Gateway on WebFlux or Gateway
 * Server MVC) is decided by the kind of web application it is started as; routes and limits are in
 * {@code application.yml} (and {@code application-protection.yml} for the upstream protection's tests). Its store is
 * watched for the end of every settlement ({@link Settlements}); its metrics count the requests shed ({@link Sheds}).
 */
@SpringBootApplication(proxyBeanMethods = false)
public class FrontEndsTestApplication {

	@Bean
	static Settlements settlements() {
		return new Settlements();
	}

	@Bean
	Sheds sheds() {
		return new Sheds();
	}

}
