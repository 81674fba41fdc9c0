package io.github.ratelimit.gateway.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.gateway.chain.RateLimitStore;
import io.github.ratelimit.gateway.chain.LimitStatus;
import io.github.ratelimit.gateway.chain.OverLimitCache;
import io.github.ratelimit.gateway.chain.QuotaState;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.client.ClientKey;
import io.github.ratelimit.gateway.limits.LimitDefinition;
import io.github.ratelimit.gateway.limits.PlanLimits;
import io.github.ratelimit.gateway.limits.QuotaPeriod;
import io.github.ratelimit.gateway.limits.QuotaPeriodUnit;
import io.github.ratelimit.gateway.plan.ApiKey;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.PriorityShares;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import io.github.ratelimit.gateway.route.RouteLimitSettings;
import io.github.ratelimit.gateway.route.RouteUsage;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code ratelimits} actuator endpoint, for the people who run the gateway.
 *
 * <ul>
 * <li>{@code GET /actuator/ratelimits}: the effective plans (with their priority), groups, routes (with their
 * upstream protection and priority), upstream protections (with their limit and requests in flight now) and
 * settings (API keys are only counted, never listed).</li>
 * <li>{@code GET /actuator/ratelimits/{group}?apiKey=...} or {@code ?ip=...}: one client's buckets in a group:
 * tokens now and milliseconds until full, read from Redis without consuming; a concurrency limit's requests in
 * flight ({@code inFlight}, across every instance) and free slots; limits with {@code scope: global}
 * show the group-wide bucket every client shares; a quota its use, what is left, its period and its reset, as Redis'
 * clock has them.</li>
 * <li>{@code DELETE /actuator/ratelimits/{group}?apiKey=...} or {@code ?ip=...}: reset that client's own buckets to
 * full (a write operation: only with {@code management.endpoint.ratelimits.access=unrestricted}). Group-wide
 * ({@code scope: global}) buckets are never reset by it: they belong to every client of the group. Every instance
 * forgets what it remembers of the client in the group (denials, lease, local fallback buckets): this one before it
 * answers, the others when the change published on Redis reaches them ({@code ClientChanges}).</li>
 * <li>{@code POST /actuator/ratelimits/{group}?apiKey=...&policy=...&tokens=N} (or {@code ?ip=...}; the parameters
 * may come as a JSON body too): grant that client {@code N} more tokens of one of its quotas in the current period
 * (a write operation, allowed exactly where the reset is). The period's use is lowered by {@code N}, below zero when
 * {@code N} is more than it: the client may be admitted more than the quota's limit in this period. A global quota
 * is never topped up for one client. Every instance forgets what it remembers of the client in the group, as after
 * a reset; an instance the change cannot reach keeps a quota's denial at most
 * {@link OverLimitCache#QUOTA_DENIAL_HOLD}.</li>
 * </ul>
 * Like every actuator endpoint it is exposed over HTTP only when listed in
 * {@code management.endpoints.web.exposure.include}; its default access is read-only. Answers name a client by its
 * hashed id ({@code k:<hash>} or {@code ip:<address>}), never by the raw API key. Clients of {@code key-by: principal}
 * and {@code key-by: header} routes ({@code p:<hash>}, {@code h:<hash>}) cannot be looked up here: their plan comes
 * with the request.
 * <p>The per-client operations answer only operators ({@link RateLimitsEndpointProperties}; by default an
 * authenticated caller holding one of {@code management.endpoint.ratelimits.roles}, or any authenticated caller when
 * no role is configured). Everyone else gets the same {@code 403} for every lookup,
 * whatever the group, key or address and whatever Redis holds, decided before any of them is looked at: the endpoint
 * is no oracle for guessed API keys.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

	private static final long TIMEOUT_SECONDS = 2;

	private static final Duration TIMEOUT = Duration.ofSeconds(TIMEOUT_SECONDS);

	private static final int STATUS_FORBIDDEN = 403;

	private static final String NOT_SHOWN = "client buckets are shown to operators only ("
			+ RateLimitsEndpointProperties.PREFIX + ".show-clients)";

	private final RateLimitProperties properties;

	private final LimitResolver limits;

	private final PlanResolver plans;

	private final RateLimitStore limiter;

	private final RateLimitRoutes routes;

	private final @Nullable OverLimitCache overLimitCache;

	private final RateLimitsEndpointProperties access;

	private final UpstreamProtections protections;

	private ClientAddressResolver addresses = new ClientAddressResolver(0);

	/**
	 * Create the endpoint, without upstream protections.
	 * @param properties the rate limit properties
	 * @param limits finds the limits of a plan in a group
	 * @param plans finds the plan of an API key
	 * @param limiter the shared limiter, both scopes ({@code DefaultLimiterChain.store()}: read with cost 0, reset and
	 * top up, each change told to every instance)
	 * @param routes knows the routes' settings (of both front ends)
	 * @param overLimitCache the chain's over-limit cache, which forgets a reset client; {@code null} when disabled
	 * @param access who may look up and reset single clients
	 */
	public RateLimitsEndpoint(RateLimitProperties properties, LimitResolver limits, PlanResolver plans,
			RateLimitStore limiter, RateLimitRoutes routes, @Nullable OverLimitCache overLimitCache,
			RateLimitsEndpointProperties access) {
		this(properties, limits, plans, limiter, routes, overLimitCache, access, UpstreamProtections.NONE);
	}

	/**
	 * Create the endpoint.
	 * @param properties the rate limit properties
	 * @param limits finds the limits of a plan in a group
	 * @param plans finds the plan of an API key
	 * @param limiter the shared limiter, both scopes ({@code DefaultLimiterChain.store()}: read with cost 0, reset and
	 * top up, each change told to every instance)
	 * @param routes knows the routes' settings (of both front ends)
	 * @param overLimitCache the chain's over-limit cache, which forgets a reset client; {@code null} when disabled
	 * @param access who may look up and reset single clients
	 * @param protections the upstream protections of this instance
	 */
	public RateLimitsEndpoint(RateLimitProperties properties, LimitResolver limits, PlanResolver plans,
			RateLimitStore limiter, RateLimitRoutes routes, @Nullable OverLimitCache overLimitCache,
			RateLimitsEndpointProperties access, UpstreamProtections protections) {
		this.protections = protections;
		this.properties = properties;
		this.limits = limits;
		this.plans = plans;
		this.limiter = limiter;
		this.routes = routes;
		this.overLimitCache = overLimitCache;
		this.access = access;
	}

	/**
	 * The effective configuration.
	 * @return plans (with their limits and {@code priority}), groups, routes (with {@code protect} and
	 * {@code priority} when the route sets them), settings, and {@code protections}: each upstream protection by
	 * name with {@code kind} ({@code adaptive} or {@code fixed}), an adaptive one's {@code algorithm}, {@code min}
	 * and {@code max}, {@code limit} (now), {@code inFlight} (requests in flight now by priority), {@code shadow},
	 * {@code retryAfterSeconds} and {@code shares} (the guaranteed share of each priority below critical, as a
	 * percentage)
	 */
	@ReadOperation
	public Map<String, Object> configuration() {
		Map<String, Object> plans = new LinkedHashMap<>();
		RateLimitProperties effective = this.limits.effectiveProperties(); // the limits in force
		effective.getPlans().forEach((name, plan) -> {
			Map<String, Object> groups = new LinkedHashMap<>();
			plan.getGroups().keySet().forEach((group) -> groups.put(group, describe(this.limits.limitsFor(name, group))));
			Map<String, Object> entry = new LinkedHashMap<>();
			entry.put("default", describe(this.limits.limitsFor(name, "default")));
			entry.put("groups", groups);
			entry.put("priority", plan.getPriority().tag());
			plans.put(name, entry);
		});
		Map<String, Object> groups = new LinkedHashMap<>();
		effective.getGroups().forEach((name, group) -> groups.put(name,
				Map.of("critical", group.isCritical(), "shadow", this.limits.isShadowGroup(name))));
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("anonymousPlan", effective.getAnonymousPlan());
		result.put("principalPlan", this.limits.principalPlan());
		result.put("headerPlan", this.limits.headerPlan());
		result.put("apiKeyHeader", this.properties.getApiKeyHeader());
		result.put("trustedProxies", this.properties.getTrustedProxies());
		result.put("headerStyle", this.properties.getHeaderStyle());
		result.put("shadowMode", effective.isShadowMode());
		result.put("fallbackMode", this.properties.getFallback().getMode());
		result.put("staticApiKeys", this.properties.getApiKeys().size());
		result.put("plans", plans);
		result.put("groups", groups);
		Map<String, Object> routes = new LinkedHashMap<>();
		this.routes.routeSettings().forEach((id, route) -> routes.put(id, describe(route)));
		result.put("routes", routes);
		result.put("protections", protections(this.protections));
		return result;
	}

	/** Every upstream protection as the health component shows it, with its Retry-After and shares. */
	private static Map<String, Object> protections(UpstreamProtections protections) {
		Map<String, Object> all = new LinkedHashMap<>();
		for (UpstreamProtection protection : protections.all()) {
			Map<String, Object> entry = ProtectionDetails.of(protection);
			entry.put("retryAfterSeconds", protection.retryAfterSeconds());
			Map<String, String> shares = new LinkedHashMap<>();
			for (Priority priority : Priority.values()) {
				if (priority != Priority.CRITICAL) {
					shares.put(priority.tag(), percent(protection.shares(), priority));
				}
			}
			entry.put("shares", shares);
			all.put(protection.name(), entry);
		}
		return all;
	}

	/** A share as configured: {@code 50%}, {@code 12.5%}. */
	private static String percent(PriorityShares shares, Priority priority) {
		double percent = Math.round(shares.share(priority) * 1000) / 10.0;
		return ((percent == Math.rint(percent)) ? Long.toString((long) percent) : Double.toString(percent)) + "%";
	}

	/** A route's settings, with {@code header} only on {@code key-by: header} routes. */
	private static Map<String, Object> describe(RouteLimitSettings route) {
		Map<String, Object> entry = new LinkedHashMap<>();
		entry.put("routeId", route.routeId());
		entry.put("group", route.group());
		entry.put("keyBy", route.keyBy());
		if (route.header() != null) {
			entry.put("header", route.header());
		}
		entry.put("cost", route.cost());
		entry.put("critical", route.critical());
		entry.put("shadow", route.shadow());
		RouteUsage usage = route.usage();
		if (usage.usage() != null) {
			entry.put("usage", usage.usage().toString());
			entry.put("reserve", String.valueOf(usage.reserve()));
			entry.put("reserveMax", usage.reserveMax());
		}
		if (usage.countWhen() != null) {
			entry.put("countWhen", usage.countWhen().stream().boxed().toList());
		}
		UpstreamProtection protection = route.protection();
		if (protection != null) {
			entry.put("protect", protection.name());
		}
		Priority priority = route.priority();
		if (priority != null) {
			entry.put("priority", priority.tag());
		}
		return entry;
	}

	/**
	 * Use the gateway's own address resolver to turn {@code ?ip=} into a client id (IPv6 prefix length).
	 * @param addresses the resolver
	 */
	public void setClientAddressResolver(ClientAddressResolver addresses) {
		this.addresses = addresses;
	}

	/**
	 * One client's buckets in an endpoint group, read without consuming.
	 * @param caller who asks (Boot passes the request's principal)
	 * @param group the endpoint group
	 * @param apiKey the client's API key (never echoed back), or {@code null}
	 * @param ip the client's IP address, or {@code null}
	 * @return the client's hashed id, plan and per-limit state: {@code policy}, {@code algorithm}, {@code scope}
	 * ({@code client}, or {@code global} for the group-wide bucket), the limit's numbers (and {@code unit} for a
	 * limit counting usage), {@code tokens} (whole tokens now, reservations of answers not over yet taken; 0 while
	 * the bucket owes) and {@code timeUntilFullMs}; for a concurrency limit ({@code "type": "concurrency"}),
	 * {@code maxInFlight}, {@code maxRequestDuration}, {@code inFlight} and {@code freeSlots}; for a quota
	 * ({@code "algorithm": "quota"}), {@code limit}, {@code period} ({@code day}, {@code week}, {@code month},
	 * {@code year} or a fixed length such as {@code 30s}), {@code zone} (a calendar period's time zone),
	 * {@code firstDayOfWeek} (a week's), {@code used} (tokens counted in the period less tokens topped up: below zero
	 * after a top-up beyond the use), {@code remaining} (the limit less {@code used}), {@code periodStart} and
	 * {@code resetAt} (ISO-8601 instants: the period that holds Redis' time); {@code 403} for a caller who is not an
	 * operator
	 */
	@ReadOperation
	public WebEndpointResponse<Map<String, Object>> buckets(SecurityContext caller, @Selector String group,
			@Nullable String apiKey, @Nullable String ip) {
		if (!isOperator(caller)) {
			return notShown();
		}
		return answer(known(group).thenCompose((ignored) -> client(apiKey, ip)).thenCompose((client) -> {
			PlanLimits planLimits = this.limits.limitsFor(client.plan(), group);
			CompletableFuture<List<QuotaState>> quotas = planLimits.hasQuotas()
					? within(this.limiter.readQuotas(client, planLimits), TIMEOUT)
					: CompletableFuture.completedFuture(List.of());
			return within(this.limiter.tryConsume(client, planLimits, 0), TIMEOUT).thenCombine(quotas,
					(decision, states) -> {
						List<Map<String, Object>> buckets = decision.statuses()
							.stream()
							.map((status) -> states.stream()
								.filter((state) -> state.limit().equals(status.limit()))
								.findFirst()
								.map(RateLimitsEndpoint::quota)
								.orElseGet(() -> bucket(status)))
							.toList();
						Map<String, Object> result = header(client, group);
						result.put("buckets", buckets);
						return new WebEndpointResponse<>(result);
					});
		}));
	}

	/**
	 * Reset one client's buckets in an endpoint group to full.
	 * @param caller who asks (Boot passes the request's principal)
	 * @param group the endpoint group
	 * @param apiKey the client's API key (never echoed back), or {@code null}
	 * @param ip the client's IP address, or {@code null}
	 * @return the client's hashed id, how many of its buckets were removed ({@code bucketsReset}) and, when the group
	 * has global limits, the policies left alone ({@code globalPoliciesNotReset}); {@code 403} for a caller who is
	 * not an operator
	 */
	@DeleteOperation
	public WebEndpointResponse<Map<String, Object>> reset(SecurityContext caller, @Selector String group,
			@Nullable String apiKey, @Nullable String ip) {
		if (!isOperator(caller)) {
			return notShown();
		}
		return answer(known(group).thenCompose((ignored) -> client(apiKey, ip)).thenCompose((client) -> {
			PlanLimits planLimits = this.limits.limitsFor(client.plan(), group);
			return within(this.limiter.reset(client, planLimits), TIMEOUT).thenApply((removed) -> {
				if (this.overLimitCache != null) {
					this.overLimitCache.forget(client, planLimits);
				}
				Map<String, Object> result = header(client, group);
				result.put("bucketsReset", removed);
				List<String> global = planLimits.limits()
					.stream()
					.filter(LimitDefinition::isGlobal)
					.map(LimitDefinition::policyName)
					.toList();
				if (!global.isEmpty()) {
					result.put("globalPoliciesNotReset", global);
				}
				return new WebEndpointResponse<>(result);
			});
		}));
	}

	/**
	 * Grant one client more tokens of one of its quotas in the current period (the period that holds Redis' time).
	 * @param caller who asks (Boot passes the request's principal)
	 * @param group the endpoint group
	 * @param apiKey the client's API key (never echoed back), or {@code null}
	 * @param ip the client's IP address, or {@code null}
	 * @param policy the quota's policy name, a quota of the client's plan in {@code group} with scope {@code client}
	 * @param tokens tokens granted: a whole number from 1 to 2^53 (the tokens topped up in one period add up to at
	 * most 2^53 less the limit)
	 * @return the client's hashed id, plan and group, {@code policy}, {@code tokensAdded} (the tokens added: fewer
	 * than {@code tokens}, even 0, where the period's top-ups reach 2^53 less the limit) and the quota as read after
	 * the top-up ({@code quota}, as in {@link #buckets}); {@code 400} with an {@code error} for a missing or bad
	 * {@code tokens}, a policy that is not such a quota or a bad client; {@code 403} for a caller who is not an
	 * operator
	 */
	@WriteOperation
	public WebEndpointResponse<Map<String, Object>> topUp(SecurityContext caller, @Selector String group,
			@Nullable String apiKey, @Nullable String ip, @Nullable String policy, @Nullable String tokens) {
		if (!isOperator(caller)) {
			return notShown();
		}
		return answer(known(group).thenCompose((ignored) -> client(apiKey, ip)).thenCompose((client) -> {
			PlanLimits planLimits = this.limits.limitsFor(client.plan(), group);
			LimitDefinition quota = quotaOf(planLimits, policy);
			long granted = tokens(tokens);
			return within(this.limiter.topUp(client, planLimits, quota, granted), TIMEOUT)
				.thenCompose((added) -> {
					if (this.overLimitCache != null) {
						this.overLimitCache.forget(client, planLimits);
					}
					return within(this.limiter.readQuotas(client, planLimits), TIMEOUT).thenApply((states) -> {
						Map<String, Object> result = header(client, group);
						result.put("policy", quota.policyName());
						result.put("tokensAdded", added);
						states.stream()
							.filter((state) -> state.limit().equals(quota))
							.findFirst()
							.ifPresent((state) -> result.put("quota", quota(state)));
						return new WebEndpointResponse<>(result);
					});
				});
		}));
	}

	/** The client's own quota named {@code policy} among the limits, else a {@link BadRequest} naming them. */
	private static LimitDefinition quotaOf(PlanLimits planLimits, @Nullable String policy) {
		List<String> own = planLimits.limits()
			.stream()
			.filter((limit) -> limit.isQuota() && !limit.isGlobal())
			.map(LimitDefinition::policyName)
			.toList();
		String where = "plan '" + planLimits.plan() + "' in group '" + planLimits.group() + "' (its quotas: "
				+ (own.isEmpty() ? "none" : String.join(", ", own)) + ")";
		if (policy == null || policy.isBlank()) {
			throw new BadRequest("give policy, the name of a quota of " + where);
		}
		LimitDefinition limit = planLimits.limits()
			.stream()
			.filter((candidate) -> candidate.policyName().equals(policy.strip()))
			.findFirst()
			.orElseThrow(() -> new BadRequest("no limit '" + policy.strip() + "' in " + where));
		if (!limit.isQuota()) {
			throw new BadRequest("'" + limit.policyName() + "' is not a quota of " + where);
		}
		if (limit.isGlobal()) {
			throw new BadRequest("quota '" + limit.policyName() + "' is global, shared by every client of the group: "
					+ "it is not topped up for one client");
		}
		return limit;
	}

	/** {@code tokens} as a whole number from 1 to 2^53, else a {@link BadRequest}. */
	private static long tokens(@Nullable String tokens) {
		String message = "tokens must be a whole number from 1 to " + LimitDefinition.MAX_TOKENS;
		if (tokens == null || tokens.isBlank()) {
			throw new BadRequest(message);
		}
		try {
			long value = Long.parseLong(tokens.strip());
			if (value < 1 || value > LimitDefinition.MAX_TOKENS) {
				throw new BadRequest(message + ", was " + value);
			}
			return value;
		}
		catch (NumberFormatException ex) {
			throw new BadRequest(message);
		}
	}

	/**
	 * The answer of an operation, waited for here: a plain result is what both of Spring Boot's web endpoint adapters
	 * unwrap into status and body; the reactive one runs such a blocking operation on a bounded pool, never on an
	 * event loop. The wait is bounded: every Redis call in the lookup has its own {@value #TIMEOUT_SECONDS} s
	 * timeout, the whole lookup three times that (then 503, as for a Redis call without answer).
	 */
	private static WebEndpointResponse<Map<String, Object>> answer(
			CompletionStage<WebEndpointResponse<Map<String, Object>>> lookup) {
		try {
			return lookup.toCompletableFuture().get(TIMEOUT.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			return error((ex.getCause() != null) ? ex.getCause() : ex);
		}
		catch (TimeoutException ex) {
			return error(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return error(ex);
		}
	}

	/** A Redis call's answer, or a {@link TimeoutException} after {@code timeout}. */
	private static <T> CompletableFuture<T> within(CompletionStage<T> call, Duration timeout) {
		return call.toCompletableFuture().copy().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** Whether the caller may see single clients: decided from the caller alone, before anything is looked up. */
	private boolean isOperator(SecurityContext caller) {
		return this.access.getShowClients().isShown(caller, this.access.getRoles());
	}

	/** The one answer every caller who is not an operator gets, whatever the lookup. */
	private static WebEndpointResponse<Map<String, Object>> notShown() {
		return new WebEndpointResponse<>(Map.of("error", NOT_SHOWN), STATUS_FORBIDDEN);
	}

	private CompletionStage<ClientKey> client(@Nullable String apiKey, @Nullable String ip) {
		boolean byKey = apiKey != null && !apiKey.isBlank();
		boolean byIp = ip != null && !ip.isBlank();
		if (byKey == byIp) {
			return CompletableFuture.failedFuture(new BadRequest("give exactly one of apiKey or ip"));
		}
		if (ip != null && byIp) {
			Optional<String> id = this.addresses.clientIdOf(ip);
			if (id.isEmpty()) {
				return CompletableFuture.failedFuture(new BadRequest("ip must be an IPv4 or IPv6 address"));
			}
			return CompletableFuture.completedFuture(new ClientKey(ClientKey.Kind.IP, id.get(),
					this.limits.effectiveProperties().getAnonymousPlan()));
		}
		String key = Objects.requireNonNull(apiKey).strip();
		return this.plans.resolvePlan(ApiKey.of(key))
			.thenApply((plan) -> new ClientKey(ClientKey.Kind.API_KEY, ApiKeyHasher.hash(key),
					plan.orElseThrow(() -> new NotFound("unknown API key (sha256:" + ApiKeyHasher.hash(key)
							+ "); such clients are limited by IP"))));
	}

	/** Completes for an endpoint group that a route or the configuration names, else fails with a 404 error. */
	private CompletionStage<@Nullable Void> known(String group) {
		RateLimitProperties effective = this.limits.effectiveProperties();
		boolean known = effective.getGroups().containsKey(group)
				|| effective.getPlans().values().stream().anyMatch((plan) -> plan.getGroups().containsKey(group))
				|| this.routes.routeSettings().values().stream().anyMatch((route) -> route.group().equals(group));
		return known ? CompletableFuture.completedFuture(null)
				: CompletableFuture.failedFuture(new NotFound("unknown endpoint group '" + group + "'"));
	}

	private static Map<String, Object> header(ClientKey client, String group) {
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("client", client.kind().tag() + ":" + client.id());
		result.put("plan", client.plan());
		result.put("group", group);
		return result;
	}

	private static Map<String, Object> bucket(LimitStatus status) {
		LimitDefinition limit = status.limit();
		Map<String, Object> bucket = new LinkedHashMap<>();
		if (limit.isConcurrency()) {
			describeConcurrency(limit, bucket);
			bucket.put("inFlight", limit.capacity() - status.remaining());
			bucket.put("freeSlots", status.remaining());
			return bucket;
		}
		bucket.put("policy", limit.policyName());
		bucket.put("algorithm", limit.algorithm().configName());
		bucket.put("scope", limit.scope().configName());
		bucket.put("capacity", limit.capacity());
		bucket.put("refillTokens", limit.refillTokens());
		bucket.put("refillPeriod", limit.refillPeriod().toString());
		if (limit.isUsage()) {
			bucket.put("unit", limit.unit());
		}
		bucket.put("tokens", status.remaining());
		bucket.put("timeUntilFullMs", status.resetMillis());
		return bucket;
	}

	/** A quota's state: its configuration and its use in the period Redis' clock is in. */
	private static Map<String, Object> quota(QuotaState state) {
		LimitDefinition limit = state.limit();
		Map<String, Object> entry = new LinkedHashMap<>();
		describeQuota(limit, entry);
		entry.put("used", state.used());
		entry.put("remaining", state.remaining());
		entry.put("periodStart", state.periodStart().toString());
		entry.put("resetAt", state.periodEnd().toString());
		return entry;
	}

	/** A quota's configuration: its limit and period, a calendar period's zone, a week's first day. */
	private static void describeQuota(LimitDefinition limit, Map<String, Object> entry) {
		QuotaPeriod period = Objects.requireNonNull(limit.quotaPeriod());
		entry.put("policy", limit.policyName());
		entry.put("algorithm", limit.algorithm().configName());
		entry.put("scope", limit.scope().configName());
		entry.put("limit", limit.capacity());
		entry.put("period", period.label());
		if (!period.isFixed()) {
			entry.put("zone", period.zone().getId());
		}
		if (period.unit() == QuotaPeriodUnit.WEEK) {
			entry.put("firstDayOfWeek", period.firstDayOfWeek().name().toLowerCase(Locale.ROOT));
		}
		if (limit.isUsage()) {
			entry.put("unit", limit.unit());
		}
	}

	private static void describeConcurrency(LimitDefinition limit, Map<String, Object> entry) {
		entry.put("policy", limit.policyName());
		entry.put("type", "concurrency");
		entry.put("scope", limit.scope().configName());
		entry.put("maxInFlight", limit.capacity());
		entry.put("maxRequestDuration", limit.refillPeriod().toString());
	}

	private static List<Map<String, Object>> describe(PlanLimits planLimits) {
		return planLimits.limits().stream().map((limit) -> {
			Map<String, Object> entry = new LinkedHashMap<>();
			if (limit.isConcurrency()) {
				describeConcurrency(limit, entry);
				return (Map<String, Object>) entry;
			}
			if (limit.isQuota()) {
				describeQuota(limit, entry);
				return (Map<String, Object>) entry;
			}
			entry.put("policy", limit.policyName());
			entry.put("algorithm", limit.algorithm().configName());
			entry.put("scope", limit.scope().configName());
			entry.put("capacity", limit.capacity());
			entry.put("refillTokens", limit.refillTokens());
			entry.put("refillPeriod", limit.refillPeriod().toString());
			if (limit.isUsage()) {
				entry.put("unit", limit.unit());
			}
			if (!limit.leaseBudget().isOff()) {
				// only for limits that take leases: other limits have no lease member
				entry.put("lease", limit.leaseBudget().toString());
			}
			return (Map<String, Object>) entry;
		}).toList();
	}

	/**
	 * An error as {@code {"error": "..."}} with its status: 400 for bad parameters (and a store refusing them), 404
	 * for an unknown group or API key, 503 when Redis did not answer (timeout, connection).
	 */
	private static WebEndpointResponse<Map<String, Object>> error(Throwable ex) {
		Map<String, Object> result = new LinkedHashMap<>();
		int status = (ex instanceof BadRequest || ex instanceof IllegalArgumentException)
				? WebEndpointResponse.STATUS_BAD_REQUEST
				: (ex instanceof NotFound) ? WebEndpointResponse.STATUS_NOT_FOUND
						: WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE;
		String message = (ex instanceof TimeoutException && ex.getMessage() == null)
				? "timed out (" + TIMEOUT_SECONDS + " s per Redis call)"
				: Optional.ofNullable(ex.getMessage()).orElse(ex.getClass().getSimpleName());
		result.put("error", (status == WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE)
				? "Redis did not answer: " + message : message);
		return new WebEndpointResponse<>(result, status);
	}

	private static final class BadRequest extends RuntimeException {

		BadRequest(String message) {
			super(message, null, false, false);
		}

	}

	private static final class NotFound extends RuntimeException {

		NotFound(String message) {
			super(message, null, false, false);
		}

	}

}
