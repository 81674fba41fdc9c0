package io.github.ratelimit.mvc;

import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.test.context.TestPropertySource;

/**
 * The contract cases of {@link ServerMvcRoutesIntegrationTest} with Tomcat serving requests on virtual threads
 * ({@code spring.threads.virtual.enabled}): the filter's wait for the decision parks the virtual thread. Virtual
 * threads exist from Java 21 on; the module's tests run on a Java 21+ JVM where the machine has one.
 */
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads need Java 21+; this module's pom runs its "
		+ "tests on /usr/lib/jvm/temurin-25-jdk-amd64 when present, or on -Dmvc.test.jvm=<a Java 21+ bin/java>")
@TestPropertySource(properties = "spring.threads.virtual.enabled=true")
class ServerMvcVirtualThreadsRoutesIntegrationTest extends ServerMvcRoutesIntegrationTest {

	@Override
	boolean virtualThreads() {
		return true;
	}

}
