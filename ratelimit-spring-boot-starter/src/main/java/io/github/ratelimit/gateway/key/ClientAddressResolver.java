package io.github.ratelimit.gateway.key;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import org.springframework.cloud.gateway.support.ipresolver.RemoteAddressResolver;
import org.springframework.cloud.gateway.support.ipresolver.XForwardedRemoteAddressResolver;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * Finds the client IP address of a request, trusting X-Forwarded-For only as far as configured
 * ({@code ratelimit.trusted-proxies}), through Gateway's own {@link XForwardedRemoteAddressResolver}.
 *
 * <p>With {@code n > 0} trusted proxies the n-th X-Forwarded-For entry from the right is used (entries further
 * left were written by the client or untrusted hops and are ignored); with 0 the TCP peer address is used. An entry
 * that is not an IP address falls back to the TCP peer address; a request with no usable address yields
 * {@link Optional#empty()} so that it is never put into a shared bucket.
 */
public class ClientAddressResolver {

	private static final Pattern IPV4 = Pattern
		.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");

	private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

	private final RemoteAddressResolver forwardedResolver;

	private final int trustedProxies;

	/**
	 * Create a resolver.
	 * @param trustedProxies number of trusted reverse-proxy hops (0 to 32)
	 */
	public ClientAddressResolver(int trustedProxies) {
		this.trustedProxies = trustedProxies;
		this.forwardedResolver = (trustedProxies > 0) ? XForwardedRemoteAddressResolver.maxTrustedIndex(trustedProxies)
				: null;
	}

	/**
	 * The client's IP address in canonical text form (IPv6 without zone id).
	 * @param exchange the current exchange
	 * @return the address, or empty when neither a trusted forwarded entry nor the peer address is an IP address
	 */
	public Optional<String> resolve(ServerWebExchange exchange) {
		if (this.forwardedResolver != null && trustedEntryIsIpLiteral(exchange)) {
			Optional<String> forwarded = ipOf(this.forwardedResolver.resolve(exchange));
			if (forwarded.isPresent()) {
				return forwarded;
			}
		}
		return ipOf(exchange.getRequest().getRemoteAddress());
	}

	/**
	 * Whether the X-Forwarded-For entry the resolver will pick (the n-th from the right) is an IP address literal.
	 * Gateway's resolver turns the entry into an {@link InetSocketAddress}, which would look a host name up in DNS on
	 * the event loop; entries that are not IP literals (e.g. {@code unknown}, or a name written by a client talking to
	 * the gateway directly) are therefore not passed to it, and the TCP peer address is used instead.
	 */
	private boolean trustedEntryIsIpLiteral(ServerWebExchange exchange) {
		List<String> values = exchange.getRequest().getHeaders().get(XForwardedRemoteAddressResolver.X_FORWARDED_FOR);
		if (values == null || values.size() != 1) {
			return true; // absent (peer address is used) or ambiguous (the resolver discards it)
		}
		String[] entries = StringUtils.tokenizeToStringArray(values.get(0), ",");
		if (entries.length == 0) {
			return true;
		}
		String entry = entries[Math.max(0, entries.length - this.trustedProxies)];
		return IPV4.matcher(entry).matches() || IPV6.matcher(entry).matches();
	}

	private static Optional<String> ipOf(InetSocketAddress socketAddress) {
		if (socketAddress == null) {
			return Optional.empty();
		}
		InetAddress address = socketAddress.getAddress();
		if (address == null) {
			return Optional.empty();
		}
		String text = address.getHostAddress();
		int zone = text.indexOf('%');
		return Optional.of((zone >= 0) ? text.substring(0, zone) : text);
	}

}
