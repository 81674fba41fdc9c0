package io.github.ratelimit.gateway.properties;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import io.github.ratelimit.gateway.protection.AdaptiveAlgorithm;
import io.github.ratelimit.gateway.protection.Priority;
import io.github.ratelimit.gateway.protection.PriorityShares;
import io.github.ratelimit.gateway.protection.UpstreamProtection;
import io.github.ratelimit.gateway.protection.UpstreamProtections;
import org.jspecify.annotations.Nullable;

/**
 * The rules of {@code ratelimit.protections} and {@code ratelimit.priorities}, and the protections they describe.
 */
public final class ProtectionRules {

	/** Default least adaptive limit. */
	static final int DEFAULT_MIN = 4;

	/** Default largest adaptive limit. */
	static final int DEFAULT_MAX = 1000;

	/** Default adaptive limit before the first sample (kept within min..max). */
	static final int DEFAULT_INITIAL = 20;

	private static final Pattern PERCENT = Pattern.compile("\\s*(\\d{1,3}(?:\\.\\d+)?)\\s*%\\s*");

	private ProtectionRules() {
	}

	/**
	 * Check the protections and the priority shares.
	 * @param p the bound properties
	 * @param v where the problems found are added, each naming its property
	 */
	static void check(RateLimitProperties p, List<ConfigurationViolation> v) {
		String prefix = RateLimitProperties.PREFIX + ".";
		shares(p.getPriorities(), v);
		for (Map.Entry<String, RateLimitProperties.Protection> entry : p.getProtections().entrySet()) {
			String property = prefix + "protections." + entry.getKey();
			RateLimitProperties.Protection protection = entry.getValue();
			if (entry.getKey().isBlank()) {
				v.add(new ConfigurationViolation(prefix + "protections", "contains a protection with a blank name.",
						"name it after the upstream it protects, e.g. orders-backend."));
			}
			if (protection.getLimit() == RateLimitProperties.ProtectionLimit.FIXED) {
				checkFixed(property, protection, v);
			}
			else {
				checkAdaptive(property, protection, v);
			}
			Duration retryAfter = protection.getRetryAfter();
			if (retryAfter == null || retryAfter.compareTo(Duration.ofSeconds(1)) < 0) {
				v.add(new ConfigurationViolation(property + ".retry-after", "must be at least 1s, was " + retryAfter
						+ ".", "set how long a shed client should wait, e.g. 1s (the default)."));
			}
		}
	}

	private static void checkFixed(String property, RateLimitProperties.Protection protection,
			List<ConfigurationViolation> v) {
		Integer maxInFlight = protection.getMaxInFlight();
		if (maxInFlight == null || maxInFlight < 1) {
			v.add(new ConfigurationViolation(property + ".max-in-flight",
					(maxInFlight == null) ? "is required with limit: fixed." : "must be at least 1, was " + maxInFlight
							+ ".",
					"set the requests in flight this instance lets through, e.g. max-in-flight: 64, or use limit: "
							+ "adaptive."));
		}
		for (String adaptiveOnly : adaptiveSettingsGiven(protection)) {
			v.add(new ConfigurationViolation(property + "." + adaptiveOnly, "applies only to limit: adaptive.",
					"remove it, or use limit: adaptive with min, max and initial instead of max-in-flight."));
		}
	}

	private static List<String> adaptiveSettingsGiven(RateLimitProperties.Protection protection) {
		List<String> given = new ArrayList<>();
		if (protection.getAlgorithm() != null) {
			given.add("algorithm");
		}
		if (protection.getMin() != null) {
			given.add("min");
		}
		if (protection.getMax() != null) {
			given.add("max");
		}
		if (protection.getInitial() != null) {
			given.add("initial");
		}
		return given;
	}

	private static void checkAdaptive(String property, RateLimitProperties.Protection protection,
			List<ConfigurationViolation> v) {
		if (protection.getMaxInFlight() != null) {
			v.add(new ConfigurationViolation(property + ".max-in-flight", "applies only to limit: fixed.",
					"remove it, or set limit: fixed; an adaptive limit stays within min and max."));
		}
		Integer min = protection.getMin();
		Integer max = protection.getMax();
		Integer initial = protection.getInitial();
		if (min != null && min < 1) {
			v.add(new ConfigurationViolation(property + ".min", "must be at least 1, was " + min + ".",
					"set the least limit, e.g. 4 (the default)."));
			return;
		}
		int least = (min != null) ? min : DEFAULT_MIN;
		if (max != null && max < least) {
			v.add(new ConfigurationViolation(property + ".max", "must be at least min (" + least + "), was " + max
					+ ".", "raise max or lower min."));
			return;
		}
		int largest = (max != null) ? max : Math.max(DEFAULT_MAX, least);
		if (initial != null && (initial < least || initial > largest)) {
			v.add(new ConfigurationViolation(property + ".initial", "must be from min (" + least + ") to max ("
					+ largest + "), was " + initial + ".", "set it within min and max, or remove it."));
		}
	}

	/**
	 * The shares of {@code ratelimit.priorities}; problems are added to {@code v} (then the default shares are
	 * answered).
	 */
	private static PriorityShares shares(Map<String, String> configured, List<ConfigurationViolation> v) {
		if (configured.isEmpty()) {
			return PriorityShares.DEFAULT;
		}
		String prefix = RateLimitProperties.PREFIX + ".priorities.";
		Map<Priority, Double> shares = new EnumMap<>(Priority.class);
		double total = 0;
		for (Map.Entry<String, String> entry : configured.entrySet()) {
			Priority priority = Priority.parse(entry.getKey());
			if (priority == null) {
				v.add(new ConfigurationViolation(prefix + entry.getKey(), "is not a priority.",
						"give shares to high, normal and low."));
				continue;
			}
			if (priority == Priority.CRITICAL) {
				v.add(new ConfigurationViolation(prefix + entry.getKey(), "takes no share: a critical request is "
						+ "refused only when critical requests alone fill the limit.",
						"remove it; give shares to high, normal and low."));
				continue;
			}
			Double share = percent(entry.getValue());
			if (share == null) {
				v.add(new ConfigurationViolation(prefix + entry.getKey(), "must be a percentage from 0% to 100%, was '"
						+ entry.getValue() + "'.", "write a number from 0 to 100 followed by %, e.g. 40%."));
				continue;
			}
			shares.put(priority, share);
			total += share;
		}
		if (total > 1 + 1e-9) {
			v.add(new ConfigurationViolation(RateLimitProperties.PREFIX + ".priorities", "the shares add up to "
					+ Math.round(total * 1000) / 10.0 + "%, more than 100%.", "lower them to add up to at most 100%."));
			return PriorityShares.DEFAULT;
		}
		return new PriorityShares(shares);
	}

	private static @Nullable Double percent(@Nullable String value) {
		if (value == null) {
			return null;
		}
		Matcher matcher = PERCENT.matcher(value);
		if (!matcher.matches()) {
			return null;
		}
		double percent = Double.parseDouble(matcher.group(1));
		return (percent <= 100) ? percent / 100 : null;
	}

	/**
	 * The protections the (valid) properties describe, and the priority of each plan in force.
	 * @param p the validated properties
	 * @param plans the properties in force, which a reload replaces (plans' priorities are read from them)
	 * @return the protections, new (their limits start afresh)
	 * @throws RateLimitConfigurationException if the protections or shares are not valid
	 */
	public static UpstreamProtections protections(RateLimitProperties p, Supplier<RateLimitProperties> plans) {
		List<ConfigurationViolation> v = new ArrayList<>();
		check(p, v);
		if (!v.isEmpty()) {
			throw new RateLimitConfigurationException(v);
		}
		PriorityShares shares = shares(p.getPriorities(), v);
		Map<String, UpstreamProtection> protections = new LinkedHashMap<>();
		for (Map.Entry<String, RateLimitProperties.Protection> entry : p.getProtections().entrySet()) {
			RateLimitProperties.Protection settings = entry.getValue();
			long retryAfterSeconds = (settings.getRetryAfter().toMillis() + 999) / 1000;
			if (settings.getLimit() == RateLimitProperties.ProtectionLimit.FIXED) {
				Integer maxInFlight = Objects.requireNonNull(settings.getMaxInFlight(), "checked");
				protections.put(entry.getKey(), UpstreamProtection.fixed(entry.getKey(), maxInFlight, shares,
						settings.isShadow(), retryAfterSeconds));
				continue;
			}
			int min = (settings.getMin() != null) ? settings.getMin() : DEFAULT_MIN;
			int max = (settings.getMax() != null) ? settings.getMax() : Math.max(DEFAULT_MAX, min);
			int initial = (settings.getInitial() != null) ? settings.getInitial()
					: Math.max(min, Math.min(max, DEFAULT_INITIAL));
			AdaptiveAlgorithm algorithm = (settings.getAlgorithm() != null) ? settings.getAlgorithm()
					: AdaptiveAlgorithm.VEGAS;
			protections.put(entry.getKey(), UpstreamProtection.adaptive(entry.getKey(), algorithm, min, max, initial,
					shares, settings.isShadow(), retryAfterSeconds));
		}
		return new UpstreamProtections(protections, (plan) -> {
			RateLimitProperties.Plan settings = plans.get().getPlans().get(plan);
			Priority priority = (settings != null) ? settings.getPriority() : null;
			return (priority != null) ? priority : Priority.NORMAL;
		});
	}

	/**
	 * The names of the protections, for messages.
	 * @param p the properties
	 * @return the names, sorted
	 */
	static TreeSet<String> names(RateLimitProperties p) {
		return new TreeSet<>(p.getProtections().keySet());
	}

}
