package io.github.ratelimit.gateway.webflux;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.github.ratelimit.gateway.client.ApiKeyHasher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients identified by their authenticated principal ({@code key-by: principal}, profile {@code identity-it}) in a
 * real gateway behind Spring Security's resource server, which validates JWTs signed here with a locally generated
 * RSA key (the decoder holds its public key; no identity provider). Buckets in a real Redis, real HTTP in, a real
 * recording upstream behind. The principal's name is the token's {@code sub}; its plan the {@code plan} claim, else
 * a scope {@code plan:<plan>} (authority {@code SCOPE_plan:<plan>}), else {@code ratelimit.principal.default-plan}
 * ({@code free}: 3 tokens). Requests without a token are anonymous (the chain enables anonymous authentication) and
 * limited by IP address (2 tokens).
 */
@SpringBootTest(classes = PrincipalClientRoutesIntegrationTest.ResourceServerGateway.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("identity-it")
@ExtendWith(OutputCaptureExtension.class)
class PrincipalClientRoutesIntegrationTest extends BaseRouteIntegrationTest {

	/** The key the gateway's decoder trusts. */
	private static final KeyPair SIGNING = rsaKeyPair();

	/** A key the gateway does not know. */
	private static final KeyPair OTHER = rsaKeyPair();

	@Test
	void twoPrincipalsShareNothing() {
		String alice = token(SIGNING, "alice", Map.of());
		for (int i = 0; i < 3; i++) {
			me(this.client, alice).expectStatus().isOk();
		}
		me(this.client, alice).expectStatus().isEqualTo(429);
		me(this.client, token(SIGNING, "bob", Map.of())).expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"free-me\";q=3;w=10800")
			.expectHeader()
			.valueMatches("RateLimit", aboutRateLimit("\"free-me\";r=2;t=3600"));
	}

	@Test
	void onePrincipalAcrossTwoGatewayInstancesHasOneLimit() {
		String carol = token(SIGNING, "carol", Map.of());
		// its own Reactor Netty event loops: closing it must not dispose the global ones that this JVM's other
		// servers (this test's gateway, the recording upstream) run on
		try (ConfigurableApplicationContext second = new SpringApplicationBuilder(ResourceServerGateway.class)
			.profiles("identity-it")
			.initializers((ApplicationContextInitializer<GenericApplicationContext>) (context) -> context
				.registerBean(ReactorResourceFactory.class, PrincipalClientRoutesIntegrationTest::ownEventLoops))
			.run("--server.port=0", "--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--upstream.uri=" + upstream.uri())) {
			WebTestClient other = WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + second.getEnvironment().getRequiredProperty("local.server.port"))
				.responseTimeout(Duration.ofSeconds(10))
				.build();
			List<Integer> statuses = new ArrayList<>();
			List<String> remaining = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				EntityExchangeResult<byte[]> result = me((i % 2 == 0) ? this.client : other, carol).expectBody()
					.returnResult();
				statuses.add(result.getStatus().value());
				remaining.add(result.getResponseHeaders().getFirst("RateLimit"));
			}
			// free: 3 tokens for carol in all, taken alternately on this instance and the other
			assertThat(statuses).containsExactly(200, 200, 200, 429, 429, 429);
			assertThat(remaining.get(0)).matches(aboutRateLimit("\"free-me\";r=2;t=3600"));
			assertThat(remaining.get(1)).matches(aboutRateLimit("\"free-me\";r=1;t=7200"));
			assertThat(remaining.get(2)).matches(aboutRateLimit("\"free-me\";r=0;t=10800"));
		}
	}

	@Test
	void expiredBadlySignedOrMalformedTokensGetSecuritys401BeforeAnyTokenIsTaken() {
		Instant past = Instant.now().minus(Duration.ofHours(1));
		List<String> refused = List.of(token(SIGNING, "dave", Map.of(), past, past.plus(Duration.ofMinutes(5))),
				token(OTHER, "dave", Map.of()), "not-a-jwt");
		for (String bad : refused) {
			me(this.client, bad).expectStatus()
				.isUnauthorized()
				.expectHeader()
				.valueMatches(HttpHeaders.WWW_AUTHENTICATE, "Bearer.*invalid_token.*");
		}
		assertThat(upstream.received()).isEmpty();
		assertThat(redis.command("KEYS", "rl:{me|*")).as("no bucket written").isEmpty();
		// dave's first valid request finds the whole bucket
		me(this.client, token(SIGNING, "dave", Map.of())).expectStatus()
			.isOk()
			.expectHeader()
			.valueMatches("RateLimit", aboutRateLimit("\"free-me\";r=2;t=3600"));
	}

	@Test
	void thePlanComesFromTheClaimElseAnAuthorityElseTheDefaultPlan() {
		me(this.client, token(SIGNING, "erin", Map.of("plan", "pro"))).expectHeader()
			.valueEquals("RateLimit-Policy", "\"pro-me\";q=6;w=21600");
		// scope "plan:pro": Spring Security's authority SCOPE_plan:pro, with plan-authority-prefix SCOPE_plan:
		me(this.client, token(SIGNING, "frank", Map.of("scope", "read plan:pro"))).expectHeader()
			.valueEquals("RateLimit-Policy", "\"pro-me\";q=6;w=21600");
		// the claim wins over an authority
		me(this.client, token(SIGNING, "grace", Map.of("plan", "free", "scope", "plan:pro"))).expectHeader()
			.valueEquals("RateLimit-Policy", "\"free-me\";q=3;w=10800");
		// neither: ratelimit.principal.default-plan
		me(this.client, token(SIGNING, "heidi", Map.of("scope", "read"))).expectHeader()
			.valueEquals("RateLimit-Policy", "\"free-me\";q=3;w=10800");
	}

	@Test
	void thePrincipalIsNeverStoredOrLoggedRawAndAnUnknownPlanGetsTheDefaultPlan(CapturedOutput output) {
		String subject = "principal-raw-4711@example.com";
		String hash = ApiKeyHasher.hash(subject);
		String platinum = token(SIGNING, subject, Map.of("plan", "platinum"));
		me(this.client, platinum).expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"free-me\";q=3;w=10800");
		me(this.client, platinum).expectStatus().isOk();
		me(this.client, platinum).expectStatus().isOk();
		me(this.client, platinum).expectStatus().isEqualTo(429);

		assertThat(redis.command("KEYS", "rl:{me|*")).isEqualTo("rl:{me|p:" + hash + "}:0");
		assertThat(redis.command("KEYS", "*principal-raw*")).isEmpty();
		assertThat(output.getOut())
			.contains("Principal p:" + hash + " has plan 'platinum', which is not configured; applying plan 'free'")
			.contains("Rate limit denied: client=p:" + hash + " route=me group=me plan=free policies=[free-me]")
			.doesNotContain("principal-raw");
	}

	@Test
	void requestsWithoutATokenAreLimitedByAddressUnderTheAnonymousPlan() {
		WebTestClient fromOne = clientFrom("127.0.0.1");
		fromOne.get().uri("/me/x").exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"anonymous-me\";q=2;w=7200")
			.expectHeader()
			.valueMatches("RateLimit", aboutRateLimit("\"anonymous-me\";r=1;t=3600"));
		fromOne.get().uri("/me/x").exchange().expectStatus().isOk();
		fromOne.get().uri("/me/x").exchange().expectStatus().isEqualTo(429);
		clientFrom("127.0.0.2").get().uri("/me/x").exchange().expectStatus().isOk();
		// an authenticated principal from the same address is not held back by it
		me(fromOne, token(SIGNING, "ivan", Map.of())).expectStatus().isOk();
		assertThat(redis.command("KEYS", "rl:{me|ip:*")).contains("rl:{me|ip:127.0.0.1}:0", "rl:{me|ip:127.0.0.2}:0");
	}

	private static ReactorResourceFactory ownEventLoops() {
		ReactorResourceFactory resources = new ReactorResourceFactory();
		resources.setUseGlobalResources(false);
		return resources;
	}

	private static WebTestClient.ResponseSpec me(WebTestClient client, String token) {
		return client.get().uri("/me/x").headers((headers) -> headers.setBearerAuth(token)).exchange();
	}

	/** A JWT for {@code subject}, valid from now for an hour, with further claims. */
	private static String token(KeyPair keys, String subject, Map<String, Object> claims) {
		Instant now = Instant.now();
		return token(keys, subject, claims, now, now.plus(Duration.ofHours(1)));
	}

	private static String token(KeyPair keys, String subject, Map<String, Object> claims, Instant issuedAt,
			Instant expiresAt) {
		JWTClaimsSet.Builder set = new JWTClaimsSet.Builder().subject(subject)
			.issueTime(Date.from(issuedAt))
			.expirationTime(Date.from(expiresAt));
		claims.forEach(set::claim);
		SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).build(), set.build());
		try {
			jwt.sign(new RSASSASigner(keys.getPrivate()));
		}
		catch (JOSEException ex) {
			throw new IllegalStateException(ex);
		}
		return jwt.serialize();
	}

	private static KeyPair rsaKeyPair() {
		try {
			KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
			generator.initialize(2048);
			return generator.generateKeyPair();
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A gateway behind Spring Security's resource server: every request may pass, a bearer token must be a valid
	 * JWT signed with {@link #SIGNING} (else 401), requests without one are anonymous.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableWebFluxSecurity
	static class ResourceServerGateway {

		@Bean
		SecurityWebFilterChain resourceServer(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.anonymous(Customizer.withDefaults())
				.oauth2ResourceServer((server) -> server.jwt(Customizer.withDefaults()))
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

		@Bean
		ReactiveJwtDecoder jwtDecoder() {
			return NimbusReactiveJwtDecoder.withPublicKey((RSAPublicKey) SIGNING.getPublic()).build();
		}

	}

}
