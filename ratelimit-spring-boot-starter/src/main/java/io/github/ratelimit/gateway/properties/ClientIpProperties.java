package io.github.ratelimit.gateway.properties;

import java.util.List;

import io.github.ratelimit.gateway.client.ClientAddressResolver;
import io.github.ratelimit.gateway.properties.PropertyRules.Between;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * How clients limited by IP address are identified, bound from {@code ratelimit.client-ip.*}. Which
 * X-Forwarded-For entry is trusted is {@code ratelimit.trusted-proxies}.
 */
@ConfigurationProperties(prefix = ClientIpProperties.PREFIX)
public class ClientIpProperties {

	/** Prefix of these properties. */
	public static final String PREFIX = "ratelimit.client-ip";

	/**
	 * Leading bits of an IPv6 address that identify one client (1 to 128). The default, 64, is the network a
	 * single site or host is given: a host rotating through the addresses of its /64 (privacy extensions, or on
	 * purpose) stays one client instead of minting fresh quota with every address. 56 or 48 count a whole customer
	 * allocation as one client; 128 limits every address on its own. IPv4 clients are always limited by address.
	 */
	@Between(min = 1, max = 128, unit = "bits", fix = "set the IPv6 prefix that identifies one client: 64 (the default) "
			+ "for a host or site, 56 or 48 for a whole customer allocation, 128 for every address on its own.")
	private int ipv6PrefixLength = ClientAddressResolver.DEFAULT_IPV6_PREFIX_LENGTH;

	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	public void setIpv6PrefixLength(int ipv6PrefixLength) {
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/**
	 * The problems of these properties.
	 * @return the violations, empty when valid
	 */
	public List<ConfigurationViolation> validate() {
		return PropertyRules.check(this, PREFIX);
	}

}
