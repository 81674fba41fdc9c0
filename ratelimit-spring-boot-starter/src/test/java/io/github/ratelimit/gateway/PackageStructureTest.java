package io.github.ratelimit.gateway;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The starter's packages by concept, checked on its compiled classes: no package cycle, and the core (the limits
 * model and the limiter chain) knows neither WebFlux nor Reactor, so another front end (Gateway Server MVC) can reuse
 * it.
 */
class PackageStructureTest {

	private static JavaClasses classes;

	@BeforeAll
	static void importClasses() {
		classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.github.ratelimit.gateway");
	}

	@Test
	void noPackageCycles() {
		slices().matching("io.github.ratelimit.gateway.(*)..").should().beFreeOfCycles().check(classes);
	}

	@Test
	void theLimitsModelAndTheLimiterChainKnowNeitherReactorNorWebFlux() {
		noClasses().that()
			.resideInAnyPackage("..gateway.limits..", "..gateway.chain..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("reactor..", "org.springframework.web..", "org.springframework.http.server.reactive..",
					"org.springframework.cloud.gateway..")
			.check(classes);
	}

	@Test
	void limitsModelDependsOnNothingElseOfTheStarter() {
		noClasses().that()
			.resideInAPackage("..gateway.limits..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.chain..", "..gateway.client..", "..gateway.plan..", "..gateway.redis..",
					"..gateway.filter..", "..gateway.http..", "..gateway.actuate..", "..gateway.metrics..",
					"..gateway.properties..", "..gateway.autoconfigure..")
			.check(classes);
	}

}
