package io.github.ratelimit.gateway.webflux;

import java.nio.charset.StandardCharsets;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.codec.json.JacksonJsonEncoder;
import org.springframework.http.converter.json.ProblemDetailJacksonMixin;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default writer's body does not depend on how the application's {@code JsonMapper} orders or includes
 * properties (the route tests pin the answers through a gateway with Spring Boot's mapper).
 */
class ProblemDetailResponseWriterTest {

	private static final RateLimitRefusal DENIAL = new RateLimitRefusal(RateLimitRefusal.Reason.QUOTA_EXCEEDED, 60,
			List.of("free-a-1s", "free-a-1d"), null, "Quota exceeded for free-a-1s, free-a-1d; retry after 60 s.");

	private static final String DENIAL_BODY = "{\"type\":\"https://iana.org/assignments/http-problem-types"
			+ "#quota-exceeded\","
			+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
			+ "\"detail\":\"Quota exceeded for free-a-1s, free-a-1d; retry after 60 s.\",\"instance\":\"/a/3\","
			+ "\"violated-policies\":[\"free-a-1s\",\"free-a-1d\"]}";

	@Test
	void theBodyKeepsItsShapeWithAnyMapperSettingForOrderAndInclusion() {
		for (JsonMapper mapper : List.of(JsonMapper.builder().build(), // Jackson 3's defaults: sorted, no mixin
				JsonMapper.builder().addMixIn(ProblemDetail.class, ProblemDetailJacksonMixin.class).build(), // Boot's
				JsonMapper.builder()
					.disable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
					.changeDefaultPropertyInclusion(
							(inclusion) -> inclusion.withValueInclusion(JsonInclude.Include.ALWAYS))
					.build())) {
			MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/a/3?q=1"));
			new ProblemDetailResponseWriter(new JacksonJsonEncoder(mapper)).write(exchange, DENIAL).block();
			assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(exchange.getResponse().getBodyAsString().block()).isEqualTo(DENIAL_BODY);
			assertThat(exchange.getResponse().getHeaders().headerNames()).containsExactly("Content-Type",
					"Content-Length", "Retry-After");
			assertThat(exchange.getResponse().getHeaders().getContentLength())
				.isEqualTo(DENIAL_BODY.getBytes(StandardCharsets.UTF_8).length);
			assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("60");
		}
	}

	@Test
	void emptyMembersAreWrittenAsTheyAreNullsAreLeftOut() {
		RateLimitRefusal noPolicy = new RateLimitRefusal(RateLimitRefusal.Reason.QUOTA_EXCEEDED, 1, List.of(), null,
				"Quota exceeded for ; retry after 1 s.");
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/a"));
		ProblemDetailResponseWriter writer = new ProblemDetailResponseWriter(new JacksonJsonEncoder()) {

			@Override
			protected ProblemDetail problemDetail(ServerWebExchange exchange, RateLimitRefusal refusal) {
				ProblemDetail problem = super.problemDetail(exchange, refusal);
				problem.setDetail(null);
				return problem;
			}

		};
		writer.write(exchange, noPolicy).block();
		assertThat(exchange.getResponse().getBodyAsString().block()).isEqualTo("{\"type\":\"https://iana.org"
				+ "/assignments/http-problem-types#quota-exceeded\",\"title\":\"Request cannot be satisfied as assigned"
				+ " quota has been exceeded\",\"status\":429,\"instance\":\"/a\",\"violated-policies\":[]}");
	}

	@Test
	void aRefusalBeforeAnyCheckHasNoRetryAfter() {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.method(HttpMethod.TRACE, "/x"));
		new ProblemDetailResponseWriter(new JacksonJsonEncoder())
			.write(exchange, RateLimitRefusal.methodNotImplemented("TRACE"))
			.block();
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.NOT_IMPLEMENTED);
		assertThat(exchange.getResponse().getHeaders().containsHeader("Retry-After")).isFalse();
		assertThat(exchange.getResponse().getBodyAsString().block()).isEqualTo("{\"type\":\"about:blank\",\"title\":"
				+ "\"Not Implemented\",\"status\":501,\"detail\":\"The gateway does not route TRACE requests.\","
				+ "\"instance\":\"/x\"}");
	}

}
