package io.github.ratelimit.gateway.webflux;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReactorNettyVersionCheckTest {

	@Test
	void releasesOfTheLineBeforeTheFixAreAffected() {
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.0")).isTrue();
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.6")).isTrue();
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.7")).isTrue();
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.7-SNAPSHOT")).isTrue();
	}

	@Test
	void theFixAndLaterReleasesAreNot() {
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.8")).isFalse();
		assertThat(ReactorNettyVersionCheck.isAffected("1.3.10")).isFalse();
		assertThat(ReactorNettyVersionCheck.isAffected("1.4.0-M1")).isFalse();
		assertThat(ReactorNettyVersionCheck.isAffected("2.0.0")).isFalse();
	}

	@Test
	void anUnknownVersionIsNotWarnedAbout() {
		assertThat(ReactorNettyVersionCheck.isAffected(null)).isFalse();
		assertThat(ReactorNettyVersionCheck.isAffected("")).isFalse();
		assertThat(ReactorNettyVersionCheck.isAffected("unknown")).isFalse();
	}

	@Test
	void theBuildRunsAReleaseWithTheFix() {
		String version = reactor.netty.http.server.HttpServer.class.getPackage().getImplementationVersion();
		assertThat(version).isNotNull();
		assertThat(ReactorNettyVersionCheck.isAffected(version)).isFalse();
	}

}
