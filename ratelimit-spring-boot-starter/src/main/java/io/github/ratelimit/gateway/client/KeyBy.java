package io.github.ratelimit.gateway.client;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/** What identifies the client a route limits. */
public enum KeyBy {

	/**
	 * The API key from the configured header, with the plan it maps to; requests without a known key fall back to
	 * the client IP address under the anonymous plan.
	 */
	API_KEY,

	/** The client IP address, always under the anonymous plan (for login, OTP and public routes). */
	IP,

	/**
	 * The authenticated principal's name ({@code ServerWebExchange#getPrincipal()}, e.g. a JWT's {@code sub} or an
	 * OAuth2 client id), hashed, with the plan its credentials name ({@code ratelimit.principal.*}); unauthenticated
	 * requests fall back to the client IP address under the anonymous plan.
	 */
	PRINCIPAL,

	/**
	 * The value of a request header the route names ({@code header: X-Tenant-Id}), hashed, under
	 * {@code ratelimit.header-plan}: for a tenant or client id set by an upstream authenticator. Requests without
	 * the header fall back to the client IP address under the anonymous plan.
	 */
	HEADER;

	/**
	 * Parse a {@code key-by} value as written in configuration, leniently: case, {@code -} and {@code _} do not
	 * matter ({@code api-key}, {@code api_key}, {@code API_KEY}, {@code apiKey}, {@code ip}, {@code principal},
	 * {@code header}), nor surrounding blanks.
	 * @param value the value, not {@code null}
	 * @return the parsed value, or {@code null} if it names none
	 */
	public static @Nullable KeyBy parse(String value) {
		String normalized = value.strip().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
		return switch (normalized) {
			case "apikey" -> API_KEY;
			case "ip" -> IP;
			case "principal" -> PRINCIPAL;
			case "header" -> HEADER;
			default -> null;
		};
	}

}
