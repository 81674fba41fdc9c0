package io.github.ratelimit.gateway.key;

import java.net.InetSocketAddress;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

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
		assertThat(new ClientAddressResolver(1, 128).resolve(exchange("2001:DB8:0:0::1")))
			.contains("2001:db8:0:0:0:0:0:1");
	}

	@Test
	void ipv6ClientsAreKeyedByTheirSlash64ByDefault() {
		ClientAddressResolver resolver = new ClientAddressResolver(1);
		assertThat(resolver.getIpv6PrefixLength()).isEqualTo(64);
		// one host rotating through the addresses of its /64 stays one client
		assertThat(resolver.resolve(exchange("2001:db8:1:2:aaaa:bbbb:cccc:dddd"))).contains("2001:db8:1:2:0:0:0:0/64");
		assertThat(resolver.resolve(exchange("2001:DB8:1:2::1"))).contains("2001:db8:1:2:0:0:0:0/64");
		assertThat(resolver.resolve(exchange("2001:db8:1:2:ffff:ffff:ffff:ffff"))).contains("2001:db8:1:2:0:0:0:0/64");
		// the neighbouring /64 is another client
		assertThat(resolver.resolve(exchange("2001:db8:1:3::1"))).contains("2001:db8:1:3:0:0:0:0/64");
	}

	@Test
	void ipv6PeerAddressIsKeyedByItsPrefixToo() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/x")
			.remoteAddress(new InetSocketAddress("fe80::1:2:3:4%1", 40000)));
		assertThat(new ClientAddressResolver(0).resolve(exchange)).contains("fe80:0:0:0:0:0:0:0/64");
	}

	@Test
	void ipv6PrefixLengthIsConfigurable() {
		String address = "2001:db8:abcd:12ff:1:2:3:4";
		assertThat(new ClientAddressResolver(1, 48).resolve(exchange(address))).contains("2001:db8:abcd:0:0:0:0:0/48");
		assertThat(new ClientAddressResolver(1, 56).resolve(exchange(address))).contains("2001:db8:abcd:1200:0:0:0:0/56");
		assertThat(new ClientAddressResolver(1, 60).resolve(exchange(address))).contains("2001:db8:abcd:12f0:0:0:0:0/60");
		assertThat(new ClientAddressResolver(1, 127).resolve(exchange(address))).contains("2001:db8:abcd:12ff:1:2:3:4/127");
		assertThat(new ClientAddressResolver(1, 1).resolve(exchange(address))).contains("0:0:0:0:0:0:0:0/1");
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientAddressResolver(1, 0));
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientAddressResolver(1, 129));
	}

	@Test
	void ipv4IsKeyedByAddressWhateverTheIpv6Prefix() {
		assertThat(new ClientAddressResolver(1, 48).resolve(exchange("198.51.100.7"))).contains("198.51.100.7");
		// an IPv4-mapped IPv6 address is the IPv4 client
		assertThat(new ClientAddressResolver(1).resolve(exchange("::ffff:198.51.100.7"))).contains("198.51.100.7");
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
