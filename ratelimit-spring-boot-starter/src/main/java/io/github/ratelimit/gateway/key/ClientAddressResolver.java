package io.github.ratelimit.gateway.key;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Optional;

import org.springframework.cloud.gateway.support.ipresolver.RemoteAddressResolver;
import org.springframework.cloud.gateway.support.ipresolver.XForwardedRemoteAddressResolver;
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

	private final RemoteAddressResolver forwardedResolver;

	/**
	 * Create a resolver.
	 * @param trustedProxies number of trusted reverse-proxy hops (0 to 32)
	 */
	public ClientAddressResolver(int trustedProxies) {
		this.forwardedResolver = (trustedProxies > 0) ? XForwardedRemoteAddressResolver.maxTrustedIndex(trustedProxies)
				: null;
	}

	/**
	 * The client's IP address in canonical text form (IPv6 without zone id).
	 * @param exchange the current exchange
	 * @return the address, or empty when neither a trusted forwarded entry nor the peer address is an IP address
	 */
	public Optional<String> resolve(ServerWebExchange exchange) {
		if (this.forwardedResolver != null) {
			Optional<String> forwarded = ipOf(this.forwardedResolver.resolve(exchange));
			if (forwarded.isPresent()) {
				return forwarded;
			}
		}
		return ipOf(exchange.getRequest().getRemoteAddress());
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
