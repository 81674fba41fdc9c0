package io.github.ratelimit.gateway.key;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

import io.netty.util.NetUtil;
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
 *
 * <p>IPv4 clients are keyed by their address. IPv6 clients are keyed by the network prefix of their address (by
 * default the /64 a single site or host usually gets), written {@code 2001:db8:1:2:0:0:0:0/64}: a host that rotates
 * through the addresses of its prefix (privacy extensions, or an attacker with a routed /64) stays one client instead
 * of minting fresh quota with every address. A prefix length of 128 keys every IPv6 address on its own. IPv4-mapped
 * IPv6 addresses ({@code ::ffff:192.0.2.1}) count as the IPv4 address.
 */
public class ClientAddressResolver {

	private static final Pattern IPV4 = Pattern
		.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");

	private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

	private final RemoteAddressResolver forwardedResolver;

	/** IPv6 prefix length used when none is given: the usual size of one site's or host's network. */
	public static final int DEFAULT_IPV6_PREFIX_LENGTH = 64;

	private final int trustedProxies;

	private final int ipv6PrefixLength;

	/**
	 * Create a resolver keying IPv6 clients by their {@value #DEFAULT_IPV6_PREFIX_LENGTH}-bit prefix.
	 * @param trustedProxies number of trusted reverse-proxy hops (0 to 32)
	 */
	public ClientAddressResolver(int trustedProxies) {
		this(trustedProxies, DEFAULT_IPV6_PREFIX_LENGTH);
	}

	/**
	 * Create a resolver.
	 * @param trustedProxies number of trusted reverse-proxy hops (0 to 32)
	 * @param ipv6PrefixLength leading bits of an IPv6 address that identify a client (1 to 128; 128 = the whole
	 * address)
	 */
	public ClientAddressResolver(int trustedProxies, int ipv6PrefixLength) {
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("ipv6PrefixLength must be between 1 and 128, was " + ipv6PrefixLength);
		}
		this.trustedProxies = trustedProxies;
		this.ipv6PrefixLength = ipv6PrefixLength;
		this.forwardedResolver = (trustedProxies > 0) ? XForwardedRemoteAddressResolver.maxTrustedIndex(trustedProxies)
				: null;
	}

	/**
	 * The client's IP address in canonical text form: an IPv4 address, or an IPv6 address (without zone id) reduced
	 * to its prefix, e.g. {@code 2001:db8:1:2:0:0:0:0/64} (the whole address when the prefix length is 128).
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

	/**
	 * The client id this resolver gives the client at an address written as an IP literal (IPv6 addresses cut to
	 * their prefix), as {@link #resolve} would; for looking a client up (actuator endpoint). No name lookup.
	 * @param ipLiteral an IPv4 or IPv6 address literal
	 * @return the client id, or empty when the text is not an IP address literal
	 */
	public Optional<String> clientIdOf(String ipLiteral) {
		String text = ipLiteral.strip();
		byte[] bytes = NetUtil.createByteArrayFromIpAddressString(text);
		if (bytes == null) {
			return Optional.empty();
		}
		try {
			return ipOf(new InetSocketAddress(InetAddress.getByAddress(bytes), 0));
		}
		catch (UnknownHostException ex) {
			return Optional.empty();
		}
	}

	/**
	 * The leading bits of an IPv6 address that identify a client.
	 * @return the prefix length, 1 to 128
	 */
	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	private Optional<String> ipOf(InetSocketAddress socketAddress) {
		if (socketAddress == null) {
			return Optional.empty();
		}
		InetAddress address = socketAddress.getAddress();
		if (address == null) {
			return Optional.empty();
		}
		if (address instanceof Inet6Address && this.ipv6PrefixLength < 128) {
			return Optional.of(prefixOf(address.getAddress(), this.ipv6PrefixLength));
		}
		String text = address.getHostAddress();
		int zone = text.indexOf('%');
		return Optional.of((zone >= 0) ? text.substring(0, zone) : text);
	}

	/** The network prefix of a 16-byte address: host bits cleared, then {@code /length}. */
	private static String prefixOf(byte[] bytes, int length) {
		for (int bit = length; bit < 128; bit++) {
			bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
		}
		try {
			// from 16 raw bytes: no name lookup, no zone id
			return InetAddress.getByAddress(bytes).getHostAddress() + "/" + length;
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException("16 bytes are always an IPv6 address", ex);
		}
	}

}
