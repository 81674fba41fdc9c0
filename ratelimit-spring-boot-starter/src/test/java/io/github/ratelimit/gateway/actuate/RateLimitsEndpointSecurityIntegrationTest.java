package io.github.ratelimit.gateway.actuate;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import com.jayway.jsonpath.JsonPath;
import io.github.ratelimit.gateway.chain.DefaultLimiterChain;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import io.github.ratelimit.gateway.route.RateLimitRoutes;
import io.github.ratelimit.gateway.plan.PlanResolver;
import io.github.ratelimit.gateway.properties.LimitResolver;
import io.github.ratelimit.gateway.properties.RateLimitProperties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint behind real Spring Security (HTTP Basic), in a real gateway with a real Redis, with
 * the default {@code management.endpoint.ratelimits.show-clients} ({@code when-authorized}) and
 * {@code roles: OPERATOR}. The security chain lets every request through, so the endpoint alone decides: a caller
 * who is not an operator (anonymous, or {@code dev} without the role) gets one and the same answer for every client
 * lookup, and nothing is looked up for it; {@code ops} gets the real answers.
 */
@SpringBootTest(classes = RateLimitsEndpointSecurityIntegrationTest.SecuredGateway.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.profiles.active=gateway-it",
				// Spring Security's auto-configuration back on (src/test/resources/application.yml excludes it for
				// every other test context of the starter)
				"spring.autoconfigure.exclude=",
				// the actuator on a port of its own, as in the sample: Spring Security guards that port too
				"management.server.port=0", "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=unrestricted",
				"management.endpoint.ratelimits.roles=OPERATOR" })
class RateLimitsEndpointSecurityIntegrationTest extends BaseRouteIntegrationTest {

	private static final String NOT_SHOWN = "{\"error\":\"client buckets are shown to operators only "
			+ "(management.endpoint.ratelimits.show-clients)\"}";

	@LocalManagementPort
	int managementPort;

	@Autowired
	RateLimitsEndpointProperties access;

	@Autowired
	RateLimitProperties properties;

	@Autowired
	LimitResolver limits;

	@Autowired
	DefaultLimiterChain chain;

	@Autowired
	RateLimitRoutes routes;

	/** Requests to the actuator. */
	WebTestClient management;

	@BeforeEach
	void setUp() {
		SecuredGateway.ASKED.clear();
		this.management = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.managementPort)
			.responseTimeout(Duration.ofSeconds(10)).build();
	}

	@Test
	void theDefaultsAreWhenAuthorizedAndTheConfiguredRoles() {
		assertThat(this.access.getShowClients()).isEqualTo(Show.WHEN_AUTHORIZED);
		assertThat(this.access.getRoles()).containsExactly("OPERATOR");
	}

	@Test
	void callersWhoAreNotOperatorsGetOneAnswerForEveryLookup() {
		// real state: key-one has spent its 2 tokens of group a, 127.0.0.1 has a bucket of route ip
		traffic("/a/1", "key-one").expectStatus().isOk();
		traffic("/a/2", "key-one").expectStatus().isOk();
		traffic("/ip/1", null).expectStatus().isOk();
		SecuredGateway.ASKED.clear();

		List<String> lookups = List.of("GET /actuator/ratelimits/a?apiKey=key-one",
				"GET /actuator/ratelimits/a?apiKey=never-issued", "GET /actuator/ratelimits/ip?ip=127.0.0.1",
				"GET /actuator/ratelimits/ip?ip=192.0.2.7", "GET /actuator/ratelimits/no-such-group?apiKey=key-one",
				"GET /actuator/ratelimits/a", "GET /actuator/ratelimits/a?ip=not-an-ip",
				"DELETE /actuator/ratelimits/a?apiKey=key-one", "DELETE /actuator/ratelimits/a?apiKey=never-issued",
				"DELETE /actuator/ratelimits/no-such-group?ip=127.0.0.1",
				"POST /actuator/ratelimits/a?apiKey=key-one&policy=free-a&tokens=1",
				"POST /actuator/ratelimits/a?apiKey=never-issued&policy=free-a&tokens=1",
				"POST /actuator/ratelimits/a?ip=127.0.0.1&tokens=0");
		List<Answer> answers = new ArrayList<>();
		for (Consumer<HttpHeaders> caller : List.<Consumer<HttpHeaders>>of(anonymous(), basic("dev"))) {
			for (String lookup : lookups) {
				answers.add(call(lookup, caller));
			}
		}

		assertThat(answers).hasSize(2 * lookups.size())
			.allSatisfy((answer) -> assertThat(answer).isEqualTo(answers.get(0)));
		assertThat(answers.get(0).status()).isEqualTo(HttpStatus.FORBIDDEN.value());
		assertThat(answers.get(0).body()).isEqualTo(NOT_SHOWN);
		assertThat(SecuredGateway.ASKED).as("no API key looked up for them").isEmpty();
		// nothing was reset: key-one's bucket is still empty, as the operator sees
		Answer seenByOps = call("GET /actuator/ratelimits/a?apiKey=key-one", basic("ops"));
		assertThat(seenByOps.status()).isEqualTo(200);
		assertThat(seenByOps.<Integer>json("$.buckets[0].tokens")).isZero();
	}

	@Test
	void operatorsGetTheRealAnswers() {
		traffic("/a/1", "key-one").expectStatus().isOk();
		Answer known = call("GET /actuator/ratelimits/a?apiKey=key-one", basic("ops"));
		assertThat(known.status()).isEqualTo(200);
		assertThat(known.<String>json("$.client")).isEqualTo("k:" + ApiKeyHasher.hash("key-one"));
		assertThat(known.<String>json("$.plan")).isEqualTo("free");
		assertThat(known.<String>json("$.buckets[0].policy")).isEqualTo("free-a");
		assertThat(known.<Integer>json("$.buckets[0].tokens")).isEqualTo(1);
		Answer unknown = call("GET /actuator/ratelimits/a?apiKey=never-issued", basic("ops"));
		assertThat(unknown.status()).isEqualTo(404);
		assertThat(unknown.body()).contains("unknown API key").doesNotContain("never-issued");
		assertThat(SecuredGateway.ASKED).contains("key-one", "never-issued");
		assertThat(call("GET /actuator/ratelimits/no-such-group?ip=127.0.0.1", basic("ops")).status()).isEqualTo(404);
		assertThat(call("GET /actuator/ratelimits/a", basic("ops")).status()).isEqualTo(400);
		Answer reset = call("DELETE /actuator/ratelimits/a?apiKey=key-one", basic("ops"));
		assertThat(reset.status()).isEqualTo(200);
		assertThat(reset.<Integer>json("$.bucketsReset")).isEqualTo(1);
	}

	@Test
	void theOverviewStaysOpenToEveryCaller() {
		for (Consumer<HttpHeaders> caller : List.of(anonymous(), basic("dev"), basic("ops"))) {
			Answer overview = call("GET /actuator/ratelimits", caller);
			assertThat(overview.status()).isEqualTo(200);
			assertThat(overview.<Integer>json("$.staticApiKeys")).isEqualTo(2);
			assertThat(overview.<String>json("$.routes.a.group")).isEqualTo("a");
			assertThat(overview.body()).doesNotContain("key-one");
		}
		// Spring Security is really in front: wrong credentials never get as far as the endpoint
		assertThat(call("GET /actuator/ratelimits", (headers) -> headers.setBasicAuth("ops", "wrong")).status())
			.isEqualTo(401);
	}

	@Test
	void neverShowsClientsEvenToOperatorsAndAlwaysShowsThemToAnyone() {
		traffic("/a/1", "key-one").expectStatus().isOk();
		Principal ops = new UsernamePasswordAuthenticationToken("ops", null,
				AuthorityUtils.createAuthorityList("ROLE_OPERATOR"));
		SecurityContext operator = new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return ops;
			}

			@Override
			public boolean isUserInRole(String role) {
				return "OPERATOR".equals(role);
			}

		};
		WebEndpointResponse<Map<String, Object>> never = endpoint(Show.NEVER).buckets(operator, "a", "key-one", null);
		assertThat(never.getStatus()).isEqualTo(403);
		assertThat(never.getBody()).containsOnlyKeys("error");
		WebEndpointResponse<Map<String, Object>> always = endpoint(Show.ALWAYS)
			.buckets(SecurityContext.NONE, "a", "key-one", null);
		assertThat(always.getStatus()).isEqualTo(200);
		assertThat(always.getBody()).containsEntry("plan", "free");
	}

	private RateLimitsEndpoint endpoint(Show showClients) {
		RateLimitsEndpointProperties access = new RateLimitsEndpointProperties();
		access.setShowClients(showClients);
		access.setRoles(Set.of("OPERATOR"));
		return new RateLimitsEndpoint(this.properties, this.limits, SecuredGateway.PLANS,
				this.chain.store(), this.routes, this.overLimitCache, access);
	}

	private WebTestClient.ResponseSpec traffic(String path, String apiKey) {
		return this.client.get().uri(path).headers((headers) -> {
			if (apiKey != null) {
				headers.set("X-API-Key", apiKey);
			}
		}).exchange();
	}

	private Answer call(String request, Consumer<HttpHeaders> caller) {
		String[] parts = request.split(" ", 2);
		EntityExchangeResult<byte[]> result = this.management.method(HttpMethod.valueOf(parts[0]))
			.uri(parts[1])
			.headers(caller)
			.headers((headers) -> {
				if (parts[0].equals("POST")) {
					headers.setContentType(MediaType.APPLICATION_JSON); // a write operation takes JSON only
				}
			})
			.exchange()
			.expectBody()
			.returnResult();
		byte[] body = result.getResponseBodyContent();
		return new Answer(result.getStatus().value(), result.getResponseHeaders().getContentType(),
				(body != null) ? new String(body) : "", body);
	}

	private static Consumer<HttpHeaders> anonymous() {
		return (headers) -> {
		};
	}

	private static Consumer<HttpHeaders> basic(String user) {
		return (headers) -> headers.setBasicAuth(user, user + "-secret");
	}

	/** What a caller sees of one answer; equal when status, content type and body bytes are. */
	record Answer(int status, MediaType contentType, String body, byte[] bytes) {

		<T> T json(String path) {
			return JsonPath.read(this.body, path);
		}

		@Override
		public boolean equals(Object other) {
			return (other instanceof Answer that) && this.status == that.status
					&& Objects.equals(this.contentType, that.contentType) && Arrays.equals(this.bytes, that.bytes);
		}

		@Override
		public int hashCode() {
			return 31 * this.status + Arrays.hashCode(this.bytes);
		}

		@Override
		public String toString() {
			return this.status + " " + this.contentType + " " + this.body;
		}

	}

	/**
	 * The route tests' gateway plus Spring Security: HTTP Basic users {@code ops} (role OPERATOR) and {@code dev} (no
	 * role), a chain that lets every request through (the endpoint alone decides who sees clients), and a
	 * {@link PlanResolver} that records every API key it is asked about.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class SecuredGateway {

		static final List<String> ASKED = new CopyOnWriteArrayList<>();

		static final PlanResolver PLANS = (apiKey) -> {
			ASKED.add(apiKey.value());
			return CompletableFuture.completedFuture((apiKey.value().equals("key-one") || apiKey.value().equals("key-two"))
					? Optional.of("free") : Optional.empty());
		};

		@Bean
		PlanResolver recordingPlanResolver() {
			return PLANS;
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("ops").password("{noop}ops-secret").roles("OPERATOR").build(),
					User.withUsername("dev").password("{noop}dev-secret").roles().build());
		}

		@Bean
		SecurityWebFilterChain everyRequestThrough(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

	}

}
