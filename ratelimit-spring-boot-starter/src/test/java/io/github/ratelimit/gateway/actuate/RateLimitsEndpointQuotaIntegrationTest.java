package io.github.ratelimit.gateway.actuate;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;

import io.github.ratelimit.gateway.webflux.BaseRouteIntegrationTest;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client's calendar quota through the {@code ratelimits} endpoint: read (use, what is left, period, reset), topped
 * up and reset, through real HTTP into a real gateway with a real Redis (profiles {@code gateway-it},
 * {@code observability-it}: writes allowed, and {@code quota-endpoint-it}: a quota of 5 a day in UTC).
 */
@ActiveProfiles({ "gateway-it", "observability-it", "quota-endpoint-it" })
class RateLimitsEndpointQuotaIntegrationTest extends BaseRouteIntegrationTest {

	private static final String QUOTA = "/actuator/ratelimits/quota";

	@Test
	void anExhaustedQuotaIsReadToppedUpByExactlyTheTokensAndReset() {
		assertThat(admitted("key-one", 10)).isEqualTo(5);
		Instant dayStart = LocalDate.now(ZoneOffset.UTC).atStartOfDay(ZoneOffset.UTC).toInstant();
		this.client.get().uri(QUOTA + "?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.buckets.length()").isEqualTo(2)
			.jsonPath("$.buckets[0].policy").isEqualTo("free-quota")
			.jsonPath("$.buckets[1].policy").isEqualTo("free-quota-day")
			.jsonPath("$.buckets[1].algorithm").isEqualTo("quota")
			.jsonPath("$.buckets[1].scope").isEqualTo("client")
			.jsonPath("$.buckets[1].limit").isEqualTo(5)
			.jsonPath("$.buckets[1].period").isEqualTo("day")
			.jsonPath("$.buckets[1].zone").isEqualTo("UTC")
			.jsonPath("$.buckets[1].used").isEqualTo(5)
			.jsonPath("$.buckets[1].remaining").isEqualTo(0)
			.jsonPath("$.buckets[1].periodStart").isEqualTo(dayStart.toString())
			.jsonPath("$.buckets[1].resetAt").isEqualTo(dayStart.plusSeconds(86_400).toString())
			.jsonPath("$.buckets[1].tokens").doesNotExist();

		post(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=3")
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.policy").isEqualTo("free-quota-day")
			.jsonPath("$.tokensAdded").isEqualTo(3)
			.jsonPath("$.quota.used").isEqualTo(2)
			.jsonPath("$.quota.remaining").isEqualTo(3)
			.jsonPath("$.quota.resetAt").isEqualTo(dayStart.plusSeconds(86_400).toString())
			.consumeWith((result) -> assertThat(new String(result.getResponseBodyContent())).doesNotContain("key-one"));
		// the denial this instance remembered is forgotten: exactly 3 more, at once
		assertThat(admitted("key-one", 10)).isEqualTo(3);

		this.client.delete().uri(QUOTA + "?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.bucketsReset").isEqualTo(2);
		readUse("key-one", 0, 5);
		assertThat(admitted("key-one", 10)).isEqualTo(5);
	}

	@Test
	void aTopUpBeyondTheUseAdmitsMoreThanTheLimitThisPeriodAndComesAsJsonToo() {
		assertThat(admitted("key-two", 1)).isEqualTo(1);
		this.client.post().uri(QUOTA).contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("apiKey", "key-two", "policy", "free-quota-day", "tokens", 10))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.quota.used").isEqualTo(-9).jsonPath("$.quota.remaining").isEqualTo(14);
		// RateLimit's r shows at most the limit
		get("/quota/1", "key-two").expectStatus().isOk()
			.expectHeader().valueMatches("RateLimit", ".*\"free-quota-day\";r=5;t=\\d+$");
		assertThat(admitted("key-two", 20)).isEqualTo(13);
		readUse("key-two", 5, 0);
	}

	@Test
	void tokensAddedIsWhatWasAddedUpToTheBoundOfTwoToThe53LessTheLimit() {
		assertThat(admitted("key-two", 1)).isEqualTo(1);
		// a period's top-ups add up to at most 2^53 - 5: the first is cut to that, the next adds nothing
		post(QUOTA + "?apiKey=key-two&policy=free-quota-day&tokens=9007199254740992")
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.tokensAdded").isEqualTo(9007199254740987L)
			.jsonPath("$.quota.used").isEqualTo(1 - 9007199254740987L);
		post(QUOTA + "?apiKey=key-two&policy=free-quota-day&tokens=1000")
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.tokensAdded").isEqualTo(0)
			.jsonPath("$.quota.used").isEqualTo(1 - 9007199254740987L);
	}

	@Test
	void badTopUpsAre400WithTheReasonAndChangeNothing() {
		assertThat(admitted("key-one", 2)).isEqualTo(2);
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day", "tokens must be a whole number from 1 to 9007199254740992");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=0",
				"tokens must be a whole number from 1 to 9007199254740992, was 0");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=-2",
				"tokens must be a whole number from 1 to 9007199254740992, was -2");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=9007199254740993",
				"tokens must be a whole number from 1 to 9007199254740992, was 9007199254740993");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=1.5",
				"tokens must be a whole number from 1 to 9007199254740992");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-day&tokens=99999999999999999999",
				"tokens must be a whole number from 1 to 9007199254740992");
		badTopUp(QUOTA + "?apiKey=key-one&tokens=1",
				"give policy, the name of a quota of plan 'free' in group 'quota' (its quotas: free-quota-day)");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota&tokens=1",
				"'free-quota' is not a quota of plan 'free' in group 'quota' (its quotas: free-quota-day)");
		badTopUp(QUOTA + "?apiKey=key-one&policy=free-quota-shared-day&tokens=1",
				"no limit 'free-quota-shared-day' in plan 'free' in group 'quota' (its quotas: free-quota-day)");
		badTopUp("/actuator/ratelimits/quota-shared?apiKey=key-one&policy=quota-shared-global-day&tokens=1",
				"quota 'quota-shared-global-day' is global, shared by every client of the group: it is not topped up "
						+ "for one client");
		badTopUp(QUOTA + "?policy=free-quota-day&tokens=1", "give exactly one of apiKey or ip");
		post("/actuator/ratelimits/no-such-group?apiKey=key-one&policy=free-quota-day&tokens=1")
			.expectStatus().isNotFound();
		readUse("key-one", 2, 3);
	}

	@Test
	void aGroupWithAGlobalQuotaShowsBothAndTopsUpTheClientsOwn() {
		assertThat(admitted("/quota-shared/", "key-one", 2)).isEqualTo(2);
		post("/actuator/ratelimits/quota-shared?apiKey=key-one&policy=free-quota-shared-day&tokens=4")
			.expectStatus().isOk()
			.expectBody().jsonPath("$.quota.used").isEqualTo(-2);
		this.client.get().uri("/actuator/ratelimits/quota-shared?apiKey=key-one").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.buckets[0].policy").isEqualTo("free-quota-shared-day")
			.jsonPath("$.buckets[0].used").isEqualTo(-2)
			.jsonPath("$.buckets[0].remaining").isEqualTo(7)
			.jsonPath("$.buckets[1].policy").isEqualTo("quota-shared-global-day")
			.jsonPath("$.buckets[1].scope").isEqualTo("global")
			.jsonPath("$.buckets[1].used").isEqualTo(2)
			.jsonPath("$.buckets[1].remaining").isEqualTo(48);
	}

	@Test
	void theOverviewShowsAQuotasLimitAndPeriod() {
		this.client.get().uri("/actuator/ratelimits").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.plans.free.groups.quota[1].policy").isEqualTo("free-quota-day")
			.jsonPath("$.plans.free.groups.quota[1].limit").isEqualTo(5)
			.jsonPath("$.plans.free.groups.quota[1].period").isEqualTo("day")
			.jsonPath("$.plans.free.groups.quota[1].zone").isEqualTo("UTC")
			.jsonPath("$.plans.free.groups.quota[1].refillPeriod").doesNotExist();
	}

	/** Requests to {@code /quota/} with an API key until one is denied (at most {@code most}): how many passed. */
	private int admitted(String apiKey, int most) {
		return admitted("/quota/", apiKey, most);
	}

	private int admitted(String path, String apiKey, int most) {
		for (int i = 0; i < most; i++) {
			HttpStatus status = HttpStatus.valueOf(get(path + i, apiKey).returnResult(Void.class).getStatus().value());
			if (status == HttpStatus.TOO_MANY_REQUESTS) {
				return i;
			}
			assertThat(status).isEqualTo(HttpStatus.OK);
		}
		return most;
	}

	/** A POST as Boot's actuator takes it: JSON (here without a body, the parameters in the query). */
	private WebTestClient.ResponseSpec post(String uri) {
		return this.client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).exchange();
	}

	private void readUse(String apiKey, long used, long remaining) {
		this.client.get().uri(QUOTA + "?apiKey=" + apiKey).exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.buckets[1].used").isEqualTo(used)
			.jsonPath("$.buckets[1].remaining").isEqualTo(remaining);
	}

	private WebTestClient.BodyContentSpec badTopUp(String uri, String error) {
		return post(uri).expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error").isEqualTo(error);
	}

}
