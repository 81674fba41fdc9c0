package io.github.ratelimit.frontends;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The gateway of this module's tests, started once per {@link FrontEnd}: what it is (Gateway on WebFlux or Gateway
 * Server MVC) is decided by the kind of web application it is started as; routes and limits are in
 * {@code application.yml}.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class FrontEndsTestApplication {

}
