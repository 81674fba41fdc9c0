package io.github.ratelimit.gateway.properties;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Finds the names under {@code ratelimit.*} that no property binds (a misspelt key such as {@code algoritm} or
 * {@code redis-timout}), and the keys a limit carries that belong to another type of limit; each is a
 * {@link ConfigurationViolation} naming the property as written and, where one is close, the valid name meant.
 *
 * <p>What is bound is learnt from Spring Boot's own binding: the three classes bound under {@code ratelimit}
 * ({@link RateLimitProperties}, {@link PlanStoreProperties} at {@code ratelimit.plan-store},
 * {@link ClientIpProperties} at {@code ratelimit.client-ip}) are bound again into fresh instances, recording every
 * name bound; every other name under {@code ratelimit} in an enumerable property source is unknown. Why this and not
 * {@code @ConfigurationProperties(ignoreUnknownFields = false)}: {@code src/docs/design/configuration.md}.
 *
 * <p>Names from environment variables are attributed to {@code ratelimit.*} only when they are near a valid name:
 * {@code RATELIMIT_REDISTIMOUT} (one letter from {@code RATELIMIT_REDISTIMEOUT}) or
 * {@code RATELIMIT_PLANS_FREE_DEFAULT_CAPACITY} (a list written without an index) are refused, while
 * {@code RATELIMIT_GATEWAY_SERVICE_HOST} (a Kubernetes service link of a service named ratelimit-gateway) or a
 * tool's {@code RATELIMIT_TEST_REDIS_URL} are left alone: every process sees the whole environment, and a variable
 * whose name starts with {@code RATELIMIT_} is not necessarily meant for this starter.
 */
final class UnknownProperties {

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of(RateLimitProperties.PREFIX);

	/** Settings every limit takes, whatever its type. */
	private static final Set<String> ANY_LIMIT = Set.of("type", "name", "scope", "unit");

	private UnknownProperties() {
	}

	/**
	 * The unknown names and keys of another type of limit, in the environment's property sources.
	 * @param environment the environment the {@code ratelimit.*} properties are bound from
	 * @return what was found
	 */
	static Found find(Environment environment) {
		return find(ConfigurationPropertySources.get(environment), Binder.get(environment));
	}

	/**
	 * The unknown names and keys of another type of limit.
	 * @param sources the property sources to look for names in
	 * @param binder a binder over the same sources
	 * @return what was found
	 */
	static Found find(Iterable<ConfigurationPropertySource> sources, Binder binder) {
		Recorder recorder = new Recorder();
		RateLimitProperties properties = new RateLimitProperties();
		binder.bind(ROOT, Bindable.ofInstance(properties), recorder);
		binder.bind(PlanStoreProperties.PREFIX, Bindable.ofInstance(new PlanStoreProperties()), recorder);
		binder.bind(ClientIpProperties.PREFIX, Bindable.ofInstance(new ClientIpProperties()), recorder);
		Map<String, ConfigurationViolation> violations = new LinkedHashMap<>();
		Set<String> ignored = new TreeSet<>();
		for (ConfigurationPropertySource source : sources) {
			if (!(source instanceof IterableConfigurationPropertySource names)) {
				continue;
			}
			boolean environment = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
			for (ConfigurationPropertyName name : names.filter(ROOT::isAncestorOf)) {
				if (recorder.isBound(name) || (environment && recorder.bindsVariable(name))) {
					continue;
				}
				ConfigurationProperty property = source.getConfigurationProperty(name);
				Origin origin = (property != null) ? property.getOrigin() : null;
				if (origin instanceof PropertySourceOrigin wrapper && wrapper.getOrigin() != null) {
					origin = wrapper.getOrigin(); // where in a file, when the property source knows it
				}
				String written = environment ? variable(name, origin) : name.toString();
				Unknown unknown = walk(name);
				if (environment && !unknown.attributable()) {
					ignored.add(written);
				}
				else {
					violations.putIfAbsent(written, unknown.violation(name, written, environment, origin));
				}
			}
		}
		List<ConfigurationViolation> found = new ArrayList<>(violations.values());
		found.addAll(keysOfOtherTypes(recorder.bound, properties));
		return new Found(found, List.copyOf(ignored));
	}

	/**
	 * What was found.
	 * @param violations unknown names, each with the valid name meant where one is close, and keys of another type
	 * of limit
	 * @param ignoredVariables environment variables starting with {@code RATELIMIT_} that name no property and are
	 * near none, left alone
	 */
	record Found(List<ConfigurationViolation> violations, List<String> ignoredVariables) {
	}

	/**
	 * The keys written on each limit of a plan that another type of limit takes ({@link LimitRules#checkKeys}).
	 */
	private static List<ConfigurationViolation> keysOfOtherTypes(Set<ConfigurationPropertyName> bound,
			RateLimitProperties properties) {
		Map<String, WrittenKeys> limits = new LinkedHashMap<>();
		for (ConfigurationPropertyName name : bound) {
			int index = limitIndex(name);
			if (index < 0 || name.getNumberOfElements() != index + 2) {
				continue;
			}
			RateLimitProperties.Plan plan = properties.getPlans().get(name.getElement(2, Form.ORIGINAL));
			List<RateLimitProperties.Limit> list = (plan == null) ? null : (index == 4) ? plan.getDefault()
					: plan.getGroups().get(name.getElement(4, Form.ORIGINAL));
			int at = Integer.parseInt(name.getElement(index, Form.ORIGINAL));
			String key = limitKey(name.getElement(index + 1, Form.UNIFORM));
			if (list == null || at >= list.size() || key == null) {
				continue;
			}
			RateLimitProperties.Limit limit = list.get(at);
			limits.computeIfAbsent(name.chop(index + 1).toString(), (l) -> new WrittenKeys(limit, new TreeSet<>()))
				.keys()
				.add(key);
		}
		List<ConfigurationViolation> violations = new ArrayList<>();
		limits.forEach((at, written) -> LimitRules.checkKeys(at, written.limit(), written.keys(), violations));
		return violations;
	}

	/** The keys written on one limit. */
	private record WrittenKeys(RateLimitProperties.Limit limit, Set<String> keys) {
	}

	/**
	 * Where the index of a limit is in a name of a limit's setting: {@code ratelimit.plans.<plan>.default[i].<key>}
	 * (4) or {@code ratelimit.plans.<plan>.groups.<group>[i].<key>} (5).
	 * @return the index's element, or -1 for any other name
	 */
	private static int limitIndex(ConfigurationPropertyName name) {
		if (name.getNumberOfElements() < 6 || !"plans".equals(name.getElement(1, Form.UNIFORM))) {
			return -1;
		}
		if ("default".equals(name.getElement(3, Form.UNIFORM)) && name.isNumericIndex(4)) {
			return 4;
		}
		if ("groups".equals(name.getElement(3, Form.UNIFORM)) && name.isNumericIndex(5)) {
			return 5;
		}
		return -1;
	}

	/** A limit's setting in its dashed form, from its uniform form; {@code null} for none. */
	private static @Nullable String limitKey(String uniform) {
		for (Child child : children(RateLimitProperties.Limit.class)) {
			if (child.uniform().equals(uniform)) {
				return child.name();
			}
		}
		return null;
	}

	/** An environment variable's name, as written when its origin tells, else as Spring Boot maps the name back. */
	private static String variable(ConfigurationPropertyName name, @Nullable Origin origin) {
		if (origin instanceof SystemEnvironmentOrigin variable) {
			return variable.getProperty();
		}
		if (origin instanceof PropertySourceOrigin property) {
			return property.getPropertyName();
		}
		return environmentForm(name.toString());
	}

	/**
	 * A property's name as an environment variable, as Spring Boot's relaxed binding reads it: upper case, '.' and
	 * an index's brackets as '_', no '-'.
	 */
	static String environmentForm(String name) {
		return name.replace("-", "").replace("[", "_").replace("]", "").replace('.', '_').toUpperCase(Locale.ROOT);
	}

	/** Walks the properties' structure along an unknown name to the element that no property has. */
	private static Unknown walk(ConfigurationPropertyName name) {
		ResolvableType type = ResolvableType.forClass(RateLimitProperties.class);
		for (int i = 1; i < name.getNumberOfElements(); i++) {
			Class<?> raw = type.resolve(Object.class);
			if (Map.class.isAssignableFrom(raw)) {
				ResolvableType value = type.asMap().getGeneric(1);
				if (!isContainer(value) && !isBean(value.resolve(Object.class))) {
					return Unknown.VALID; // a map of values: every remaining element is the key
				}
				type = value;
			}
			else if (Collection.class.isAssignableFrom(raw)) {
				if (!name.isNumericIndex(i)) {
					return new Unknown(Kind.NOT_INDEXED, i, null, List.of());
				}
				type = type.asCollection().getGeneric(0);
			}
			else if (isBean(raw)) {
				Child child = null;
				for (Child c : children(raw)) {
					if (c.uniform().equals(name.getElement(i, Form.UNIFORM))) {
						child = c;
					}
				}
				if (child == null) {
					return unknownAt(name, i, raw);
				}
				type = child.type();
			}
			else {
				return new Unknown(Kind.UNDER_A_VALUE, i, null, List.of());
			}
		}
		return Unknown.VALID;
	}

	/** The element at {@code i} is no property of {@code bean}: the nearest valid name, if one is close. */
	private static Unknown unknownAt(ConfigurationPropertyName name, int i, Class<?> bean) {
		List<String> remaining = new ArrayList<>();
		for (int e = i; e < name.getNumberOfElements(); e++) {
			remaining.add(name.getElement(e, Form.UNIFORM).replaceAll("[^a-z0-9]", ""));
		}
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (Candidate candidate : candidates(bean, "")) {
			String flat = candidate.path().replaceAll("[^a-z0-9]", "");
			int from = candidate.container() ? 1 : remaining.size();
			for (int k = from; k <= remaining.size(); k++) {
				int distance = distance(String.join("", remaining.subList(0, k)), flat);
				if (distance <= allowed(flat) && distance < bestDistance) {
					bestDistance = distance;
					StringBuilder meant = new StringBuilder(name.chop(i).toString()).append('.').append(candidate.path());
					for (int e = i + k; e < name.getNumberOfElements(); e++) {
						meant.append(name.isNumericIndex(e) ? "[" + name.getElement(e, Form.ORIGINAL) + "]"
								: "." + name.getElement(e, Form.ORIGINAL));
					}
					best = meant.toString();
				}
			}
		}
		List<String> valid = new ArrayList<>();
		children(bean).forEach((c) -> valid.add(c.name()));
		return new Unknown(Kind.UNKNOWN, i, best, valid);
	}

	/** Edits allowed between a name written and a valid name for the one to be taken for the other. */
	private static int allowed(String validName) {
		return Math.max(1, Math.min(3, validName.length() / 4));
	}

	/**
	 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours, one edit
	 * each.
	 */
	static int distance(String a, String b) {
		int[][] d = new int[a.length() + 1][b.length() + 1];
		for (int i = 0; i <= a.length(); i++) {
			d[i][0] = i;
		}
		for (int j = 0; j <= b.length(); j++) {
			d[0][j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			for (int j = 1; j <= b.length(); j++) {
				int cost = (a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1;
				d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
				if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
					d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
				}
			}
		}
		return d[a.length()][b.length()];
	}

	/** The valid names under a bean, through nested beans (not through maps and lists), relative to it. */
	private static List<Candidate> candidates(Class<?> bean, String prefix) {
		List<Candidate> candidates = new ArrayList<>();
		for (Child child : children(bean)) {
			Class<?> raw = child.type().resolve(Object.class);
			String path = prefix + child.name();
			if (isBean(raw) && prefix.isEmpty()) {
				candidates.addAll(candidates(raw, path + "."));
			}
			else {
				candidates.add(new Candidate(path, isContainer(child.type()) || isBean(raw)));
			}
		}
		return candidates;
	}

	/**
	 * The properties of a bean as Spring Boot binds them: those with a setter, and nested beans reached through their
	 * getter; at the top, also {@code plan-store} and {@code client-ip}, bound by classes of their own.
	 */
	private static List<Child> children(Class<?> bean) {
		List<Child> children = new ArrayList<>();
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(bean)) {
			if (descriptor.getReadMethod() == null) {
				continue;
			}
			ResolvableType type = ResolvableType.forMethodReturnType(descriptor.getReadMethod());
			if (descriptor.getWriteMethod() != null || isBean(type.resolve(Object.class))) {
				children.add(new Child(DataObjectPropertyName.toDashedForm(descriptor.getName()), type));
			}
		}
		if (bean == RateLimitProperties.class) {
			children.add(new Child("plan-store", ResolvableType.forClass(PlanStoreProperties.class)));
			children.add(new Child("client-ip", ResolvableType.forClass(ClientIpProperties.class)));
		}
		return children;
	}

	/** Whether a type is one of the classes of these properties (not an enum): a bean of named properties. */
	private static boolean isBean(Class<?> type) {
		return !type.isEnum() && type.getName().startsWith(RateLimitProperties.class.getPackageName() + ".")
				&& !type.isRecord();
	}

	private static boolean isContainer(ResolvableType type) {
		Class<?> raw = type.resolve(Object.class);
		return Map.class.isAssignableFrom(raw) || Collection.class.isAssignableFrom(raw);
	}

	/** A property of a bean: its name in dashed form, and its type. */
	private record Child(String name, ResolvableType type) {

		String uniform() {
			return this.name.replace("-", "");
		}

	}

	/** A valid name under a bean, and whether names continue under it (a map, a list or a bean). */
	private record Candidate(String path, boolean container) {
	}

	private enum Kind {

		/** The structure has the name: Spring Boot left it unbound for another reason. */
		VALID,

		/** No property of that name. */
		UNKNOWN,

		/** A list written without an index. */
		NOT_INDEXED,

		/** Below a property that takes a value. */
		UNDER_A_VALUE

	}

	/**
	 * Where and why a name is unknown.
	 * @param kind why
	 * @param at the element where the structure ends
	 * @param meant the nearest valid name, in full, when one is close
	 * @param valid the valid names at that element
	 */
	private record Unknown(Kind kind, int at, @Nullable String meant, List<String> valid) {

		static final Unknown VALID = new Unknown(Kind.VALID, 0, null, List.of());

		/** Whether an environment variable of this name is meant for these properties. */
		boolean attributable() {
			return this.meant != null || this.kind == Kind.NOT_INDEXED;
		}

		ConfigurationViolation violation(ConfigurationPropertyName name, String written, boolean environment,
				@Nullable Origin origin) {
			// where it is written, when the origin says more than the name (a file and line)
			String from = (origin != null && !environment && !(origin instanceof PropertySourceOrigin))
					? " (" + origin + ")" : "";
			String binds = environment ? " (it reads as " + name + ")" : "";
			String parent = (this.at > 0) ? name.chop(this.at).toString() : "";
			return switch (this.kind) {
				case UNKNOWN -> {
					String problem = "is not a property: " + parent + " has no '"
							+ name.getElement(this.at, Form.ORIGINAL) + "'" + binds + from + ".";
					if (this.meant != null) {
						String meant = environment ? environmentForm(this.meant) + " (" + this.meant + ")" : this.meant;
						yield new ConfigurationViolation(written, problem,
								"write " + meant + ": did you mean '" + lastName(this.meant, name, this.at) + "'?");
					}
					yield new ConfigurationViolation(written, problem,
							"use one of " + this.valid + " under " + parent + ", or remove it.");
				}
				case NOT_INDEXED -> new ConfigurationViolation(written,
						"is not a property: " + parent + " is a list" + binds + from + ".",
						"give the list item's index, e.g. " + (environment ? environmentForm(parent + "[0]")
								: parent + "[0]") + "..., or in YAML a list item ('- " + name.getElement(this.at,
										Form.ORIGINAL) + ": ...').");
				case UNDER_A_VALUE -> new ConfigurationViolation(written,
						"is not a property: " + parent + " takes a value, and has no properties under it" + binds
								+ from + ".",
						"set " + parent + " itself, or remove it.");
				case VALID -> new ConfigurationViolation(written,
						"is not bound by any property" + binds + from + ".", "remove it.");
			};
		}

		/** The valid name meant, from the element where the written name went wrong. */
		private static String lastName(String meant, ConfigurationPropertyName name, int at) {
			return meant.substring(name.chop(at).toString().length() + 1);
		}

	}

	/**
	 * Records the names Spring Boot binds; a value that fails to convert counts as bound (its property exists, and
	 * the binding that uses it reports the value).
	 */
	private static final class Recorder extends AbstractBindHandler {

		final Set<ConfigurationPropertyName> bound = new HashSet<>();

		private final Set<ConfigurationPropertyName> attempted = new HashSet<>();

		private @Nullable Set<String> variables;

		@Override
		public <T> @Nullable Bindable<T> onStart(ConfigurationPropertyName name, Bindable<T> target,
				BindContext context) {
			this.attempted.add(name);
			return super.onStart(name, target, context);
		}

		@Override
		public @Nullable Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
				Object result) {
			this.bound.add(name);
			return super.onSuccess(name, target, context, result);
		}

		@Override
		public @Nullable Object onFailure(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
				Exception error) {
			this.bound.add(name);
			return null;
		}

		/** Whether a name was bound, or is an element of a list that a list of another source replaced. */
		boolean isBound(ConfigurationPropertyName name) {
			return this.bound.contains(name) || isOverriddenCollectionElement(name);
		}

		/**
		 * Whether an environment variable's name is bound in one of the forms Spring Boot reads variables in: besides
		 * {@code RATELIMIT_REDISTIMEOUT}, the legacy {@code RATELIMIT_REDIS_TIMEOUT} (read as
		 * {@code ratelimit.redis.timeout}, another name).
		 */
		boolean bindsVariable(ConfigurationPropertyName name) {
			if (this.variables == null) {
				Set<String> variables = new HashSet<>();
				for (ConfigurationPropertyName bound : this.bound) {
					variables.add(environmentForm(bound.toString()));
					variables.add(environmentForm(bound.toString().replace('-', '.')));
				}
				this.variables = variables;
			}
			return this.variables.contains(environmentForm(name.toString()));
		}

		/** As Spring Boot's {@code NoUnboundElementsBindHandler} decides it. */
		private boolean isOverriddenCollectionElement(ConfigurationPropertyName candidate) {
			if (candidate.isLastElementIndexed()) {
				return this.bound.contains(candidate.chop(candidate.getNumberOfElements() - 1));
			}
			for (int i = 0; i < candidate.getNumberOfElements() - 1; i++) {
				if (candidate.isNumericIndex(i)) {
					ConfigurationPropertyName zeroth = ConfigurationPropertyName.of(candidate.chop(i) + "[0]");
					return this.bound.contains(zeroth) && this.attempted
						.contains(zeroth.append(candidate.getElement(i + 1, Form.UNIFORM)));
				}
			}
			return false;
		}

	}

}
