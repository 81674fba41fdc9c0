package io.github.ratelimit.gateway.client;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.github.ratelimit.gateway.plan.ApiKey;
import io.github.ratelimit.gateway.plan.KnownPlans;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import io.github.ratelimit.gateway.support.ThrottledLog;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Default {@link ClientKeyResolver}. The plan is decided here, once, against the plans the limits in force define.
 * <ul>
 * <li>{@link KeyBy#API_KEY}: a non-blank API key header whose plan the {@link PlanResolver} knows identifies the
 * client (hashed); a key whose plan the limits do not define gets the anonymous plan.</li>
 * <li>{@link KeyBy#PRINCIPAL}: the request's authenticated principal ({@link ClientRequest#principal()})
 * identifies the client by the hash of its name; Spring Security's anonymous authentication and authentications not
 * authenticated never do (whatever the {@link PrincipalPlanResolver}), nor do principals the resolver refuses
 * ({@link PrincipalPlanResolver#isAuthenticated}). It is limited under the plan its credentials name; no plan, or
 * one the limits do not define (logged at WARN with the principal's hash, at most once per 10 s), gives
 * {@link KnownPlans#principalPlan()}.</li>
 * <li>{@link KeyBy#HEADER}: the non-blank value of the header the route names identifies the client (hashed with
 * the header's name, see {@link #headerHash}), under {@link KnownPlans#headerPlan()}.</li>
 * <li>Otherwise (no or an unknown key, no authenticated principal, no header value), and on {@link KeyBy#IP}
 * routes: the client IP address from {@link ClientAddressResolver}, under the anonymous plan.</li>
 * </ul>
 *
 * <p>One identity per request: on {@link KeyBy#API_KEY} and {@link KeyBy#HEADER} routes a request with several
 * lines of the identity header, or with a comma in its value (how HTTP joins repeated field lines, RFC 9110 section
 * 5.3), is answered {@link ClientResolution#ambiguous}: the limiter would take one value while an upstream may
 * read another. So is a request with a look-alike of the header whose {@code -} are written {@code _} or the other
 * way round ({@code X_API_KEY}), and a value with control characters or characters outside ASCII once the optional
 * whitespace around a field value (space and tab, RFC 9110 section 5.5) is removed. Spaces and tabs inside a value are allowed on {@link KeyBy#HEADER}
 * routes (RFC 9110 field-value: {@code Org One}), not in an API key.
 */
public class DefaultClientKeyResolver implements ClientKeyResolver {

	private static final Logger logger = LoggerFactory.getLogger(DefaultClientKeyResolver.class);

	/** Longest plan name shown in the WARN about a plan a principal's credentials name. */
	private static final int MAX_LOGGED_PLAN_LENGTH = 64;

	private final String apiKeyHeader;

	private final KnownPlans plans;

	private final PlanResolver planResolver;

	private final PrincipalPlanResolver principalPlans;

	private final ClientAddressResolver addressResolver;

	/** The API key header's name with some or all of its '-' and '_' swapped (at most 15 look-alikes). */
	private final List<String> lookAlikeHeaders;

	/** The look-alikes of the headers {@code key-by: header} routes name, by name: bounded by the routes. */
	private final Map<String, List<String>> routeHeaderLookAlikes = new ConcurrentHashMap<>();

	/** The WARN about principals whose credentials name a plan the limits do not define. */
	private final ThrottledLog unknownPrincipalPlan = new ThrottledLog(Duration.ofSeconds(10));

	/**
	 * Create a resolver.
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param anonymousPlan plan for clients limited by IP address
	 * @param planResolver finds the plan of an API key
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, String anonymousPlan, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		this(apiKeyHeader, KnownPlans.any(anonymousPlan), planResolver, addressResolver);
	}

	/**
	 * Create a resolver that decides the plan once: an API key whose plan the limits in force do not define is
	 * limited under the anonymous plan (logged at WARN with the key's hash). Principals get no plan from their
	 * credentials ({@link PrincipalPlanResolver#NAME_ONLY}).
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param plans the plans the limits in force define, and the anonymous plan
	 * @param planResolver finds the plan of an API key
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, KnownPlans plans, PlanResolver planResolver,
			ClientAddressResolver addressResolver) {
		this(apiKeyHeader, plans, planResolver, PrincipalPlanResolver.NAME_ONLY, addressResolver);
	}

	/**
	 * Create a resolver that decides the plan once, against the plans the limits in force define.
	 * @param apiKeyHeader name of the header carrying the API key
	 * @param plans the plans the limits in force define, and the anonymous, principal and header plans
	 * @param planResolver finds the plan of an API key
	 * @param principalPlans finds the plan of an authenticated principal and tells it from anonymous stand-ins
	 * @param addressResolver finds the client IP address
	 */
	public DefaultClientKeyResolver(String apiKeyHeader, KnownPlans plans, PlanResolver planResolver,
			PrincipalPlanResolver principalPlans, ClientAddressResolver addressResolver) {
		this.apiKeyHeader = apiKeyHeader;
		this.plans = plans;
		this.planResolver = planResolver;
		this.principalPlans = principalPlans;
		this.addressResolver = addressResolver;
		this.lookAlikeHeaders = lookAlikes(apiKeyHeader);
	}

	/** The header's name with some or all of its first four '-' or '_' swapped for the other. */
	private static List<String> lookAlikes(String header) {
		List<Integer> separators = new ArrayList<>();
		for (int i = 0; i < header.length() && separators.size() < 4; i++) {
			if (header.charAt(i) == '-' || header.charAt(i) == '_') {
				separators.add(i);
			}
		}
		List<String> names = new ArrayList<>();
		for (int mask = 1; mask < (1 << separators.size()); mask++) {
			char[] name = header.toCharArray();
			for (int bit = 0; bit < separators.size(); bit++) {
				if ((mask & (1 << bit)) != 0) {
					int at = separators.get(bit);
					name[at] = (name[at] == '-') ? '_' : '-';
				}
			}
			names.add(new String(name));
		}
		return List.copyOf(names);
	}

	/**
	 * {@inheritDoc}
	 * @throws IllegalArgumentException for {@link KeyBy#HEADER}, which needs the header's name (see
	 * {@link #resolve(ClientRequest, KeyBy, String)})
	 */
	@Override
	public CompletionStage<ClientResolution> resolve(ClientRequest request, KeyBy keyBy) {
		return resolve(request, keyBy, null);
	}

	/**
	 * {@inheritDoc}
	 * @throws IllegalArgumentException for {@link KeyBy#HEADER} without a header name
	 */
	@Override
	public CompletionStage<ClientResolution> resolve(ClientRequest request, KeyBy keyBy, @Nullable String header) {
		try {
			return switch (keyBy) {
				case IP -> byAddress(request).completed();
				case API_KEY -> byApiKey(request);
				case PRINCIPAL -> byPrincipal(request);
				case HEADER -> {
					if (header == null || header.isBlank()) {
						throw new IllegalArgumentException("key-by: header needs the name of the header (the "
								+ "route's header argument)");
					}
					yield byHeader(request, header).completed();
				}
			};
		}
		catch (Ambiguous ex) {
			return ClientResolution.ambiguous(ex.reason).completed();
		}
	}

	private ClientResolution byAddress(ClientRequest request) {
		return this.addressResolver.resolve(request)
			.map((ip) -> ClientResolution.identified(new ClientKey(ClientKey.Kind.IP, ip, this.plans.anonymousPlan())))
			.orElse(ClientResolution.unidentified());
	}

	private CompletionStage<ClientResolution> byApiKey(ClientRequest request) {
		String value = singleValue(request, this.apiKeyHeader, this.lookAlikeHeaders, "API key", "key", false);
		if (value == null) {
			return byAddress(request).completed();
		}
		ApiKey apiKey = ApiKey.of(value);
		return lookUp(() -> this.planResolver.resolvePlan(apiKey)).handle((plan, ex) -> {
			if (ex != null) {
				logger.warn("Plan lookup failed for API key {}; limiting the request by IP address: {}", apiKey.id(),
						unwrap(ex).toString());
				return byAddress(request);
			}
			return (plan != null && plan.isPresent())
					? ClientResolution.identified(apiKeyClient(apiKey.id(), plan.get())) : byAddress(request);
		});
	}

	/** A plan look-up as a stage, whether it answers one or throws. */
	private static CompletionStage<Optional<String>> lookUp(Supplier<CompletionStage<Optional<String>>> lookUp) {
		try {
			return lookUp.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedStage(ex);
		}
	}

	private static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

	private ClientKey apiKeyClient(String hash, String plan) {
		if (this.plans.isKnown(plan)) {
			return new ClientKey(ClientKey.Kind.API_KEY, hash, plan);
		}
		String anonymous = this.plans.anonymousPlan();
		logger.warn("Client {} has plan '{}', which is not configured; applying plan '{}'", hash, plan, anonymous);
		return new ClientKey(ClientKey.Kind.API_KEY, hash, anonymous);
	}

	private CompletionStage<ClientResolution> byPrincipal(ClientRequest request) {
		Principal principal = request.principal();
		if (principal == null || UnauthenticatedPrincipals.isStandIn(principal)
				|| !this.principalPlans.isAuthenticated(principal) || principal.getName() == null
				|| principal.getName().isBlank()) {
			return byAddress(request).completed();
		}
		String hash = ApiKeyHasher.hash(principal.getName());
		return lookUp(() -> this.principalPlans.resolvePlan(principal)).handle((plan, ex) -> {
			if (ex != null) {
				logger.warn("Plan lookup failed for principal p:{}; applying plan '{}': {}", hash,
						this.plans.principalPlan(), unwrap(ex).toString());
			}
			return ClientResolution.identified((ex == null && plan != null && plan.isPresent())
					? principalClient(hash, plan.get())
					: new ClientKey(ClientKey.Kind.PRINCIPAL, hash, this.plans.principalPlan()));
		});
	}

	private ClientKey principalClient(String hash, String plan) {
		if (this.plans.isKnown(plan)) {
			return new ClientKey(ClientKey.Kind.PRINCIPAL, hash, plan);
		}
		String fallback = this.plans.principalPlan();
		this.unknownPrincipalPlan.log((skipped) -> logger.warn(
				"Principal p:{} has plan '{}', which is not configured; applying plan '{}'{}", hash, printable(plan),
				fallback, ThrottledLog.notLogged(skipped)));
		return new ClientKey(ClientKey.Kind.PRINCIPAL, hash, fallback);
	}

	private ClientResolution byHeader(ClientRequest request, String header) {
		List<String> lookAlikes = this.routeHeaderLookAlikes.computeIfAbsent(header,
				DefaultClientKeyResolver::lookAlikes);
		String value = singleValue(request, header, lookAlikes, "value", "value", true);
		if (value == null) {
			return byAddress(request);
		}
		return ClientResolution
			.identified(new ClientKey(ClientKey.Kind.HEADER, headerHash(header, value), this.plans.headerPlan()));
	}

	/**
	 * The identifier of a {@code key-by: header} client: the hash of the header's name (lower case) and its value,
	 * joined by a NUL (which no header name or value holds), so that routes of one endpoint group keyed by different
	 * headers never share a bucket for equal values.
	 * @param header the header's name, as the route names it
	 * @param value the header's value
	 * @return the hash ({@link ApiKeyHasher})
	 */
	static String headerHash(String header, String value) {
		return ApiKeyHasher.hash(header.toLowerCase(Locale.ROOT) + '\0' + value);
	}

	/**
	 * The one value of an identity header, without the optional whitespace around it.
	 * @param request the request
	 * @param header the header's name
	 * @param lookAlikes names upstreams may read as the header
	 * @param what what one value is, for messages ({@code API key})
	 * @param alone the short form, for messages ({@code key})
	 * @param innerWhitespace whether spaces and tabs may appear inside the value (RFC 9110 section 5.5
	 * field-value); never at its ends, where they are optional whitespace and removed
	 * @return the value, or {@code null} when the header is missing or empty
	 * @throws Ambiguous when the request carries a look-alike header, several values or a value
	 * with a character other than visible ASCII (and, where allowed, inner spaces and tabs); the message names the
	 * header and the kind of character, never a value
	 */
	private static @Nullable String singleValue(ClientRequest request, String header, List<String> lookAlikes,
			String what, String alone, boolean innerWhitespace) {
		for (String lookAlike : lookAlikes) {
			if (!request.headerValues(lookAlike).isEmpty()) {
				throw new Ambiguous("The request carries a header named like " + header
						+ " with '_' for '-'" + ((header.indexOf('_') >= 0) ? " or '-' for '_'" : "") + " (" + lookAlike
						+ "), which upstreams may read as " + header + "; send only " + header + ".");
			}
		}
		List<String> values = request.headerValues(header);
		if (values.isEmpty()) {
			return null;
		}
		String value = values.get(0);
		if (values.size() > 1 || value.indexOf(',') >= 0) {
			throw new Ambiguous("The request carries more than one " + header
					+ " value (several header lines, or a comma-separated list); send exactly one " + what + ".");
		}
		String trimmed = withoutOptionalWhitespace(value);
		if (trimmed.isEmpty()) {
			return null;
		}
		String refused = refusedCharacter(trimmed, innerWhitespace);
		if (refused != null) {
			throw new Ambiguous("The " + header + " value contains " + refused
					+ ", which upstreams may strip or read differently; send the " + alone + " alone.");
		}
		return trimmed;
	}

	/** The value without leading and trailing spaces and tabs (RFC 9110 section 5.5: OWS). */
	private static String withoutOptionalWhitespace(String value) {
		int start = 0;
		int end = value.length();
		while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) {
			start++;
		}
		while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) {
			end--;
		}
		return value.substring(start, end);
	}

	/**
	 * The kind of the first character of a value (without its optional whitespace) that an identity may not hold:
	 * anything but visible ASCII, except spaces and tabs inside the value where allowed.
	 * @param value the value, without leading and trailing spaces and tabs
	 * @param innerWhitespace whether spaces and tabs are allowed (they can only be inner ones here)
	 * @return a description for the {@code 400} message, or {@code null} when every character is allowed
	 */
	private static @Nullable String refusedCharacter(String value, boolean innerWhitespace) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == ' ' || c == '\t') {
				if (!innerWhitespace) {
					return "a space or tab";
				}
			}
			else if (c < 0x20 || c == 0x7f) {
				return "a control character";
			}
			else if (c > 0x7e) {
				return "a character outside ASCII (such as a no-break space)";
			}
		}
		return null;
	}

	/** A plan name from a token, safe for one log line: visible ASCII only (others as '?'), at most 64 characters. */
	private static String printable(String plan) {
		StringBuilder shown = new StringBuilder(Math.min(plan.length(), MAX_LOGGED_PLAN_LENGTH));
		for (int i = 0; i < plan.length() && i < MAX_LOGGED_PLAN_LENGTH; i++) {
			char c = plan.charAt(i);
			shown.append((c >= 0x20 && c <= 0x7e) ? c : '?');
		}
		return (plan.length() > MAX_LOGGED_PLAN_LENGTH) ? shown + "..." : shown.toString();
	}

	/** A request naming more than one client; ends resolution with {@link ClientResolution#ambiguous}. */
	private static final class Ambiguous extends RuntimeException {

		private final String reason;

		Ambiguous(String reason) {
			super(reason, null, false, false);
			this.reason = reason;
		}

	}

}
