package io.github.ratelimit.gateway.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;

/**
 * How the health component and the endpoint show upstream protections: one JSON object per protection, in the
 * order of {@code ratelimit.protections}.
 */
final class ProtectionDetails {

	private ProtectionDetails() {
	}

	/**
	 * Every protection by name.
	 * @param protections the protections
	 * @return per protection: {@code kind} ({@code adaptive} or {@code fixed}); for an adaptive one {@code algorithm}
	 * ({@code vegas}, {@code gradient}; left out for a limit the starter did not build), {@code min} and {@code max};
	 * {@code limit} (the limit now); {@code inFlight} (requests in flight now by priority, {@code critical} to
	 * {@code low}); {@code shadow}
	 */
	static Map<String, Object> of(UpstreamProtections protections) {
		Map<String, Object> all = new LinkedHashMap<>();
		for (UpstreamProtection protection : protections.all()) {
			all.put(protection.name(), of(protection));
		}
		return all;
	}

	/**
	 * One protection, as {@link #of(UpstreamProtections)} shows each.
	 * @param protection the protection
	 * @return its details, a new modifiable map
	 */
	static Map<String, Object> of(UpstreamProtection protection) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("kind", protection.isFixed() ? "fixed" : "adaptive");
		if (!protection.isFixed()) {
			AdaptiveAlgorithm algorithm = protection.algorithm();
			if (algorithm != null) {
				details.put("algorithm", algorithm.tag());
			}
			details.put("min", protection.minLimit());
			details.put("max", protection.maxLimit());
		}
		details.put("limit", protection.limit());
		Map<String, Integer> inFlight = new LinkedHashMap<>();
		for (Priority priority : Priority.values()) {
			inFlight.put(priority.tag(), protection.inFlight(priority));
		}
		details.put("inFlight", inFlight);
		details.put("shadow", protection.isShadow());
		return details;
	}

}
