package io.github.ratelimit.gateway.properties;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The configuration properties reference, {@code src/docs/reference/configuration-properties.md}, generated from the
 * configuration metadata the starter's build writes
 * ({@code target/classes/META-INF/spring-configuration-metadata.json}, from the properties' field javadoc and
 * {@code additional-spring-configuration-metadata.json}): one row per property, sorted by name, with its type,
 * default, description and, where the metadata has hints, its values. The output depends on the metadata only, so the
 * same metadata always gives the same page.
 */
final class ConfigurationPropertiesPage {

	/** The page, from the top of the repository. */
	static final Path FILE = Path.of("src", "docs", "reference", "configuration-properties.md");

	/** The command that rewrites the page from the current metadata. */
	static final String REGENERATE = "./mvnw -B -q -pl ratelimit-spring-boot-starter -am "
			+ "-Dtest=ConfigurationPropertiesPageTest -Dsurefire.failIfNoSpecifiedTests=false "
			+ "-Dconfiguration.page.write=true test";

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	/** A qualified class name, nested classes with {@code $}; group 1 is the simple name. */
	private static final Pattern QUALIFIED = Pattern
		.compile("(?:[a-z_][a-z0-9_]*\\.)+(?:[A-Za-z0-9_]+\\$)*([A-Za-z0-9_]+)");

	private ConfigurationPropertiesPage() {
	}

	/**
	 * The page for the metadata next to the starter's compiled classes.
	 * @return the Markdown page
	 */
	static String generate() {
		return of(metadata());
	}

	/**
	 * The page for some metadata.
	 * @param metadata the parsed {@code spring-configuration-metadata.json}
	 * @return the Markdown page, ending with a line break
	 */
	static String of(JsonNode metadata) {
		Map<String, List<String[]>> hints = new LinkedHashMap<>();
		for (JsonNode hint : metadata.path("hints")) {
			List<String[]> values = new ArrayList<>();
			for (JsonNode value : hint.path("values")) {
				values.add(new String[] { literal(value.get("value")), string(value, "description") });
			}
			hints.put(string(hint, "name"), values);
		}
		List<JsonNode> properties = StreamSupport.stream(metadata.path("properties").spliterator(), false)
			.sorted(Comparator.comparing((JsonNode property) -> string(property, "name")))
			.toList();
		StringBuilder page = new StringBuilder();
		page.append("# Configuration properties\n\n");
		page.append("<!-- Generated from the starter's configuration metadata by ConfigurationPropertiesPage; "
				+ "do not edit. Regenerate with: " + REGENERATE + " -->\n\n");
		page.append("Every property the starter reads, as its configuration metadata describes it (the descriptions "
				+ "are the properties' javadoc; IDEs show the same text). The fields of a limit, a group's settings "
				+ "and the filter's arguments sit inside maps and lists, which the metadata format cannot describe: "
				+ "they are in [Configuration](configuration.md).\n\n");
		page.append("| property | type | default | description |\n");
		page.append("|---|---|---|---|\n");
		for (JsonNode property : properties) {
			String name = string(property, "name");
			StringBuilder description = new StringBuilder(string(property, "description"));
			List<String[]> values = hints.get(name);
			if (values != null && !values.isEmpty()) {
				description.append(" Values: ").append(values.stream()
					.map((value) -> "`" + value[0] + "`" + (value[1].isEmpty() ? "" : " (" + value[1] + ")"))
					.collect(Collectors.joining(", "))).append('.');
			}
			JsonNode defaultValue = property.get("defaultValue");
			page.append("| `").append(name).append("` | ")
				.append(cell("`" + type(string(property, "type")) + "`")).append(" | ")
				.append((defaultValue == null || defaultValue.isNull()) ? "" : cell("`" + literal(defaultValue) + "`"))
				.append(" | ").append(cell(description.toString())).append(" |\n");
		}
		return page.toString();
	}

	/**
	 * A Java type as a reader writes it: {@code java.util.Map<java.lang.String,...$Plan>} as
	 * {@code Map<String, Plan>}.
	 * @param type the metadata's type
	 * @return the type without packages and outer classes
	 */
	static String type(String type) {
		Matcher matcher = QUALIFIED.matcher(type);
		StringBuilder simple = new StringBuilder();
		while (matcher.find()) {
			matcher.appendReplacement(simple, Matcher.quoteReplacement(matcher.group(1)));
		}
		matcher.appendTail(simple);
		return simple.toString().replace(",", ", ");
	}

	private static String literal(JsonNode value) {
		if (value == null || value.isNull()) {
			return "";
		}
		if (value.isArray()) {
			return StreamSupport.stream(value.spliterator(), false).map(JsonNode::asString)
				.collect(Collectors.joining(", "));
		}
		return value.asString();
	}

	private static String cell(String text) {
		return text.replace("\r", "").replace("\n", " ").replace("|", "\\|");
	}

	private static String string(JsonNode node, String field) {
		JsonNode value = node.get(field);
		return (value == null || value.isNull()) ? "" : value.asString();
	}

	private static JsonNode metadata() {
		try {
			Path classes = Path.of(RateLimitProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
			Path file = classes.resolve(METADATA);
			if (!Files.isRegularFile(file)) {
				throw new IllegalStateException("No " + METADATA + " in " + classes
						+ ": is spring-boot-configuration-processor configured?");
			}
			return JsonMapper.shared().readTree(Files.readString(file));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The page's path in this checkout, found from the working directory upwards.
	 * @return the page's path (it may not exist yet)
	 */
	static Path file() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isDirectory(dir.resolve(FILE).getParent())) {
				return dir.resolve(FILE);
			}
		}
		throw new IllegalStateException("Not found from " + Path.of("").toAbsolutePath() + " upwards: "
				+ FILE.getParent());
	}

}
