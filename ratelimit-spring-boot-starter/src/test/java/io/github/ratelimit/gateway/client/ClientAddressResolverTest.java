package io.github.ratelimit.gateway.client;

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
		assertThat(new ClientAddressResolver(1).resolve(exchange((String[]) null))).contains("192.0.2.1");
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
		assertThat(new ClientAddressResolver(0).resolve(new MockClientRequest(exchange))).contains("fe80:0:0:0:0:0:0:0/64");
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
		assertThat(new ClientAddressResolver(1).resolve(new MockClientRequest(exchange))).isEqualTo(Optional.empty());
		MockServerWebExchange unresolved = MockServerWebExchange
			.from(MockServerHttpRequest.get("/x").remoteAddress(InetSocketAddress.createUnresolved("somehost", 1)));
		assertThat(new ClientAddressResolver(0).resolve(new MockClientRequest(unresolved))).isEmpty();
	}

	@Test
	void severalForwardedForLinesAreCombinedInOrder() {
		// the client sent its own line, the trusted proxy added another: the proxy's entry is the rightmost
		assertThat(new ClientAddressResolver(1).resolve(exchange("6.6.6.6", "198.51.100.7"))).contains("198.51.100.7");
		assertThat(new ClientAddressResolver(2).resolve(exchange("6.6.6.6, 198.51.100.7", "10.0.0.2")))
			.contains("198.51.100.7");
		// empty list elements and empty lines are ignored (RFC 9110 section 5.6.1)
		assertThat(new ClientAddressResolver(1).resolve(exchange("6.6.6.6,,", "", " 198.51.100.7 ,")))
			.contains("198.51.100.7");
		// fewer entries than trusted proxies: the leftmost, as Gateway's own resolver picks it
		assertThat(new ClientAddressResolver(3).resolve(exchange("198.51.100.7", "10.0.0.2"))).contains("198.51.100.7");
		// only empty entries: the peer
		assertThat(new ClientAddressResolver(1).resolve(exchange(",", " "))).contains("192.0.2.1");
	}

	@Test
	void hostNamesAndLooseLiteralsAreNeverLookedUp() {
		// "localhost" would resolve to 127.0.0.1 and ".5:6" reached getaddrinfo before: both count as the peer
		for (String entry : new String[] { "localhost", ".5:6", "5:6", "1.2.3", "127.1", "0x7f.0.0.1", "1.2.3.4.5",
				"1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:8o", "[::1", "[::1]x", "[1.2.3.4]", "::1]", "1::2::3", "%", "[]" }) {
			assertThat(new ClientAddressResolver(1).resolve(exchange(entry))).as(entry).contains("192.0.2.1");
			assertThat(ClientAddressResolver.addressOf(entry)).as(entry).isNull();
		}
	}

	@Test
	void literalsWithPortsBracketsAndZonesAreParsed() {
		ClientAddressResolver resolver = new ClientAddressResolver(1, 128);
		assertThat(resolver.resolve(exchange("198.51.100.7:4711"))).contains("198.51.100.7");
		assertThat(resolver.resolve(exchange("[2001:db8::1]"))).contains("2001:db8:0:0:0:0:0:1");
		assertThat(resolver.resolve(exchange("[2001:db8::1]:4711"))).contains("2001:db8:0:0:0:0:0:1");
		assertThat(resolver.resolve(exchange("fe80::1%eth0"))).contains("fe80:0:0:0:0:0:0:1");
		assertThat(resolver.resolve(exchange("01.2.3.4"))).contains("1.2.3.4");
		assertThat(resolver.clientIdOf(" [2001:db8::1]:80 ")).contains("2001:db8:0:0:0:0:0:1");
	}

	private static ClientRequest exchange(String... forwardedForLines) {
		MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/x").remoteAddress(PEER);
		if (forwardedForLines != null && forwardedForLines.length > 0) {
			request.header("X-Forwarded-For", forwardedForLines);
		}
		return new MockClientRequest(MockServerWebExchange.from(request));
	}

}
