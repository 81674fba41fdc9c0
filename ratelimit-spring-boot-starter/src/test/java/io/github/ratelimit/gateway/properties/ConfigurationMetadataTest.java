package io.github.ratelimit.gateway.properties;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The configuration metadata IDEs read ({@code META-INF/spring-configuration-metadata.json}, written at compile time
 * by {@code spring-boot-configuration-processor} from the field javadoc of the starter's
 * {@code @ConfigurationProperties} classes and merged with
 * {@code src/main/resources/META-INF/additional-spring-configuration-metadata.json}): every property is described in
 * plain words, shows the default its field has (read by binding an empty environment, so a default the processor
 * cannot see, such as a constant of another class, is caught), and every enum-valued property has a hint for each
 * of its values, with a description. Adding an enum constant (or a new enum-valued property) fails here until the
 * hint list in {@code additional-spring-configuration-metadata.json}, the one place the hints are kept, names it.
 */
class ConfigurationMetadataTest {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final String STARTER_PACKAGE = "io.github.ratelimit.gateway";

	/** The starter's own {@code @ConfigurationProperties} classes, by prefix (longest first). */
	private static Map<String, Class<?>> propertiesClasses;

	private static JsonNode metadata;

	@BeforeAll
	static void readMetadata() {
		propertiesClasses = findPropertiesClasses();
		metadata = starterMetadata();
	}

	@Test
	void everyPropertiesClassHasItsGroup() {
		assertThat(propertiesClasses).as("@ConfigurationProperties classes of the starter")
			.containsKeys(RateLimitProperties.PREFIX, ClientIpProperties.PREFIX, PlanStoreProperties.PREFIX);
		Map<String, String> groups = new LinkedHashMap<>();
		metadata.path("groups").forEach((g) -> groups.put(string(g, "name"), string(g, "type")));
		propertiesClasses.forEach((prefix, type) -> assertThat(groups).containsEntry(prefix, type.getName()));
	}

	@Test
	void everyPropertyHasADescriptionInPlainWords() {
		List<String> problems = new ArrayList<>();
		for (JsonNode property : metadata.path("properties")) {
			if (string(property, "description").isBlank()) {
				problems.add(string(property, "name") + ": no description (write a javadoc comment on its field)");
			}
		}
		for (JsonNode item : concat(metadata.path("groups"), metadata.path("properties"))) {
			String description = string(item, "description");
			if (description.contains("{@") || description.contains("<code>") || description.contains("@link")) {
				problems.add(string(item, "name") + ": javadoc markup in its description, which IDEs show verbatim: "
						+ description);
			}
		}
		assertThat(problems).as("descriptions in %s", METADATA).isEmpty();
	}

	@Test
	void everyDefaultIsShownAsTheFieldHasIt() {
		List<String> problems = new ArrayList<>();
		int checked = 0;
		for (JsonNode property : metadata.path("properties")) {
			String name = string(property, "name");
			Map.Entry<String, Class<?>> owner = owner(name, string(property, "sourceType"));
			if (owner == null) {
				continue; // e.g. management.endpoint.ratelimits.access: Boot's own, from the endpoint
			}
			String path = beanPath(name.substring(owner.getKey().length() + 1));
			BeanWrapperImpl bound = new BeanWrapperImpl(emptyBinding(owner.getKey(), owner.getValue()));
			if (!bound.isReadableProperty(path)) {
				problems.add(name + ": no readable property " + path + " on " + owner.getValue().getSimpleName());
				continue;
			}
			checked++;
			Object fieldDefault = bound.getPropertyValue(path);
			JsonNode shown = property.get("defaultValue");
			if (isEmpty(fieldDefault)) {
				if (shown != null && !(shown.isArray() && shown.isEmpty())) {
					problems.add(name + ": the metadata shows default " + shown + ", the field has none");
				}
				continue;
			}
			if (shown == null) {
				problems.add(name + ": the field's default " + fieldDefault + " is not shown (the processor cannot "
						+ "read it: give the field a literal value or add defaultValue to "
						+ "additional-spring-configuration-metadata.json)");
				continue;
			}
			Object converted = ApplicationConversionService.getSharedInstance().convert(text(shown),
					TypeDescriptor.valueOf(String.class), bound.getPropertyTypeDescriptor(path));
			if (!fieldDefault.equals(converted)) {
				problems.add(name + ": the metadata shows default " + shown + ", the field has " + fieldDefault);
			}
		}
		assertThat(problems).as("defaults in %s", METADATA).isEmpty();
		assertThat(checked).as("properties compared with their fields").isGreaterThan(30);
	}

	@Test
	void everyEnumPropertyHasAHintForEachValue() {
		Map<String, JsonNode> hints = new LinkedHashMap<>();
		metadata.path("hints").forEach((hint) -> hints.put(string(hint, "name"), hint));
		List<String> problems = new ArrayList<>();
		Set<String> enumProperties = new LinkedHashSet<>();
		for (JsonNode property : metadata.path("properties")) {
			String name = string(property, "name");
			Class<?> type = loadable(string(property, "type"));
			if (owner(name, string(property, "sourceType")) == null || type == null || !type.isEnum()) {
				continue; // not the starter's, or not an enum
			}
			enumProperties.add(name);
			Set<String> expected = new LinkedHashSet<>();
			for (Object constant : type.getEnumConstants()) {
				expected.add(((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'));
			}
			JsonNode hint = hints.get(name);
			if (hint == null) {
				problems.add(name + ": no hint; add one listing " + expected
						+ " to additional-spring-configuration-metadata.json");
				continue;
			}
			Set<String> listed = new LinkedHashSet<>();
			for (JsonNode value : hint.path("values")) {
				listed.add(string(value, "value"));
				String description = string(value, "description");
				if (description.isBlank() || description.contains("{@")) {
					problems.add(name + "=" + string(value, "value") + ": no plain description");
				}
			}
			if (!listed.equals(expected)) {
				problems.add(name + ": the hint lists " + listed + ", the enum " + type.getSimpleName() + " has "
						+ expected);
			}
		}
		assertThat(enumProperties).as("enum-valued properties").contains("ratelimit.header-style",
				"ratelimit.non-canonical-paths", "ratelimit.fallback.mode", "ratelimit.denial-log-level",
				"ratelimit.plan-store.type", "management.endpoint.ratelimits.show-clients");
		Set<String> known = StreamSupport.stream(metadata.path("properties").spliterator(), false)
			.map((p) -> string(p, "name"))
			.collect(Collectors.toSet());
		hints.keySet().stream()
			.filter((hint) -> !known.contains(hint.replaceFirst("\\.(keys|values)$", "")))
			.forEach((hint) -> problems.add(hint + ": a hint for a property that does not exist"));
		assertThat(problems).as("hints in %s", METADATA).isEmpty();
	}

	/** The metadata written for the starter's own classes (not another jar's file of the same name). */
	private static JsonNode starterMetadata() {
		URL classes = RateLimitProperties.class.getProtectionDomain().getCodeSource().getLocation();
		try {
			for (URL url : Collections.list(RateLimitProperties.class.getClassLoader().getResources(METADATA))) {
				if (url.toString().contains(classes.toString().replaceFirst("^file:", ""))) {
					try (InputStream in = url.openStream()) {
						return JsonMapper.shared().readTree(in);
					}
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return fail("No %s next to the starter's classes (%s): is spring-boot-configuration-processor configured?",
				METADATA, classes);
	}

	private static Map<String, Class<?>> findPropertiesClasses() {
		ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
		scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
		Map<String, Class<?>> classes = new LinkedHashMap<>();
		scanner.findCandidateComponents(STARTER_PACKAGE).stream()
			.map((candidate) -> ClassUtils.resolveClassName(candidate.getBeanClassName(), null))
			.filter((type) -> type.getProtectionDomain().getCodeSource().getLocation()
				.equals(RateLimitProperties.class.getProtectionDomain().getCodeSource().getLocation()))
			.sorted(Comparator.comparing((Class<?> type) -> prefix(type).length()).reversed())
			.forEach((type) -> classes.put(prefix(type), type));
		return classes;
	}

	private static String prefix(Class<?> type) {
		ConfigurationProperties annotation = type.getAnnotation(ConfigurationProperties.class);
		return annotation.prefix().isEmpty() ? annotation.value() : annotation.prefix();
	}

	/** The properties class a property belongs to (the longest prefix), if its source is that class. */
	private static Map.Entry<String, Class<?>> owner(String name, String sourceType) {
		for (Map.Entry<String, Class<?>> entry : propertiesClasses.entrySet()) {
			if (name.startsWith(entry.getKey() + ".")) {
				boolean fromIt = sourceType.isEmpty() || sourceType.equals(entry.getValue().getName())
						|| sourceType.startsWith(entry.getValue().getName() + "$");
				return fromIt ? entry : null;
			}
		}
		return null;
	}

	/** The properties class as Spring binds it from an environment with no properties: its defaults. */
	private static Object emptyBinding(String prefix, Class<?> type) {
		return new Binder().bindOrCreate(prefix, type);
	}

	/** {@code circuit-breaker.wait-duration-in-open-state} to {@code circuitBreaker.waitDurationInOpenState}. */
	private static String beanPath(String kebab) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : kebab.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				path.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return path.toString();
	}

	private static boolean isEmpty(Object value) {
		return value == null || (value instanceof Collection<?> c && c.isEmpty())
				|| (value instanceof Map<?, ?> m && m.isEmpty());
	}

	private static String string(JsonNode node, String field) {
		JsonNode value = node.get(field);
		return (value == null || value.isNull()) ? "" : value.asString();
	}

	private static String text(JsonNode value) {
		if (value.isArray()) {
			return StreamSupport.stream(value.spliterator(), false).map(JsonNode::asString)
				.collect(Collectors.joining(","));
		}
		return value.asString();
	}

	private static Class<?> loadable(String type) {
		try {
			return ClassUtils.forName(type, ConfigurationMetadataTest.class.getClassLoader());
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return null; // a generic type such as java.util.Map<...>
		}
	}

	private static List<JsonNode> concat(JsonNode first, JsonNode second) {
		List<JsonNode> all = new ArrayList<>();
		first.forEach(all::add);
		second.forEach(all::add);
		return all;
	}

}
