package io.github.ratelimit.gateway.key;

import java.net.InetSocketAddress;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

class ClientAddressResolverTest {

	private static final InetSocketAddress PEER = new InetSocketAddress("192.0.2.1", 40000);

	@Test
	void withoutTrustedProxiesForwardedForIsIgnored() {
		assertThat(new ClientAddressResolver(0).resolve(exchange("198.51.100.7"))).contains("192.0.2.1");
	}

	@Test
	void oneTrustedProxyTakesTheRightmostEntry() {
		assertThat(new ClientAddressResolver(1).resolve(exchange("6.6.6.6, 198.51.100.7"))).contains("198.51.100.7");
	}

	@Test
	void twoTrustedProxiesTakeTheSecondFromTheRight() {
		assertThat(new ClientAddressResolver(2).resolve(exchange("6.6.6.6, 198.51.100.7, 10.0.0.2")))
			.contains("198.51.100.7");
	}

	@Test
	void noHeaderFallsBackToThePeer() {
		assertThat(new ClientAddressResolver(1).resolve(exchange(null))).contains("192.0.2.1");
	}

	@Test
	void entriesThatAreNotIpLiteralsFallBackToThePeerWithoutLookingUpNames() {
		assertThat(new ClientAddressResolver(1).resolve(exchange("unknown"))).contains("192.0.2.1");
		assertThat(new ClientAddressResolver(1).resolve(exchange("1.2.3.4, attacker.example"))).contains("192.0.2.1");
		assertThat(new ClientAddressResolver(1).resolve(exchange("1.2.3.999"))).contains("192.0.2.1");
	}

	@Test
	void ipv6IsCanonical() {
		assertThat(new ClientAddressResolver(1).resolve(exchange("2001:DB8:0:0::1"))).contains("2001:db8:0:0:0:0:0:1");
	}

	@Test
	void noAddressAtAllIsEmptyNeverAnEmptyKey() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/x"));
		assertThat(new ClientAddressResolver(1).resolve(exchange)).isEqualTo(Optional.empty());
		MockServerWebExchange unresolved = MockServerWebExchange
			.from(MockServerHttpRequest.get("/x").remoteAddress(InetSocketAddress.createUnresolved("somehost", 1)));
		assertThat(new ClientAddressResolver(0).resolve(unresolved)).isEmpty();
	}

	private static MockServerWebExchange exchange(String forwardedFor) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/x").remoteAddress(PEER);
		if (forwardedFor != null) {
			request.header("X-Forwarded-For", forwardedFor);
		}
		return MockServerWebExchange.from(request);
	}

}
