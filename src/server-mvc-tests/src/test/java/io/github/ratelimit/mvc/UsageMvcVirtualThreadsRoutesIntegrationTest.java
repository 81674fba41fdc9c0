package io.github.ratelimit.mvc;

import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.test.context.TestPropertySource;

/**
 * The usage cases of {@link UsageMvcRoutesIntegrationTest} with Tomcat serving requests on virtual threads
 * ({@code spring.threads.virtual.enabled}): the request body read ahead for an estimate, the answer metered as it is
 * written and the settlement, from a virtual thread.
 */
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads need Java 21+; this module's pom runs its "
		+ "tests on /usr/lib/jvm/temurin-25-jdk-amd64 when present, or on -Dmvc.test.jvm=<a Java 21+ bin/java>")
@TestPropertySource(properties = "spring.threads.virtual.enabled=true")
class UsageMvcVirtualThreadsRoutesIntegrationTest extends UsageMvcRoutesIntegrationTest {

}
