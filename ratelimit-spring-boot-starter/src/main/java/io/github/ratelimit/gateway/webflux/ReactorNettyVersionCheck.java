package io.github.ratelimit.gateway.webflux;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.netty.http.server.HttpServer;

/**
 * Warns at start-up when the Reactor Netty on the class path can leave a request on a keep-alive connection
 * unanswered: releases before 1.3.8 stop reading a connection when a request queued behind an asynchronous answer is
 * answered synchronously (reactor-netty issue #4361, fixed by PR #4347 in 1.3.8), and the limiter answers both ways
 * (a decision from Redis, a remembered denial or a lease). The fix is to manage {@code reactor-bom.version} 2025.0.8
 * (Reactor Netty 1.3.8) or later and {@code netty.version} 4.2.18.Final or later.
 */
final class ReactorNettyVersionCheck {

	private static final Logger logger = LoggerFactory.getLogger(ReactorNettyVersionCheck.class);

	private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

	private ReactorNettyVersionCheck() {
	}

	/** Log one WARN when the Reactor Netty HTTP server on the class path is affected; nothing otherwise. */
	static void warnIfAffected() {
		String version = HttpServer.class.getPackage().getImplementationVersion();
		if (isAffected(version)) {
			logger.warn("Reactor Netty {} can leave a request on a keep-alive connection unanswered when rate limit "
					+ "decisions from Redis and from memory mix on it (reactor-netty issue #4361, fixed in 1.3.8): "
					+ "set the Maven/Gradle property reactor-bom.version to 2025.0.8 or later and netty.version to "
					+ "4.2.18.Final or later", version);
		}
	}

	/**
	 * Whether a Reactor Netty version has issue #4361.
	 * @param version the jar's {@code Implementation-Version} (such as {@code 1.3.6}); {@code null} when unknown
	 * @return {@code true} for 1.3.0 to 1.3.7; {@code false} for later releases, other lines, and versions not
	 * known or not of the form {@code major.minor.patch...}
	 */
	static boolean isAffected(@Nullable String version) {
		if (version == null) {
			return false;
		}
		Matcher matcher = VERSION.matcher(version);
		if (!matcher.find()) {
			return false;
		}
		int major = Integer.parseInt(matcher.group(1));
		int minor = Integer.parseInt(matcher.group(2));
		int patch = Integer.parseInt(matcher.group(3));
		return major == 1 && minor == 3 && patch < 8;
	}

}
