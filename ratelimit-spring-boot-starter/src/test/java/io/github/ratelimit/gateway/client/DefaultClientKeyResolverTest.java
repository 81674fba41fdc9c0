package io.github.ratelimit.gateway.client;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.ratelimit.gateway.plan.KnownPlans;
import io.github.ratelimit.gateway.plan.PrincipalPlanResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link DefaultClientKeyResolver} for principals ({@code key-by: principal}) and request headers
 * ({@code key-by: header}), on exchanges built in memory: who the client is, under which plan, and when the client
 * IP address is used instead. API keys are covered through real HTTP by the route tests.
 */
@ExtendWith(OutputCaptureExtension.class)
class DefaultClientKeyResolverTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final ClientKey PEER = new ClientKey(ClientKey.Kind.IP, "192.0.2.1", "anonymous");

	/** Plans anonymous, free, pro, partner; principals default to free, header clients get partner. */
	private static final KnownPlans PLANS = new KnownPlans() {

		@Override
		public boolean isKnown(String plan) {
			return Set.of("anonymous", "free", "pro", "partner").contains(plan);
		}

		@Override
		public String anonymousPlan() {
			return "anonymous";
		}

		@Override
		public String principalPlan() {
			return "free";
		}

		@Override
		public String headerPlan() {
			return "partner";
		}

	};

	/** Plans by principal name: alice is pro, mallory's token names a plan no limit defines, bob names none. */
	private static final Map<String, String> TOKEN_PLANS = Map.of("alice", "pro", "mallory", "platinum\nforged");

	private final DefaultClientKeyResolver resolver = resolver((principal) -> CompletableFuture
		.completedFuture(Optional.ofNullable(TOKEN_PLANS.get(principal.getName()))));

	@Test
	void aPrincipalIsItsHashedNameUnderThePlanItsCredentialsName() {
		assertThat(principal("alice"))
			.isEqualTo(new ClientKey(ClientKey.Kind.PRINCIPAL, ApiKeyHasher.hash("alice"), "pro"));
		assertThat(principal("bob")).isEqualTo(new ClientKey(ClientKey.Kind.PRINCIPAL, ApiKeyHasher.hash("bob"), "free"));
	}

	@Test
	void aPlanTheLimitsDoNotDefineGivesTheDefaultPlanWithAWarnShowingOnlyTheHash(CapturedOutput output) {
		assertThat(principal("mallory"))
			.isEqualTo(new ClientKey(ClientKey.Kind.PRINCIPAL, ApiKeyHasher.hash("mallory"), "free"));
		assertThat(output.getOut())
			.contains("Principal p:" + ApiKeyHasher.hash("mallory")
					+ " has plan 'platinum?forged', which is not configured; applying plan 'free'")
			.doesNotContain("mallory");
	}

	@Test
	void aFailedPlanLookupGivesTheDefaultPlan(CapturedOutput output) {
		DefaultClientKeyResolver failing = resolver((principal) -> CompletableFuture
			.failedFuture(new IllegalStateException("store down")));
		assertThat(resolve(failing, exchange((request) -> {
		}, () -> "alice"), KeyBy.PRINCIPAL, null))
			.isEqualTo(new ClientKey(ClientKey.Kind.PRINCIPAL, ApiKeyHasher.hash("alice"), "free"));
		assertThat(output.getOut()).contains("Plan lookup failed for principal p:" + ApiKeyHasher.hash("alice"))
			.doesNotContain("alice");
	}

	@Test
	void withoutAnAuthenticatedNamedPrincipalTheClientIsItsAddress() {
		assertThat(resolve(this.resolver, exchange((request) -> {
		}, null), KeyBy.PRINCIPAL, null)).isEqualTo(PEER);
		assertThat(principal(" ")).isEqualTo(PEER);
		DefaultClientKeyResolver nobody = resolver(new PrincipalPlanResolver() {

			@Override
			public CompletionStage<Optional<String>> resolvePlan(Principal principal) {
				return CompletableFuture.completedFuture(Optional.of("pro"));
			}

			@Override
			public boolean isAuthenticated(Principal principal) {
				return false;
			}

		});
		assertThat(resolve(nobody, exchange((request) -> {
		}, () -> "anonymousUser"), KeyBy.PRINCIPAL, null)).isEqualTo(PEER);
	}

	@Test
	void springSecuritysAnonymousAuthenticationIsNoClientWhateverThePrincipalPlanResolver() {
		// a lambda replacing the default resolver: its isAuthenticated accepts every named principal
		DefaultClientKeyResolver lambda = resolver((principal) -> CompletableFuture.completedFuture(Optional.of("pro")));
		Principal anonymous = new AnonymousAuthenticationToken("key", "anonymousUser",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS"));
		assertThat(resolve(lambda, exchange((request) -> {
		}, anonymous), KeyBy.PRINCIPAL, null)).isEqualTo(PEER);
		Principal unauthenticated = UsernamePasswordAuthenticationToken.unauthenticated("alice", "secret");
		assertThat(resolve(lambda, exchange((request) -> {
		}, unauthenticated), KeyBy.PRINCIPAL, null)).isEqualTo(PEER);
		Principal authenticated = UsernamePasswordAuthenticationToken.authenticated("alice", "secret",
				AuthorityUtils.NO_AUTHORITIES);
		assertThat(resolve(lambda, exchange((request) -> {
		}, authenticated), KeyBy.PRINCIPAL, null))
			.isEqualTo(new ClientKey(ClientKey.Kind.PRINCIPAL, ApiKeyHasher.hash("alice"), "pro"));
	}

	@Test
	void aHeaderValueIsHashedWithTheHeadersNameUnderTheHeaderPlan() {
		assertThat(header("X-Tenant-Id: tenant-1")).isEqualTo(
				new ClientKey(ClientKey.Kind.HEADER, ApiKeyHasher.hash("x-tenant-id\0tenant-1"), "partner"));
		// the optional whitespace around a field value is not part of it
		assertThat(header("x-tenant-id: \ttenant-1 ")).isEqualTo(header("X-Tenant-Id: tenant-1"));
	}

	@Test
	void routesKeyedByDifferentHeadersNeverShareAClientForEqualValues() {
		MockServerWebExchange exchange = exchange(
				(request) -> request.header("X-Tenant-Id", "acme").header("X-Org-Id", "acme"), null);
		ClientKey tenant = resolve(this.resolver, exchange, KeyBy.HEADER, "X-Tenant-Id");
		ClientKey org = resolve(this.resolver, exchange, KeyBy.HEADER, "X-Org-Id");
		assertThat(tenant.id()).isNotEqualTo(org.id());
		// header names are case-insensitive: a route naming the header in lower case keys the same client
		assertThat(resolve(this.resolver, exchange, KeyBy.HEADER, "x-tenant-id")).isEqualTo(tenant);
	}

	@Test
	void spacesAndTabsInsideAHeaderValueArePartOfIt() {
		assertThat(header("X-Tenant-Id: Org One").id()).isEqualTo(ApiKeyHasher.hash("x-tenant-id\0Org One"));
		assertThat(header("X-Tenant-Id: Org\tOne").id()).isEqualTo(ApiKeyHasher.hash("x-tenant-id\0Org\tOne"));
		assertThat(header("X-Tenant-Id:  Org One\t")).isEqualTo(header("X-Tenant-Id: Org One"));
	}

	@Test
	void theRefusalNamesTheKindOfCharacter() {
		assertThat(headerAmbiguity("X-Tenant-Id: tenant-a\u00a0")).contains("a character outside ASCII");
		assertThat(headerAmbiguity("X-Tenant-Id: \u00a0tenant-a")).contains("a character outside ASCII");
		assertThat(headerAmbiguity("X-Tenant-Id: tenant\u0001a")).contains("a control character")
			.doesNotContain("no-break");
		// an API key holds no spaces at all
		MockServerWebExchange exchange = exchange((request) -> request.header("X-API-Key", "key one"), null);
		assertThat(ambiguity(this.resolver, exchange, KeyBy.API_KEY, null))
			.contains("X-API-Key value contains a space or tab")
			.doesNotContain("key one");
	}

	@Test
	void withoutTheHeaderOrWithAnEmptyValueTheClientIsItsAddress() {
		assertThat(header()).isEqualTo(PEER);
		assertThat(header("X-Tenant-Id: ")).isEqualTo(PEER);
		// the API key header does not count on a header route
		assertThat(header("X-API-Key: key-one")).isEqualTo(PEER);
	}

	@Test
	void severalValuesLookAlikesAndInvisibleCharactersAreAmbiguous() {
		for (String[] lines : new String[][] { { "X-Tenant-Id: tenant-a", "X-Tenant-Id: tenant-b" },
				{ "X-Tenant-Id: tenant-a, tenant-b" }, { "X-Tenant-Id: tenant-a," }, { "X_Tenant_Id: tenant-a" },
				{ "X-Tenant_Id: tenant-a" }, { "X-Tenant-Id: tenant-a\u00a0" }, { "X-Tenant-Id: tenant-a\u007f" },
				{ "X-Tenant-Id: tenant-a\u0085" } }) {
			assertThat(headerAmbiguity(lines)).as(String.join(" | ", lines))
				.contains("X-Tenant-Id")
				.doesNotContain("tenant-a", "tenant-b", "tenant a");
		}
	}

	@Test
	void aHeaderWithUnderscoresHasLookAlikesWithDashes() {
		MockServerWebExchange exchange = exchange((request) -> request.header("X-Tenant-Id", "a"), null);
		assertThat(ambiguity(this.resolver, exchange, KeyBy.HEADER, "X_Tenant_Id"))
			.contains("with '_' for '-' or '-' for '_' (X-Tenant-Id)");
	}

	@Test
	void keyByHeaderNeedsTheHeadersName() {
		MockServerWebExchange exchange = exchange((request) -> {
		}, null);
		assertThatIllegalArgumentException().isThrownBy(() -> this.resolver.resolve(new MockClientRequest(exchange), KeyBy.HEADER));
		assertThatIllegalArgumentException().isThrownBy(() -> this.resolver.resolve(new MockClientRequest(exchange), KeyBy.HEADER, " "));
	}

	private ClientKey principal(String name) {
		return resolve(this.resolver, exchange((request) -> {
		}, () -> name), KeyBy.PRINCIPAL, null);
	}

	private ClientKey header(String... lines) {
		return resolve(this.resolver, headerExchange(lines), KeyBy.HEADER, "X-Tenant-Id");
	}

	private String headerAmbiguity(String... lines) {
		return ambiguity(this.resolver, headerExchange(lines), KeyBy.HEADER, "X-Tenant-Id");
	}

	private static MockServerWebExchange headerExchange(String... lines) {
		return exchange((request) -> {
			for (String line : lines) {
				int colon = line.indexOf(':');
				request.header(line.substring(0, colon), line.substring(colon + 1).replaceFirst("^ ", ""));
			}
		}, null);
	}

	/** The client, which must not be ambiguous; {@code null} when not identified. */
	private static ClientKey resolve(DefaultClientKeyResolver resolver, MockServerWebExchange exchange, KeyBy keyBy,
			String header) {
		ClientResolution resolution = resolution(resolver, exchange, keyBy, header);
		assertThat(resolution.ambiguity()).isNull();
		return resolution.client();
	}

	/** What is ambiguous about the request, which must be. */
	private static String ambiguity(DefaultClientKeyResolver resolver, MockServerWebExchange exchange, KeyBy keyBy,
			String header) {
		ClientResolution resolution = resolution(resolver, exchange, keyBy, header);
		assertThat(resolution.isAmbiguous()).as("ambiguous").isTrue();
		return resolution.ambiguity();
	}

	private static ClientResolution resolution(DefaultClientKeyResolver resolver, MockServerWebExchange exchange,
			KeyBy keyBy, String header) {
		try {
			return resolver.resolve(new MockClientRequest(exchange), keyBy, header)
				.toCompletableFuture()
				.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			throw new AssertionError(ex);
		}
	}

	private static MockServerWebExchange exchange(Consumer<MockServerHttpRequest.BaseBuilder<?>> headers,
			Principal principal) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/x")
			.remoteAddress(new InetSocketAddress("192.0.2.1", 40000));
		headers.accept(request);
		MockServerWebExchange.Builder exchange = MockServerWebExchange.builder(request.build());
		if (principal != null) {
			exchange.principal(principal);
		}
		return exchange.build();
	}

	private static DefaultClientKeyResolver resolver(PrincipalPlanResolver principalPlans) {
		return new DefaultClientKeyResolver("X-API-Key", PLANS, (apiKey) -> CompletableFuture.completedFuture(Optional.of("free")), principalPlans,
				new ClientAddressResolver(0));
	}

}
