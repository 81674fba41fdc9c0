package io.github.ratelimit.gateway.client;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.netty.util.NetUtil;
import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;

/**
 * Finds the client IP address of a request, trusting X-Forwarded-For only as far as configured
 * ({@code ratelimit.trusted-proxies}).
 *
 * <p>With {@code n > 0} trusted proxies the n-th X-Forwarded-For entry from the right is used (entries further
 * left were written by the client or untrusted hops and are ignored), or the leftmost when there are fewer than n,
 * as Gateway's own {@code XForwardedRemoteAddressResolver.maxTrustedIndex(n)} picks it; with 0 the TCP peer address
 * is used. Several X-Forwarded-For field lines are combined in order into one list, as HTTP defines repeated field
 * lines (RFC 9110 section 5.3), and empty list elements are ignored (section 5.6.1).
 *
 * <p>An entry counts only when it is an IP address literal, parsed strictly by Netty's {@code NetUtil}: IPv4
 * dotted-quad, IPv6 (also in brackets, with or without a zone id), optionally with a port ({@code 192.0.2.1:4711},
 * {@code [2001:db8::1]:4711}). No client-supplied value ever causes a host name lookup: an entry that is not a
 * literal (e.g. {@code unknown}, a host name, {@code .5:6}) falls back to the TCP peer address. A request with no
 * usable address yields {@link Optional#empty()}.
 *
 * <p>IPv4 clients are keyed by their address. IPv6 clients are keyed by the network prefix of their address (by
 * default /64), written {@code 2001:db8:1:2:0:0:0:0/64}. A prefix length of 128 keys every IPv6 address on its
 * own. IPv4-mapped IPv6 addresses ({@code ::ffff:192.0.2.1}) count as the IPv4 address.
 */
public class ClientAddressResolver {

	/** Name of the header whose entries trusted proxies write. */
	public static final String X_FORWARDED_FOR = "X-Forwarded-For";

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
	 * @throws IllegalArgumentException when either value is out of range
	 */
	public ClientAddressResolver(int trustedProxies, int ipv6PrefixLength) {
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("ipv6PrefixLength must be between 1 and 128, was " + ipv6PrefixLength);
		}
		if (trustedProxies < 0) {
			throw new IllegalArgumentException("trustedProxies must not be negative, was " + trustedProxies);
		}
		this.trustedProxies = trustedProxies;
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/**
	 * The client's IP address in canonical text form: an IPv4 address, or an IPv6 address (without zone id) reduced
	 * to its prefix, e.g. {@code 2001:db8:1:2:0:0:0:0/64} (the whole address when the prefix length is 128).
	 * @param request the current request
	 * @return the address, or empty when neither a trusted forwarded entry nor the peer address is an IP address
	 */
	public Optional<String> resolve(ClientRequest request) {
		if (this.trustedProxies > 0) {
			String entry = trustedEntry(request.headerValues(X_FORWARDED_FOR));
			InetAddress forwarded = (entry != null) ? addressOf(entry) : null;
			if (forwarded != null) {
				return Optional.of(clientIdOf(forwarded));
			}
		}
		InetAddress address = request.remoteAddress();
		return (address != null) ? Optional.of(clientIdOf(address)) : Optional.empty();
	}

	/**
	 * The entry of X-Forwarded-For that the trusted proxies vouch for: the n-th from the right of all field lines
	 * combined in order, or the leftmost when there are fewer entries.
	 * @return the entry, or {@code null} when the header is absent or has no entries
	 */
	private @Nullable String trustedEntry(List<String> lines) {
		if (lines.isEmpty()) {
			return null;
		}
		List<String> entries = new ArrayList<>(4);
		for (String line : lines) {
			for (String entry : StringUtils.tokenizeToStringArray(line, ",")) {
				entries.add(entry);
			}
		}
		return entries.isEmpty() ? null : entries.get(entries.size() - Math.min(entries.size(), this.trustedProxies));
	}

	/**
	 * The client id this resolver gives the client at an address written as an IP literal (IPv6 addresses cut to
	 * their prefix), as {@link #resolve} would; for looking a client up (actuator endpoint). No name lookup.
	 * @param ipLiteral an IPv4 or IPv6 address literal, optionally with a port as in {@link #addressOf}
	 * @return the client id, or empty when the text is not an IP address literal
	 */
	public Optional<String> clientIdOf(String ipLiteral) {
		InetAddress address = addressOf(ipLiteral.strip());
		return (address != null) ? Optional.of(clientIdOf(address)) : Optional.empty();
	}

	/**
	 * Parse an IP address literal strictly, never looking a name up: IPv4 dotted-quad ({@code 192.0.2.1}), IPv6
	 * ({@code 2001:db8::1}, {@code [2001:db8::1]}, a zone id is dropped), each optionally followed by a port
	 * ({@code 192.0.2.1:4711}, {@code [2001:db8::1]:4711}), as proxies write X-Forwarded-For entries.
	 * @param text the literal
	 * @return the address, or {@code null} when the text is not such a literal
	 */
	public static @Nullable InetAddress addressOf(String text) {
		String literal = text;
		if (literal.startsWith("[")) {
			int close = literal.indexOf(']');
			if (close < 0 || !isPortOrNothing(literal.substring(close + 1))) {
				return null;
			}
			literal = literal.substring(1, close);
			if (!NetUtil.isValidIpV6Address(literal)) {
				return null;
			}
		}
		else {
			int colon = literal.indexOf(':');
			if (colon >= 0 && colon == literal.lastIndexOf(':')) { // one colon: IPv4 with a port
				if (!isPortOrNothing(literal.substring(colon))) {
					return null;
				}
				literal = literal.substring(0, colon);
				if (!NetUtil.isValidIpV4Address(literal)) {
					return null;
				}
			}
		}
		byte[] bytes = NetUtil.createByteArrayFromIpAddressString(literal);
		if (bytes == null) {
			return null;
		}
		try {
			return InetAddress.getByAddress(bytes); // from raw bytes: no name lookup
		}
		catch (UnknownHostException ex) {
			return null;
		}
	}

	/** Whether the text is empty or {@code :} followed by a port number (1 to 5 digits, at most 65535). */
	private static boolean isPortOrNothing(String text) {
		if (text.isEmpty()) {
			return true;
		}
		if (text.length() < 2 || text.length() > 6 || text.charAt(0) != ':') {
			return false;
		}
		for (int i = 1; i < text.length(); i++) {
			if (text.charAt(i) < '0' || text.charAt(i) > '9') {
				return false;
			}
		}
		return Integer.parseInt(text, 1, text.length(), 10) <= 65535;
	}

	/**
	 * The leading bits of an IPv6 address that identify a client.
	 * @return the prefix length, 1 to 128
	 */
	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	private String clientIdOf(InetAddress address) {
		if (address instanceof Inet6Address && this.ipv6PrefixLength < 128) {
			return prefixOf(address.getAddress(), this.ipv6PrefixLength);
		}
		String text = address.getHostAddress();
		int zone = text.indexOf('%');
		return (zone >= 0) ? text.substring(0, zone) : text;
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
