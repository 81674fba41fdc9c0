package io.github.ratelimit.gateway.webflux;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

import io.github.ratelimit.gateway.webflux.ProblemDetailResponseWriter;
import io.github.ratelimit.gateway.http.RateLimitRefusal;
import io.github.ratelimit.gateway.webflux.RateLimitResponseWriter;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.MessageSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.support.StaticMessageSource;
import org.springframework.http.ProblemDetail;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's own {@link RateLimitResponseWriter} bean replaces the starter's, through a real gateway: here a
 * subclass of {@link ProblemDetailResponseWriter} ({@link LocalisedResponses}) that adds a member and localises
 * {@code detail} by the request's {@code Accept-Language}. It writes the filter's 429 and the path check's 400
 * alike, and keeps what the default writes around the body: the rate limit fields the filter set,
 * {@code Retry-After}, {@code Content-Type} and a {@code Content-Length} counting the UTF-8 bytes.
 */
@ActiveProfiles("gateway-it")
@Import(ResponseWriterRoutesIntegrationTest.LocalisedResponses.class)
class ResponseWriterRoutesIntegrationTest extends BaseRouteIntegrationTest {

	@Autowired
	RateLimitResponseWriter responseWriter;

	@Test
	void theApplicationsWriterIsTheOneBean() {
		assertThat(this.responseWriter).isInstanceOf(LocalisedResponses.Writer.class);
	}

	@Test
	void aDenialIsLocalisedAndCarriesTheAddedMemberAndEveryHeaderField() {
		send("GET", "/a/1", "X-API-Key: key-one");
		send("GET", "/a/2", "X-API-Key: key-one");
		RawHttp.Response german = send("GET", "/a/3", "X-API-Key: key-one", "Accept-Language: de, en;q=0.5");
		// one token per 60 s: 60 s to wait, less the whole seconds the three requests took on a loaded machine
		assertThat(german.header("Retry-After")).isNotNull();
		int retryAfter = Integer.parseInt(german.header("Retry-After"));
		assertThat(retryAfter).isBetween(55, 60);
		String body = "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Request"
				+ " cannot be satisfied as assigned quota has been exceeded\",\"status\":429,\"detail\":\"Kontingent"
				+ " überschritten für free-a; erneut versuchen in " + retryAfter + " s.\",\"instance\":\"/a/3\","
				+ "\"violated-policies\":[\"free-a\"],\"support\":\"https://example.com/support/rate-limits\"}";
		assertThat(german.status()).isEqualTo(429);
		assertThat(german.body()).isEqualTo(body);
		assertThat(german.header("RateLimit-Policy")).isEqualTo("\"free-a\";q=2;w=120");
		assertThat(german.header("RateLimit")).matches(aboutRateLimit("\"free-a\";r=0;t=120"));
		assertThat(german.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(german.header("Content-Length"))
			.isEqualTo(Integer.toString(body.getBytes(StandardCharsets.UTF_8).length))
			.isNotEqualTo(Integer.toString(body.length()));
		// without Accept-Language: the default detail (the Retry-After counted down meanwhile), with the added member
		RawHttp.Response english = send("GET", "/a/4", "X-API-Key: key-one");
		assertThat(english.status()).isEqualTo(429);
		assertThat(english.body()).containsPattern("\"detail\":\"Quota exceeded for free-a; retry after \\d+ s.\"")
			.endsWith(",\"violated-policies\":[\"free-a\"],\"support\":\"https://example.com/support/rate-limits\"}");
	}

	@Test
	void thePathChecksAnswerComesFromTheSameWriter() {
		RawHttp.Response response = send("GET", "/a//x", "Accept-Language: de");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(response.body()).startsWith("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,")
			.contains("\"instance\":\"/a//x\"")
			.endsWith(",\"support\":\"https://example.com/support/rate-limits\"}");
	}

	/**
	 * The application's writer: every answer gets a {@code support} member; a denial's detail comes from the
	 * application's {@link MessageSource} in the request's language (German here), else stays the default.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class LocalisedResponses {

		@Bean
		RateLimitResponseWriter localisedResponseWriter(ServerCodecConfigurer codecs) {
			StaticMessageSource messages = new StaticMessageSource();
			messages.addMessage("ratelimit.quota-exceeded", Locale.GERMAN,
					"Kontingent überschritten für {0}; erneut versuchen in {1} s.");
			return new Writer(codecs, messages);
		}

		static class Writer extends ProblemDetailResponseWriter {

			private final MessageSource messages;

			Writer(ServerCodecConfigurer codecs, MessageSource messages) {
				super(codecs);
				this.messages = messages;
			}

			@Override
			protected ProblemDetail problemDetail(ServerWebExchange exchange, RateLimitRefusal refusal) {
				ProblemDetail problem = super.problemDetail(exchange, refusal);
				Locale locale = exchange.getLocaleContext().getLocale();
				if (refusal.reason() == RateLimitRefusal.Reason.QUOTA_EXCEEDED && locale != null) {
					problem.setDetail(this.messages.getMessage("ratelimit.quota-exceeded",
							new Object[] { String.join(", ", refusal.violatedPolicies()),
									Long.toString(refusal.retryAfterSeconds()) },
							refusal.detail(), locale));
				}
				problem.setProperty("support", "https://example.com/support/rate-limits");
				return problem;
			}

		}

	}

}
