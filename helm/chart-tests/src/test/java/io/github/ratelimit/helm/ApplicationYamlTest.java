package io.github.ratelimit.helm;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;

import io.github.ratelimit.gateway.actuate.RateLimitsEndpointProperties;
import io.github.ratelimit.gateway.properties.ConfigurationViolation;
import io.github.ratelimit.gateway.properties.RateLimitPropertiesValidator;
import io.github.ratelimit.gateway.chain.FallbackMode;
import io.github.ratelimit.gateway.webflux.RateLimitRouteValidator;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.http.RequestPathCheck;
import io.github.ratelimit.gateway.limits.Algorithm;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.ProtectionRules;
import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.limits.LimitScope;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementServerProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ConfigMap's application.yml, bound the way Spring Boot binds it: into the starter's {@link RateLimitProperties}
 * (then checked by the starter's own start-up validator), Gateway's routes, Boot's Redis, server and management
 * properties. Binding is strict: a key the target class does not have fails the test (Spring would ignore it).
 */
class ApplicationYamlTest {

	@Test
	void defaultValuesBindIntoTheStarterAndValidate() {
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template()));

		RateLimitProperties properties = bindAndValidate(config);

		assertThat(properties.getPlans()).containsOnlyKeys("anonymous", "free", "pro");
		assertThat(properties.getPlans().get("free").getDefault()).hasSize(2);
		RateLimitProperties.Limit daily = properties.getPlans().get("free").getDefault().get(1);
		assertThat(daily.getCapacity()).isEqualTo(10_000);
		assertThat(daily.getRefillPeriod()).isEqualTo(Duration.ofDays(1));
		assertThat(properties.getPlans().get("anonymous").getGroups().get("login").get(0).getRefillPeriod())
			.isEqualTo(Duration.ofMinutes(15));
		assertThat(properties.getGroups().get("login").isCritical()).isTrue();
		assertThat(properties.getGroups().get("search").isCritical()).isFalse();
		assertThat(properties.getTrustedProxies()).isZero();
		assertThat(properties.getNonCanonicalPaths()).isEqualTo(RequestPathCheck.Policy.REJECT);
		assertThat(properties.getRedisTimeout()).isEqualTo(Duration.ofMillis(20));
		assertThat(properties.getFallback().getMode()).isEqualTo(FallbackMode.LOCAL);
		assertThat(properties.getFallback().getInstances()).isEqualTo(2);
		assertThat(properties.getFallback().isLearnInstances()).isTrue();
		assertThat(properties.getApiKeys()).as("no static keys by default, and none from the image").isEmpty();
		assertThat(properties.getQuota().getZone()).isEqualTo("UTC");
		assertThat(properties.getQuota().getFirstDayOfWeek()).isEqualTo(DayOfWeek.MONDAY);
		assertThat(properties.getProtections()).as("no upstream protection by default").isEmpty();
		assertThat(properties.getPriorities()).isEmpty();

		GatewayProperties gateway = bindRoutesAndValidate(config, properties);
		assertThat(gateway.getRoutes()).extracting(RouteDefinition::getId)
			.containsExactly("search", "api", "login", "otp", "public");
		// Empty upstreamUri: the demo upstream the sample starts inside the pod.
		assertThat(gateway.getRoutes()).extracting(RouteDefinition::getUri)
			.containsOnly(URI.create(RenderedConfig.DEMO_UPSTREAM));
		FilterDefinition login = gateway.getRoutes().get(2).getFilters().get(0);
		assertThat(login.getName()).isEqualTo("RateLimit");
		assertThat(login.getArgs()).containsEntry("group", "login").containsEntry("key-by", "ip")
			.as("only failed attempts count: the demo upstream answers 401 without X-Password: demo")
			.containsEntry("count-when", "401,403");
		assertThat(gateway.getRoutes().get(1).getFilters()).singleElement()
			.satisfies((filter) -> assertThat(filter.getArgs()).as("group = route id").isEmpty());

		DataRedisProperties redis = config.bindStrictly("spring.data.redis", new DataRedisProperties());
		assertThat(redis.getHost()).isEqualTo("redis-master");
		assertThat(redis.getPort()).isEqualTo(6379);
		assertThat(redis.getPassword()).isNull();
		assertThat(redis.getTimeout()).isEqualTo(Duration.ofSeconds(1));
		assertThat(redis.getCluster()).isNull();
		ServerProperties server = config.bindStrictly("server", new ServerProperties());
		assertThat(server.getPort()).isEqualTo(8080);
		assertThat(server.getShutdown()).hasToString("GRACEFUL");
		assertThat(config.bindStrictly("management.server", new ManagementServerProperties()).getPort())
			.isEqualTo(8081);
		assertThat(config.bindStrictly("management.endpoints.web", new WebEndpointProperties()).getExposure()
			.getInclude()).containsExactly("health", "info", "gateway");
		// the ratelimits endpoint is not exposed, and would show single clients to nobody (the image has no Spring
		// Security): the starter's default
		assertThat(config.bindStrictly(RateLimitsEndpointProperties.PREFIX, new RateLimitsEndpointProperties())
			.getShowClients()).isEqualTo(Show.WHEN_AUTHORIZED);
	}

	@Test
	void ratelimitsEndpointForOperatorsIsExposedAndOpenedThroughValues() {
		// src/docs/reference/kubernetes.md, "Health, probes and the management port": only with the management port closed to
		// everyone but operators (networkPolicy.managementFrom)
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template()
			.set("management.exposure[0]", "health")
			.set("management.exposure[1]", "info")
			.set("management.exposure[2]", "gateway")
			.set("management.exposure[3]", "ratelimits")
			.set("extraConfig.management.endpoint.ratelimits.show-clients", "always")));

		assertThat(config.bindStrictly("management.endpoints.web", new WebEndpointProperties()).getExposure()
			.getInclude()).containsExactly("health", "info", "gateway", "ratelimits");
		assertThat(config.bindStrictly(RateLimitsEndpointProperties.PREFIX, new RateLimitsEndpointProperties())
			.getShowClients()).isEqualTo(Show.ALWAYS);
		bindAndValidate(config);
	}

	@Test
	void productionExampleBindsIntoTheStarterAndValidates() {
		RenderedConfig config = RenderedConfig
			.of(HelmChart.render(HelmChart.template().withValuesFile(HelmChart.productionValues())));

		RateLimitProperties properties = bindAndValidate(config);

		assertThat(properties.getPlans()).containsOnlyKeys("anonymous", "free", "pro");
		assertThat(properties.getPlans().get("pro").getGroups().get("search").get(0).getCapacity()).isEqualTo(50);
		assertThat(properties.getTrustedProxies()).isEqualTo(1);
		assertThat(properties.getFallback().getInstances()).as("one twentieth each while Redis is down")
			.isEqualTo(20);

		GatewayProperties gateway = bindRoutesAndValidate(config, properties);
		assertThat(gateway.getRoutes()).extracting(RouteDefinition::getUri)
			.containsOnly(URI.create("http://api-backend.apis.svc.cluster.local:8080"));
		assertThat(config.get("sample.upstream-uri", String.class))
			.as("the demo upstream is not started").isEqualTo("http://api-backend.apis.svc.cluster.local:8080");

		DataRedisProperties redis = config.bindStrictly("spring.data.redis", new DataRedisProperties());
		assertThat(redis.getCluster().getNodes()).hasSize(3)
			.allMatch((node) -> node.endsWith(".redis-cluster-headless.redis.svc.cluster.local:6379"));
		assertThat(redis.getCluster().getMaxRedirects()).isEqualTo(3);
		assertThat(redis.getLettuce().getCluster().getRefresh().isAdaptive()).isTrue();
		assertThat(redis.getLettuce().getCluster().getRefresh().getPeriod()).isEqualTo(Duration.ofSeconds(10));
		assertThat(redis.getPassword()).as("from SPRING_DATA_REDIS_PASSWORD, never the ConfigMap").isNull();
		// The existing API key Secret is imported from its mount.
		assertThat(config.get("spring.config.import", String.class))
			.isEqualTo("file:/etc/ratelimit-gateway/secrets/api-keys.yml");
	}

	@Test
	void nonCanonicalPathsReachTheStarter() {
		assertThat(bindAndValidate(RenderedConfig
			.of(HelmChart.render(HelmChart.template().set("rateLimit.nonCanonicalPaths", "normalize"))))
			.getNonCanonicalPaths()).isEqualTo(RequestPathCheck.Policy.NORMALIZE);
	}

	@Test
	void fallbackInstancesFollowTheReplicaCount() {
		assertThat(fallbackInstances(HelmChart.template().set("replicaCount", 7))).isEqualTo(7);
		// Scaled to zero on purpose: the starter still needs at least 1.
		assertThat(fallbackInstances(HelmChart.template().set("replicaCount", 0))).isEqualTo(1);
	}

	@Test
	void fallbackInstancesFollowTheAutoscalerMaximum() {
		assertThat(fallbackInstances(HelmChart.template()
			.set("autoscaling.enabled", true)
			.set("autoscaling.minReplicas", 3)
			.set("autoscaling.maxReplicas", 12))).isEqualTo(12);
	}

	@Test
	void explicitFallbackInstancesWin() {
		assertThat(fallbackInstances(HelmChart.template()
			.set("autoscaling.enabled", true)
			.set("rateLimit.fallback.instances", 5))).isEqualTo(5);
	}

	@Test
	void extraConfigOverridesTheRenderedConfiguration() {
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template()
			.set("extraConfig.ratelimit.redis-timeout", "50ms")
			.set("extraConfig.logging.level.io\\.github\\.ratelimit", "DEBUG")));

		assertThat(bindAndValidate(config).getRedisTimeout()).isEqualTo(Duration.ofMillis(50));
		assertThat(config.get("logging.level.io.github.ratelimit", String.class)).isEqualTo("DEBUG");
	}

	@Test
	void limitAlgorithmAndScopeBindIntoTheStarter() {
		// --set replaces a list whole: give both limits
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template()
			.set("rateLimit.plans.free.groups.search[0].capacity", 5)
			.set("rateLimit.plans.free.groups.search[0].refillTokens", 1)
			.set("rateLimit.plans.free.groups.search[0].refillPeriod", "1s")
			.set("rateLimit.plans.free.groups.search[1].capacity", 1000)
			.set("rateLimit.plans.free.groups.search[1].refillTokens", 1000)
			.set("rateLimit.plans.free.groups.search[1].refillPeriod", "1m")
			.set("rateLimit.plans.free.groups.search[1].algorithm", "sliding-window-counter")
			.set("rateLimit.plans.free.groups.search[1].scope", "global")));

		List<RateLimitProperties.Limit> search = bindAndValidate(config).getPlans().get("free").getGroups().get("search");
		assertThat(search).hasSize(2);
		assertThat(search.get(0).getScope()).isEqualTo(LimitScope.CLIENT);
		assertThat(search.get(0).getAlgorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(search.get(1).getScope()).isEqualTo(LimitScope.GLOBAL);
		assertThat(search.get(1).getAlgorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
	}

	@Test
	void routeOptionsRenderAsGatewayDefinitions() {
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template()
			.set("upstreamUri", "http://backend:8080")
			.set("routes[0].id", "reports")
			.set("routes[0].uri", "http://reports:9000")
			.set("routes[0].order", -1)
			.set("routes[0].predicates[0]", "Path=/reports/**")
			.set("routes[0].predicates[1].name", "Method")
			.set("routes[0].predicates[1].args.methods", "GET")
			.set("routes[0].rateLimit.group", "search")
			.set("routes[0].rateLimit.cost", 5)
			.set("routes[0].rateLimit.critical", true)
			.set("routes[0].filters[0]", "StripPrefix=1")
			.set("routes[1].id", "health")
			.set("routes[1].predicates[0]", "Path=/status")));

		GatewayProperties gateway = bindRoutesAndValidate(config, bindAndValidate(config));

		RouteDefinition reports = gateway.getRoutes().get(0);
		assertThat(reports.getUri()).isEqualTo(URI.create("http://reports:9000"));
		assertThat(reports.getOrder()).isEqualTo(-1);
		assertThat(reports.getPredicates()).extracting((p) -> p.getName()).containsExactly("Path", "Method");
		assertThat(reports.getFilters()).extracting(FilterDefinition::getName).containsExactly("RateLimit", "StripPrefix");
		assertThat(reports.getFilters().get(0).getArgs()).containsEntry("group", "search")
			.containsEntry("cost", "5")
			.containsEntry("critical", "true");
		RouteDefinition health = gateway.getRoutes().get(1);
		assertThat(health.getUri()).isEqualTo(URI.create("http://backend:8080"));
		assertThat(health.getFilters()).as("no rateLimit: not limited").isEmpty();
	}

	@Test
	void usageLimitsAndTheirRouteArgumentsBindIntoTheStarterAndValidate(@TempDir Path dir) throws IOException {
		// a values file: --set on a list element replaces the whole list
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  plans:
						    free:
						      groups:
						        chat:
						          - { capacity: 60, refillTokens: 60, refillPeriod: 1m }
						          - { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: tokens }
						        downloads:
						          - { capacity: 50000000, refillTokens: 50000000, refillPeriod: 1h, unit: bytes, algorithm: fixed-window }
						routes:
						  - id: chat
						    predicates: [ "Path=/v1/chat/**" ]
						    rateLimit: { usage: "json:usage.total_tokens", reserve: "json:max_tokens", reserveMax: 1000, countWhen: 2xx }
						  - id: downloads
						    predicates: [ "Path=/downloads/**" ]
						    rateLimit: { usage: bytes, reserve: 1000000, countWhen: 200 }
						  - id: login
						    predicates: [ "Path=/auth/login" ]
						    rateLimit: { group: login, keyBy: ip, countWhen: "401,403" }
						""")));
		RenderedConfig config = RenderedConfig.of(manifests);

		RateLimitProperties properties = bindAndValidate(config);
		List<RateLimitProperties.Limit> chat = properties.getPlans().get("free").getGroups().get("chat");
		assertThat(chat).extracting(RateLimitProperties.Limit::getUnit).containsExactly("requests", "tokens");
		assertThat(chat.get(1).getCapacity()).isEqualTo(2000);
		RateLimitProperties.Limit downloads = properties.getPlans().get("free").getGroups().get("downloads").get(0);
		assertThat(downloads.getUnit()).isEqualTo("bytes");
		assertThat(downloads.getAlgorithm()).isEqualTo(Algorithm.FIXED_WINDOW);

		GatewayProperties gateway = bindRoutesAndValidate(config, properties);
		assertThat(gateway.getRoutes().get(0).getFilters()).singleElement().satisfies((filter) -> {
			assertThat(filter.getName()).isEqualTo("RateLimit");
			assertThat(filter.getArgs()).containsOnly(Map.entry("usage", "json:usage.total_tokens"),
					Map.entry("reserve", "json:max_tokens"), Map.entry("reserve-max", "1000"),
					Map.entry("count-when", "2xx"));
		});
		// numbers as whole numbers (Helm reads YAML numbers as floats: 1e+06)
		assertThat(gateway.getRoutes().get(1).getFilters().get(0).getArgs()).containsOnly(
				Map.entry("usage", "bytes"), Map.entry("reserve", "1000000"), Map.entry("count-when", "200"));
		assertThat(gateway.getRoutes().get(2).getFilters().get(0).getArgs()).containsEntry("count-when", "401,403");
		assertThat(manifests.one(ConfigMap.class).getData().get("application.yml"))
			.contains("unit: \"tokens\"", "reserve-max: \"1000\"", "count-when: \"401,403\"");
	}

	@Test
	void aReserveMaxBeyondTheUsageCapacityIsLeftToTheStartersCheck(@TempDir Path dir) throws IOException {
		// the chart checks the arguments' forms; capacities are the starter's to check, at start-up
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  plans:
						    free:
						      groups:
						        chat:
						          - { capacity: 2000, refillTokens: 2000, refillPeriod: 1m, unit: tokens }
						routes:
						  - id: chat
						    predicates: [ "Path=/v1/chat/**" ]
						    rateLimit: { usage: "json:usage.total_tokens", reserveMax: 5000 }
						"""))));

		RateLimitProperties properties = bindAndValidate(config);
		GatewayProperties gateway = config.bindStrictly(GatewayProperties.PREFIX, new GatewayProperties());
		assertThat(new RateLimitRouteValidator(gateway).validateRoutes(properties))
			.extracting(ConfigurationViolation::property)
			.containsExactly("spring.cloud.gateway.server.webflux.routes[0].filters[0].args.reserve-max");
	}

	@Test
	void quotasTheirZonesAndWeekBindIntoTheStarterAndValidate(@TempDir Path dir) throws IOException {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  quota: { zone: "+03:28", firstDayOfWeek: sunday }
						  plans:
						    anonymous:
						      groups:
						        reports:
						          - { type: quota, limit: 3, period: week }
						    free:
						      quotaZone: Europe/Berlin
						      groups:
						        search:
						          - { capacity: 5, refillTokens: 1, refillPeriod: 1s }
						          - { type: quota, limit: 9007199254740992, period: month }
						        chat:
						          - { type: quota, limit: 2000000, period: day, unit: tokens, name: chat-tokens-day }
						          - { type: quota, limit: 100, period: 12h }
						routes:
						  - id: search
						    predicates: [ "Path=/api/search/**" ]
						    rateLimit: {}
						  - id: chat
						    predicates: [ "Path=/v1/chat/**" ]
						    rateLimit: { usage: "json:usage.total_tokens", reserveMax: 1000 }
						  - id: reports
						    predicates: [ "Path=/api/reports/**" ]
						    rateLimit: { keyBy: ip }
						""")));
		RenderedConfig config = RenderedConfig.of(manifests);

		RateLimitProperties properties = bindAndValidate(config);
		bindRoutesAndValidate(config, properties);
		assertThat(properties.getQuota().getZone()).isEqualTo("+03:28");
		assertThat(properties.getQuota().getFirstDayOfWeek()).isEqualTo(DayOfWeek.SUNDAY);
		assertThat(properties.getPlans().get("free").getQuotaZone()).isEqualTo("Europe/Berlin");
		assertThat(properties.getPlans().get("anonymous").getQuotaZone()).isNull();
		RateLimitProperties.Limit month = properties.getPlans().get("free").getGroups().get("search").get(1);
		assertThat(month.isQuota()).isTrue();
		assertThat(month.getLimit()).as("2^53, a whole number through Helm's floats").isEqualTo(9_007_199_254_740_992L);
		assertThat(month.getPeriod()).isEqualTo("month");
		assertThat(month.getCapacity()).isZero();
		assertThat(month.getRefillPeriod()).isNull();

		// as the starter enforces them: the plan's zone, else the global one; the week from first-day-of-week
		LimitResolver resolver = new LimitResolver(properties);
		List<LimitDefinition> search = resolver.limitsFor("free", "search").limits();
		assertThat(search).extracting(LimitDefinition::policyName).containsExactly("free-search", "free-search-month");
		assertThat(search.get(0).isQuota()).isFalse();
		assertThat(search.get(1).capacity()).isEqualTo(9_007_199_254_740_992L);
		assertThat(search.get(1).quotaPeriod()).isEqualTo(
				QuotaPeriod.of(QuotaPeriodUnit.MONTH, ZoneId.of("Europe/Berlin"), DayOfWeek.SUNDAY));
		List<LimitDefinition> chat = resolver.limitsFor("free", "chat").limits();
		assertThat(chat).extracting(LimitDefinition::policyName).containsExactly("chat-tokens-day", "free-chat-12h");
		assertThat(chat.get(0).unit()).isEqualTo("tokens");
		assertThat(chat.get(0).capacity()).isEqualTo(2_000_000);
		assertThat(chat.get(0).quotaPeriod()).isEqualTo(QuotaPeriod.of(QuotaPeriodUnit.DAY, ZoneId.of("Europe/Berlin")));
		assertThat(chat.get(1).quotaPeriod()).isEqualTo(QuotaPeriod.fixed(Duration.ofHours(12)));
		assertThat(resolver.limitsFor("anonymous", "reports").limits()).singleElement().satisfies((reports) -> {
			assertThat(reports.policyName()).isEqualTo("anonymous-reports-week");
			assertThat(reports.capacity()).isEqualTo(3);
			assertThat(reports.quotaPeriod()).isEqualTo(
					QuotaPeriod.of(QuotaPeriodUnit.WEEK, ZoneId.of("+03:28"), DayOfWeek.SUNDAY));
		});
		assertThat(manifests.one(ConfigMap.class).getData().get("application.yml")).contains("""
				    free:
				      quota-zone: "Europe/Berlin"
				""", """
				          - type: "quota"
				            limit: 9007199254740992
				            period: "month"
				""", """
				  quota:
				    zone: "+03:28"
				    first-day-of-week: "sunday"
				""");
	}

	@Test
	void quotaZonesAndPeriodsTheChartCannotCheckAreLeftToTheStarter(@TempDir Path dir) throws IOException {
		// the chart checks forms; whether a zone exists, and a fixed period's range, are the starter's to check
		RenderedConfig config = RenderedConfig.of(HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  quota: { zone: Mars/Olympus_Mons }
						  plans:
						    free:
						      quotaZone: "+25:00"
						      groups:
						        search:
						          - { type: quota, limit: 10, period: 500ms }
						"""))));

		RateLimitProperties properties = config.bindStrictly(RateLimitProperties.PREFIX, new RateLimitProperties());
		assertThat(RateLimitPropertiesValidator.validate(properties)).extracting(ConfigurationViolation::property)
			.containsExactlyInAnyOrder("ratelimit.quota.zone", "ratelimit.plans.free.quota-zone",
					"ratelimit.plans.free.groups.search[0].period");
	}

	@Test
	void aProtectionWithEveryDefaultIsAnAdaptiveOne(@TempDir Path dir) throws IOException {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  protections:
						    orders-backend: {}
						routes:
						  - id: search
						    predicates: [ "Path=/api/search/**" ]
						    rateLimit: { group: search, protect: orders-backend }
						""")));
		RenderedConfig config = RenderedConfig.of(manifests);

		RateLimitProperties properties = bindAndValidate(config);
		assertThat(properties.getProtections()).containsOnlyKeys("orders-backend");
		assertThat(properties.getProtections().get("orders-backend").getLimit())
			.isEqualTo(RateLimitProperties.ProtectionLimit.ADAPTIVE);
		GatewayProperties gateway = bindRoutesAndValidate(config, properties);
		assertThat(gateway.getRoutes().get(0).getFilters().get(0).getArgs()).containsEntry("protect", "orders-backend");
	}

	@Test
	void protectionsPrioritiesAndPlanAndRoutePrioritiesReachTheStarter(@TempDir Path dir) throws IOException {
		HelmChart.Manifests manifests = HelmChart.render(HelmChart.template().withValuesFile(Files.writeString(
				dir.resolve("values.yaml"), """
						rateLimit:
						  protections:
						    orders-backend: { algorithm: gradient, min: 4, max: 500, initial: 10, retryAfter: 2s, shadow: true }
						    search-backend: { limit: fixed, maxInFlight: 64 }
						  priorities: { high: 60%, normal: 30%, low: 10% }
						  plans:
						    free: { priority: low }
						    pro: { priority: high }
						routes:
						  - id: search
						    predicates: [ "Path=/api/search/**" ]
						    rateLimit: { group: search, protect: search-backend }
						  - id: login
						    predicates: [ "Path=/auth/login" ]
						    rateLimit: { group: login, keyBy: ip, protect: orders-backend, priority: critical }
						""")));
		RenderedConfig config = RenderedConfig.of(manifests);

		RateLimitProperties properties = bindAndValidate(config);
		assertThat(properties.getProtections()).containsOnlyKeys("orders-backend", "search-backend");
		RateLimitProperties.Protection orders = properties.getProtections().get("orders-backend");
		assertThat(orders.getLimit()).isEqualTo(RateLimitProperties.ProtectionLimit.ADAPTIVE);
		assertThat(orders.getAlgorithm()).isEqualTo(AdaptiveAlgorithm.GRADIENT);
		assertThat(orders.getMin()).isEqualTo(4);
		assertThat(orders.getMax()).isEqualTo(500);
		assertThat(orders.getInitial()).isEqualTo(10);
		assertThat(orders.getMaxInFlight()).isNull();
		assertThat(orders.getRetryAfter()).isEqualTo(Duration.ofSeconds(2));
		assertThat(orders.isShadow()).isTrue();
		RateLimitProperties.Protection search = properties.getProtections().get("search-backend");
		assertThat(search.getLimit()).isEqualTo(RateLimitProperties.ProtectionLimit.FIXED);
		assertThat(search.getMaxInFlight()).isEqualTo(64);
		assertThat(search.isShadow()).isFalse();
		assertThat(properties.getPriorities()).containsOnly(Map.entry("high", "60%"), Map.entry("normal", "30%"),
				Map.entry("low", "10%"));
		assertThat(properties.getPlans().get("free").getPriority()).isEqualTo(Priority.LOW);
		assertThat(properties.getPlans().get("pro").getPriority()).isEqualTo(Priority.HIGH);
		assertThat(properties.getPlans().get("anonymous").getPriority()).isEqualTo(Priority.NORMAL);

		// as the starter builds them
		UpstreamProtections protections = ProtectionRules.protections(properties, () -> properties);
		assertThat(protections.get("orders-backend").algorithm()).isEqualTo(AdaptiveAlgorithm.GRADIENT);
		assertThat(protections.get("orders-backend").retryAfterSeconds()).isEqualTo(2);
		assertThat(protections.get("search-backend").limit()).isEqualTo(64);
		assertThat(protections.get("search-backend").shares().share(Priority.HIGH)).isEqualTo(0.6);
		assertThat(protections.priorityOf("pro")).isEqualTo(Priority.HIGH);

		GatewayProperties gateway = bindRoutesAndValidate(config, properties);
		assertThat(gateway.getRoutes().get(0).getFilters().get(0).getArgs()).containsOnly(Map.entry("group", "search"),
				Map.entry("protect", "search-backend"));
		assertThat(gateway.getRoutes().get(1).getFilters().get(0).getArgs()).containsEntry("protect", "orders-backend")
			.containsEntry("priority", "critical");
		assertThat(manifests.one(ConfigMap.class).getData().get("application.yml")).contains("""
				  protections:
				    orders-backend:
				      algorithm: "gradient"
				      min: 4
				      max: 500
				      initial: 10
				      retry-after: "2s"
				      shadow: true
				    search-backend:
				      limit: "fixed"
				      max-in-flight: 64
				  priorities:
				""", """
				    free:
				      priority: "low"
				""", "high: \"60%\"");
	}

	private static int fallbackInstances(com.marcnuri.helm.TemplateCommand command) {
		return bindAndValidate(RenderedConfig.of(HelmChart.render(command))).getFallback().getInstances();
	}

	static RateLimitProperties bindAndValidate(RenderedConfig config) {
		RateLimitProperties properties = config.bindStrictly(RateLimitProperties.PREFIX, new RateLimitProperties());
		List<ConfigurationViolation> violations = RateLimitPropertiesValidator.validate(properties);
		assertThat(violations).as("the starter's start-up validation").isEmpty();
		return properties;
	}

	static GatewayProperties bindRoutesAndValidate(RenderedConfig config, RateLimitProperties properties) {
		GatewayProperties gateway = config.bindStrictly(GatewayProperties.PREFIX, new GatewayProperties());
		assertThat(new RateLimitRouteValidator(gateway).validateRoutes(properties))
			.as("the starter's validation of the routes' RateLimit filters").isEmpty();
		return gateway;
	}

}
