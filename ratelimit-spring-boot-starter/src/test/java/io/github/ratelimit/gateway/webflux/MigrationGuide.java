package io.github.ratelimit.gateway.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * The configurations of {@code src/docs/reference/migrating-from-request-rate-limiter.md}, as the route tests run them: the
 * fenced block right after a {@code <!-- migration-guide:NAME -->} line, with the guide's upstream
 * {@value #BACKEND} replaced by a test's own.
 */
final class MigrationGuide {

	/** The guide, from the top of the repository. */
	static final Path FILE = Path.of("src", "docs", "reference", "migrating-from-request-rate-limiter.md");

	/** The upstream the guide's routes name. */
	static final String BACKEND = "http://backend:8080";

	private MigrationGuide() {
	}

	/**
	 * The guide's text.
	 * @return the Markdown
	 */
	static String text() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve(FILE))) {
				try {
					return Files.readString(dir.resolve(FILE));
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}
		}
		throw new IllegalStateException("Not found from " + Path.of("").toAbsolutePath() + " upwards: " + FILE);
	}

	/**
	 * One fenced block of the guide.
	 * @param name the marker's name, e.g. {@code after} for {@code <!-- migration-guide:after -->}
	 * @return the block's content, without its fences
	 */
	static String block(String name) {
		Matcher block = Pattern.compile("<!-- migration-guide:" + Pattern.quote(name) + " -->\\s*```\\w*\\n(.*?)\\n```",
				Pattern.DOTALL).matcher(text());
		if (!block.find()) {
			throw new IllegalStateException("No fenced block after <!-- migration-guide:" + name + " --> in " + FILE);
		}
		return block.group(1);
	}

	/**
	 * A YAML block of the guide as flat properties, as Spring Boot reads {@code application.yml}.
	 * @param name the marker's name
	 * @param backend the URI to put in place of {@value #BACKEND}
	 * @return property name to value, in the block's order, modifiable
	 */
	static Map<String, Object> properties(String name, String backend) {
		String yaml = block(name).replace(BACKEND, backend);
		Map<String, Object> properties = new LinkedHashMap<>();
		try {
			List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("migration guide, " + name,
					new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)));
			for (PropertySource<?> source : sources) {
				EnumerablePropertySource<?> enumerable = (EnumerablePropertySource<?>) source;
				for (String property : enumerable.getPropertyNames()) {
					properties.put(property, enumerable.getProperty(property));
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return properties;
	}

	/**
	 * Whether source code contains a Java block of the guide, line by line with indentation ignored, so that the
	 * code a test runs is the code the guide shows.
	 * @param block the guide's Java block
	 * @param source the test's source file, from the module directory
	 * @return {@code true} when every line of the block appears, in order, in consecutive lines of the source
	 */
	static boolean appearsIn(String block, Path source) {
		try {
			List<String> code = Files.readAllLines(source).stream().map(String::strip).toList();
			List<String> lines = block.lines().map(String::strip).toList();
			return java.util.Collections.indexOfSubList(code, lines) >= 0;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
