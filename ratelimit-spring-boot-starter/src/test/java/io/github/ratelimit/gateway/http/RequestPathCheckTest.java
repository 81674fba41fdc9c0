package io.github.ratelimit.gateway.http;

import java.util.List;

import io.github.ratelimit.gateway.http.RequestPathCheck.Policy;
import io.github.ratelimit.gateway.http.RequestPathCheck.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.FieldSource;

import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedException;
import org.springframework.security.web.server.firewall.StrictServerWebExchangeFirewall;

import static org.assertj.core.api.Assertions.assertThat;

class RequestPathCheckTest {

	/** Paths in canonical form: routed and forwarded as they are, in every mode. */
	static final List<String> CANONICAL = List.of("/", "/api/search/x", "/api/search/", "/api/search/x.json",
			"/api/se%61rch/x", "/api/search/a%20b", "/files/..x/y..", "/a/.well-known/b", "/caf%C3%A9", "/a-b_c~d",
			"/a:b@c!$&'()*+,=", "/x/%7E");

	/** Paths that are not canonical and that {@link Policy#NORMALIZE} repairs: path, canonical form. */
	static final List<String[]> REPAIRABLE = List.of(new String[] { "/api//search/x", "/api/search/x" },
			new String[] { "//api/search/x", "/api/search/x" }, new String[] { "/api/search//", "/api/search/" },
			new String[] { "/api/./search/x", "/api/search/x" }, new String[] { "/api/%2e/search/x", "/api/search/x" },
			new String[] { "/api/%2E/search/x", "/api/search/x" }, new String[] { "/api/x/../search/x", "/api/search/x" },
			new String[] { "/api/x/%2e%2e/search/x", "/api/search/x" },
			new String[] { "/api/x/.%2E/search/x", "/api/search/x" },
			new String[] { "/public/../auth/login", "/auth/login" }, new String[] { "/../auth/login", "/auth/login" },
			new String[] { "/api/search/x/.", "/api/search/x/" }, new String[] { "/api/search/x/..", "/api/search/" },
			new String[] { "/..", "/" }, new String[] { "/api/search/x%2Ejson", "/api/search/x.json" });

	/** Paths that are refused in both {@link Policy#REJECT} and {@link Policy#NORMALIZE}: no canonical form. */
	static final List<String> REFUSED = List.of("/api/search%2Fx", "/api/search%2fx", "/api%2F..%2Fauth/login",
			"/api/search\\x", "/api/search%5Cx", "/api/search%5cx", "/api/search;x/y", "/public/..;/auth/login",
			"/auth/login;jsessionid=1", "/api/search%3Bx", "/api/search%3bx", "/api/search%252Fx", "/api/%252e%252e/x",
			"/api/search%00x", "/api/search%0Ax", "/api/search%0d%0ax", "/api/search%7Fx", "/api/search%1Fx",
			"/api/se%zzarch", "/api/search/x%", "/api/search/x%4", "/api/search/x%4g", "/api/search/%C0%AE%C0%AE/x",
			"/api/search/%E9", "/api/search/%ED%A0%80", "/api/search x", "/api/search\tx", "/api/caf\u00e9",
			"/api/search\u2028x", "/api/search/x%\u0663\u0663", "api/search/x", "*");

	@ParameterizedTest
	@FieldSource("CANONICAL")
	void canonicalPathsPassUnchanged(String path) {
		for (Policy policy : Policy.values()) {
			Verdict verdict = RequestPathCheck.check(path, policy);
			assertThat(verdict.path()).as(policy.name()).isSameAs(path);
			assertThat(verdict.problem()).as(policy.name()).isNull();
			assertThat(verdict.refused()).isFalse();
			assertThat(verdict.repaired()).isFalse();
		}
	}

	@ParameterizedTest
	@FieldSource("REPAIRABLE")
	void emptyAndDotSegmentsAreRefusedOrRepaired(String path, String canonical) {
		Verdict rejected = RequestPathCheck.check(path, Policy.REJECT);
		assertThat(rejected.refused()).isTrue();
		assertThat(rejected.problem()).isNotBlank();
		Verdict normalized = RequestPathCheck.check(path, Policy.NORMALIZE);
		assertThat(normalized.repaired()).isTrue();
		assertThat(normalized.path()).isEqualTo(canonical);
		// the repaired path is canonical itself
		assertThat(RequestPathCheck.check(canonical, Policy.REJECT).path()).isEqualTo(canonical);
	}

	@ParameterizedTest
	@FieldSource("REFUSED")
	void pathsWithoutACanonicalFormAreRefusedInBothModes(String path) {
		assertThat(RequestPathCheck.check(path, Policy.REJECT).refused()).isTrue();
		assertThat(RequestPathCheck.check(path, Policy.NORMALIZE).refused()).isTrue();
		assertThat(RequestPathCheck.check(path, Policy.ALLOW).path()).isSameAs(path);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			/a//b          | it contains an empty segment ('//')
			/a/../b        | it contains a dot segment ('.' or '..')
			/a/x%2eb       | it contains an encoded '.' (%2E)
			/a%2Fb         | it contains an encoded '/' (%2F)
			/a%5Cb         | it contains an encoded '\\' (%5C)
			/a%25b         | it contains an encoded '%' (%25)
			/a;b           | it contains ';' (path parameters)
			/a%3Bb         | it contains an encoded ';' (%3B)
			/a%00b         | it contains an encoded control character
			/a%b           | it contains a malformed percent-encoding
			/a%C0%AE       | its percent-encoded bytes are not valid UTF-8
			""")
	void theProblemIsNamed(String path, String problem) {
		assertThat(RequestPathCheck.check(path, Policy.REJECT).problem()).isEqualTo(problem);
	}

	@Test
	void queriesThatAreNotFullyEncodedAreEncoded() {
		String encoded = "a=1&b=%2F&c=x:y@z/?w;v!$'()*+,~";
		assertThat(RequestPathCheck.encodedQuery(encoded)).isSameAs(encoded);
		assertThat(RequestPathCheck.encodedQuery("x=[1]")).isEqualTo("x=%5B1%5D");
		assertThat(RequestPathCheck.encodedQuery("q=%zz&r=%4")).isEqualTo("q=%25zz&r=%254");
		assertThat(RequestPathCheck.encodedQuery("a|b\"c\"{}^`<>")).isEqualTo("a%7Cb%22c%22%7B%7D%5E%60%3C%3E");
		assertThat(RequestPathCheck.encodedQuery("caf\u00e9=\ud83d\ude00")).isEqualTo("caf%C3%A9=%F0%9F%98%80");
		assertThat(RequestPathCheck.encodedQuery("")).isEmpty();
	}

	@Test
	void noPathIsTheRoot() {
		assertThat(RequestPathCheck.check("", Policy.REJECT).path()).isEqualTo("/");
		assertThat(RequestPathCheck.check(null, Policy.NORMALIZE).path()).isEqualTo("/");
	}

	/**
	 * Every path Spring Security's strict firewall refuses is refused here too (the rules are at least as strict
	 * for paths), for the firewall's own samples and this test's.
	 */
	@Test
	void everyPathSpringSecuritysStrictFirewallRefusesIsRefused() {
		StrictServerWebExchangeFirewall firewall = new StrictServerWebExchangeFirewall();
		List<String> samples = new java.util.ArrayList<>(REFUSED);
		samples.addAll(CANONICAL);
		REPAIRABLE.forEach((pair) -> samples.add(pair[0]));
		samples.addAll(List.of("/a/%2e%2e/b", "/a/.", "/a/..", "/./a", "/a%2f%2fb", "/a%2F%2Fb", "/%2e", "/a%0D",
				"/a%25", "/a%5c"));
		int refusedByFirewall = 0;
		for (String path : samples) {
			if (!rawUriIsAccepted(path)) {
				continue; // not a URI the server would hand to either check
			}
			if (firewallRefuses(firewall, path)) {
				refusedByFirewall++;
				assertThat(RequestPathCheck.check(path, Policy.REJECT).refused()).as(path).isTrue();
			}
		}
		assertThat(refusedByFirewall).isGreaterThan(30);
	}

	private static boolean rawUriIsAccepted(String path) {
		try {
			new java.net.URI("http://localhost" + path);
			return path.startsWith("/");
		}
		catch (java.net.URISyntaxException ex) {
			return false;
		}
	}

	private static boolean firewallRefuses(StrictServerWebExchangeFirewall firewall, String path) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.method(HttpMethod.GET, java.net.URI.create("http://localhost" + path)));
		try {
			firewall.getFirewalledExchange(exchange).block();
			return false;
		}
		catch (ServerExchangeRejectedException ex) {
			return true;
		}
	}

}
