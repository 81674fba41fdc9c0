package io.github.ratelimit.gateway.webflux;

import io.github.ratelimit.gateway.route.RouteArgumentRules;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.gateway.client.KeyBy;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.PLANS_AND_ROUTE;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.failure;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.limit;
import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitRouteValidator}: bad {@code RateLimit} arguments of configured routes stop start-up naming the
 * route's filter property and the fix; a filter built from bound arguments is checked against the limits in force.
 */
class RateLimitRouteValidatorTest {

	private static final String FILTER_1 = "spring.cloud.gateway.server.webflux.routes[0].filters[1].";

	/** A fixed protection named {@code orders-backend}. */
	private static final String[] ORDERS_BACKEND = { "ratelimit.protections.orders-backend.limit=fixed",
			"ratelimit.protections.orders-backend.max-in-flight=4" };

	private final ReactiveWebApplicationContextRunner runner = runner(PLANS_AND_ROUTE);

	@Test
	void costAboveCapacityIsRefusedNamingTheRouteFilter() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.group=search", FILTER_1 + "args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5"));
	}

	@Test
	void costAboveCapacityIsRefusedWhenTheRouteIdIsTheGroup() {
		// route id 'search' is the group when the filter names none: its capacity 5 applies
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.cost=6")
			.run((context) -> assertThat(failure(context))
				.contains("routes[0].filters[1].args.cost: is 6 tokens, more than the capacity 5 of a limit of plan 'free'"));
	}

	@Test
	void aRouteOverAQuotaTakesACostUpToItsLimit() {
		String quota = "ratelimit.plans.free.groups.search[1].";
		ReactiveWebApplicationContextRunner quotas = this.runner.withPropertyValues(quota + "type=quota",
				quota + "limit=7", quota + "period=day", FILTER_1 + "name=RateLimit", FILTER_1 + "args.group=search");
		// the quota's limit (7) is above the token bucket's capacity (5): the bucket decides
		quotas.withPropertyValues(FILTER_1 + "args.cost=5").run((context) -> assertThat(context).hasNotFailed());
		quotas.withPropertyValues("ratelimit.plans.free.groups.search[0].capacity=10", FILTER_1 + "args.cost=7")
			.run((context) -> assertThat(context).hasNotFailed());
		quotas.withPropertyValues("ratelimit.plans.free.groups.search[0].capacity=10", FILTER_1 + "args.cost=8")
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.cost: is 8 tokens, more than the capacity 7 of a limit of plan 'free'"));
	}

	@Test
	void unknownGroupNamedByRouteIsRefused() {
		this.runner.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[0]=RateLimit=serch")
			.run((context) -> assertThat(failure(context))
				.contains("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.group: names endpoint group 'serch'")
				.contains("known: [search]"));
	}

	@Test
	void badKeyByIsRefused() {
		this.runner.withPropertyValues(FILTER_1 + "name=RateLimit", FILTER_1 + "args.key-by=cookie")
			.run((context) -> assertThat(failure(context))
				.contains("args.key-by: must be api-key, ip, principal or header, was 'cookie'."));
	}

	@Test
	void keyByHeaderNeedsAHeaderNamingTheRouteAndArgument() {
		this.runner.withPropertyValues(filter("key-by=header"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1 + "args.header: is missing: route 'search' "
					+ "limits by header (key-by: header) but names no header."));
		this.runner.withPropertyValues(filter("key-by=header", "header=X Tenant"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1 + "args.header: of route 'search' must be "
					+ "a header field name (letters, digits and !#$%&'*+-.^_`|~), was 'X Tenant'."));
	}

	@Test
	void aHeaderWithAnotherKeyByIsRefused() {
		this.runner.withPropertyValues(filter("key-by=principal", "header=X-Tenant-Id"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.header: applies only with key-by: header, but route 'search' limits by principal."));
		this.runner.withPropertyValues(filter("header=X-Tenant-Id"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.header: applies only with key-by: header, but route 'search' limits by api-key."));
	}

	@Test
	void keyByHeaderAndPrincipalWithTheirArgumentsStart() {
		this.runner.withPropertyValues(filter("key-by=header", "header=X-Tenant-Id"))
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues(filter("key-by=principal")).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void theCostOfAHeaderRouteMustFitTheHeaderAndAnonymousPlansOnly() {
		// group search: plan free 5 tokens, the anonymous plan 60 (its default); under the anonymous plan 6 fit
		this.runner.withPropertyValues(filter("key-by=header", "header=X-Tenant-Id", "cost=6"))
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues(filter("key-by=header", "header=X-Tenant-Id", "cost=6"))
			.withPropertyValues("ratelimit.header-plan=free")
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.cost: is 6 tokens, more than the capacity 5 of a limit of plan 'free'"));
		this.runner.withPropertyValues(filter("key-by=principal", "cost=6"))
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.cost: is 6 tokens, more than the capacity 5 of a limit of plan 'free'"));
	}

	@Test
	void theCostMustFitAQuotasLimit() {
		String quota = "ratelimit.plans.free.groups.search[1].";
		String[] quotaOf3 = { quota + "type=quota", quota + "limit=3", quota + "period=day" };
		this.runner.withPropertyValues(quotaOf3).withPropertyValues(filter("cost=3"))
			.run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues(quotaOf3).withPropertyValues(filter("cost=4"))
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.cost: is 4 tokens, more than the capacity 3 of a limit of plan 'free'"));
	}

	/** A second RateLimit filter on route search, with these arguments ({@code name=value}). */
	@Test
	void usageArgumentsMustFitTheGroupsLimits() {
		String tokens = "ratelimit.plans.free.groups.search[1].";
		String[] tokenLimit = { tokens + "capacity=1000", tokens + "refill-tokens=1000", tokens + "refill-period=1m",
				tokens + "unit=tokens" };
		this.runner.withPropertyValues(filter("usage=json:usage.total_tokens"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.usage: is set, but no limit of endpoint group 'search' that can apply counts usage."));
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues(filter("cost=1"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.usage: is missing: endpoint group 'search' counts 'tokens' in plan 'free', which only an "
					+ "answer tells."));
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues(filter("usage=xml:usage"))
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.usage: must say where an answer's usage is read, was 'xml:usage'."));
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues(filter("usage=json:usage..total"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1 + "args.usage: names no JSON field"));
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues(filter("usage=header:X-Usage", "reserve=5000"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.reserve: is 5000 units, more than the capacity 1000 of a limit of plan 'free' in tokens"));
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues(filter("usage=bytes", "reserve-max=2000"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.reserve-max: is 2000 units, more than the capacity 1000"));
		// the base route's own RateLimit=search (filters[0]) reads no usage: replaced
		this.runner.withPropertyValues(tokenLimit)
			.withPropertyValues("spring.cloud.gateway.server.webflux.routes[0].filters[0]=StripPrefix=0")
			.withPropertyValues(filter("usage=json:usage.total_tokens", "reserve=json:max_tokens", "reserve-max=400"))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void countWhenListsStatusesAndReserveNeedsUsage() {
		this.runner.withPropertyValues(filter("count-when=401,forbidden"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.count-when: must list HTTP status codes (100 to 599) or classes (4xx), was '401,forbidden'."));
		this.runner.withPropertyValues(filter("reserve=10"))
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.reserve: applies only with usage, which the route does not set."));
		this.runner.withPropertyValues(filter("count-when=401,403,5xx")).run((context) -> assertThat(context).hasNotFailed());
		this.runner.withPropertyValues("ratelimit.plans.free.groups.search[0].lease=20%")
			.withPropertyValues(filter("count-when=401"))
			.run((context) -> assertThat(failure(context))
				.contains(FILTER_1 + "args.count-when: is set, but a limit of endpoint group 'search' takes leases"));
	}

	@Test
	void protectMustNameADeclaredProtection() {
		this.runner.withPropertyValues(filter("protect=orders-backend"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1 + "args.protect: names protection "
					+ "'orders-backend', which ratelimit.protections does not define.")
				.contains("known: []"));
		this.runner.withPropertyValues(ORDERS_BACKEND)
			.withPropertyValues(filter("protect=order-backend"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1 + "args.protect: names protection "
					+ "'order-backend', which ratelimit.protections does not define.")
				.contains("known: [orders-backend]"));
		this.runner.withPropertyValues(ORDERS_BACKEND)
			.withPropertyValues(filter("protect=orders-backend", "priority=critical"))
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void priorityMustBeAKnownPriority() {
		this.runner.withPropertyValues(ORDERS_BACKEND)
			.withPropertyValues(filter("protect=orders-backend", "priority=urgent"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.priority: must be critical, high, normal or low, was 'urgent'."));
	}

	@Test
	void priorityWithoutProtectIsRefused() {
		this.runner.withPropertyValues(ORDERS_BACKEND)
			.withPropertyValues(filter("priority=critical"))
			.run((context) -> assertThat(failure(context)).contains(FILTER_1
					+ "args.priority: is given without protect: a priority orders requests only in an upstream "
					+ "protection."));
	}

	@Test
	void protectAndPriorityOfAFilterBuiltFromBoundArgumentsAreCheckedAgainstTheLimitsInForce() {
		RateLimitProperties limits = new RateLimitProperties();
		RateLimitProperties.Protection fixed = new RateLimitProperties.Protection();
		fixed.setLimit(RateLimitProperties.ProtectionLimit.FIXED);
		fixed.setMaxInFlight(4);
		limits.getProtections().put("orders-backend", fixed);
		assertThat(RouteArgumentRules.validateProtection(limits, "route 'r' RateLimit", "orders-backend", true))
			.isEmpty();
		assertThat(RouteArgumentRules.validateProtection(limits, "route 'r' RateLimit", "orders", false))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.protect");
		assertThat(RouteArgumentRules.validateProtection(limits, "route 'r' RateLimit", null, true))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.priority");
		assertThat(RouteArgumentRules.validateProtection(limits, "route 'r' RateLimit", null, false)).isEmpty();
	}

	private static String[] filter(String... args) {
		String[] properties = new String[args.length + 1];
		properties[0] = FILTER_1 + "name=RateLimit";
		for (int i = 0; i < args.length; i++) {
			properties[i + 1] = FILTER_1 + "args." + args[i];
		}
		return properties;
	}

	@Test
	void withoutRouteDefinitionsThereIsNothingToCheck() {
		assertThat(new RateLimitRouteValidator(null).validateRoutes(new RateLimitProperties())).isEmpty();
	}

	@Test
	void aFilterBuiltFromBoundArgumentsIsCheckedAgainstTheLimitsInForce() {
		RateLimitProperties limits = new RateLimitProperties();
		RateLimitProperties.Plan anonymous = new RateLimitProperties.Plan();
		anonymous.setDefault(List.of(limit(5, 5, Duration.ofSeconds(1))));
		limits.getPlans().put("anonymous", anonymous);
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.IP, 5)).isEmpty();
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.IP, 6))
			.extracting(ConfigurationViolation::toString)
			.singleElement()
			.asString()
			.startsWith("route 'r' RateLimit.args.cost: is 6 tokens, more than the capacity 5 of a limit of plan "
					+ "'anonymous'");
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.IP, 0))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.cost");
		assertThat(RouteArgumentRules.validateFilter(limits, "r", "serch", KeyBy.API_KEY, 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.group");
		assertThat(RouteArgumentRules.validateFilter(limits, null, " ", KeyBy.API_KEY, 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("RateLimit.group");
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.HEADER, "X-Tenant-Id", 1)).isEmpty();
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.HEADER, null, 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.header");
		assertThat(RouteArgumentRules.validateFilter(limits, "r", null, KeyBy.IP, "X-Tenant-Id", 1))
			.extracting(ConfigurationViolation::property)
			.containsExactly("route 'r' RateLimit.args.header");
	}

}
