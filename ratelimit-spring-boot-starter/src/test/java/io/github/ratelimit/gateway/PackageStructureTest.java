package io.github.ratelimit.gateway;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import io.github.ratelimit.gateway.redis.RedisPlanStore;
import io.github.ratelimit.gateway.redis.SpringDataScriptExecutor;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The starter's packages by concept, checked on its compiled classes: no package cycle; the core (the limits
 * model and the limiter chain) knows neither WebFlux nor Reactor; Reactor is known only by the WebFlux front end and
 * two Redis adapters ({@link RedisPlanStore}, {@link SpringDataScriptExecutor}); only the two front ends
 * ({@code webflux} for Gateway on WebFlux, {@code mvc} for Gateway Server MVC) and the auto-configuration know a web
 * server, and each front end only its own.
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

	/**
	 * Reactor is the WebFlux front end's. Elsewhere only two adapters use it, whose only way into Redis is Spring
	 * Data Redis' reactive API, each turning a {@code Mono} into a future where it calls Redis:
	 * {@link RedisPlanStore} (the reactive template) and {@link SpringDataScriptExecutor} (any reactive connection
	 * factory that is not Lettuce's).
	 */
	@Test
	void onlyTheWebFluxFrontEndAndTwoRedisAdaptersKnowReactor() {
		noClasses().that()
			.resideOutsideOfPackage("..gateway.webflux..")
			.and(not(belongToAnyOf(RedisPlanStore.class, SpringDataScriptExecutor.class)))
			.should()
			.dependOnClassesThat()
			.resideInAPackage("reactor..")
			.check(classes);
	}

	@Test
	void onlyTheFrontEndsKnowAWebServer() {
		noClasses().that()
			.resideInAnyPackage("..gateway.limits..", "..gateway.chain..", "..gateway.client..", "..gateway.plan..",
					"..gateway.redis..", "..gateway.http..", "..gateway.route..", "..gateway.metrics..",
					"..gateway.properties..", "..gateway.actuate..", "..gateway.support..", "..gateway.usage..",
					"..gateway.protection..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.web.server..", "org.springframework.http.server..",
					"org.springframework.web.reactive..", "org.springframework.web.servlet..", "jakarta.servlet..",
					"org.springframework.cloud.gateway..")
			.check(classes);
	}

	@Test
	void eachFrontEndKnowsOnlyItsOwnServer() {
		noClasses().that()
			.resideInAPackage("..gateway.webflux..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.mvc..", "org.springframework.web.servlet..", "jakarta.servlet..",
					"org.springframework.cloud.gateway.server.mvc..")
			.check(classes);
		noClasses().that()
			.resideInAPackage("..gateway.mvc..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.webflux..", "org.springframework.web.server..",
					"org.springframework.web.reactive..", "org.springframework.http.server.reactive..",
					"org.springframework.cloud.gateway.filter..", "org.springframework.cloud.gateway.route..")
			.check(classes);
	}

	@Test
	void supportDependsOnNothingElseOfTheStarter() {
		noClasses().that()
			.resideInAPackage("..gateway.support..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.limits..", "..gateway.chain..", "..gateway.client..", "..gateway.plan..",
					"..gateway.redis..", "..gateway.webflux..", "..gateway.mvc..", "..gateway.http..", "..gateway.route..",
					"..gateway.actuate..", "..gateway.metrics..", "..gateway.properties..", "..gateway.autoconfigure..")
			.check(classes);
	}

	@Test
	void limitsModelDependsOnNothingElseOfTheStarter() {
		noClasses().that()
			.resideInAPackage("..gateway.limits..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.chain..", "..gateway.client..", "..gateway.plan..", "..gateway.redis..",
					"..gateway.webflux..", "..gateway.mvc..", "..gateway.http..", "..gateway.route..",
					"..gateway.actuate..", "..gateway.metrics..", "..gateway.properties..", "..gateway.autoconfigure..")
			.check(classes);
	}

	@Test
	void protectionDependsOnNothingElseOfTheStarter() {
		noClasses().that()
			.resideInAPackage("..gateway.protection..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("..gateway.limits..", "..gateway.chain..", "..gateway.client..", "..gateway.plan..",
					"..gateway.redis..", "..gateway.webflux..", "..gateway.mvc..", "..gateway.http..", "..gateway.route..",
					"..gateway.actuate..", "..gateway.metrics..", "..gateway.properties..", "..gateway.autoconfigure..",
					"..gateway.usage..", "reactor..", "org.springframework..")
			.check(classes);
	}

}
