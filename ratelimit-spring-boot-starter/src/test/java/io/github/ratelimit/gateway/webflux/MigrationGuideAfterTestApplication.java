package io.github.ratelimit.gateway.webflux;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * A gateway with nothing but auto-configuration, for the migration guide's "after" configuration, which needs no
 * code ({@link MigrationGuideRoutesIntegrationTest}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class MigrationGuideAfterTestApplication {

}
