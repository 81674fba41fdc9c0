package io.github.ratelimit.gateway.properties;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static io.github.ratelimit.gateway.properties.RateLimitConfigurationTestSupport.runner;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configurations the docs show start a gateway's rate limiting as they are: the README's minimal configuration
 * and the example of {@code src/docs/reference/configuration.md}, each the first YAML block after its heading.
 */
class DocumentedConfigurationTest {

	@Test
	void readmeMinimalConfigurationStarts() throws IOException {
		List<PropertySource<?>> yaml = yamlAfter(Path.of("README.md"), "## A minimal configuration");
		runner().withInitializer((context) -> yaml.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitResolver limits = context.getBean(LimitResolver.class);
				assertThat(limits.limitsFor("free", "search").limits()).hasSize(1);
				assertThat(limits.limitsFor("anonymous", "search").limits()).hasSize(1);
			});
	}

	@Test
	void configurationPageExampleStarts() throws IOException {
		List<PropertySource<?>> yaml = yamlAfter(Path.of("src", "docs", "reference", "configuration.md"), "## Example");
		runner().withInitializer((context) -> yaml.forEach(context.getEnvironment().getPropertySources()::addFirst))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(LimitResolver.class).limitsFor("free", "api").limits()).hasSize(2);
			});
	}

	private static List<PropertySource<?>> yamlAfter(Path file, String heading) throws IOException {
		String markdown = Files.readString(fromRoot(file));
		int at = markdown.indexOf("\n" + heading + "\n");
		assertThat(at).as("%s has a heading %s", file, heading).isNotNegative();
		Matcher block = Pattern.compile("```yaml\\n(.*?)\\n```", Pattern.DOTALL).matcher(markdown);
		assertThat(block.find(at)).as("a YAML block after %s in %s", heading, file).isTrue();
		return new YamlPropertySourceLoader().load(file + ", " + heading,
				new ByteArrayResource(block.group(1).getBytes(StandardCharsets.UTF_8)));
	}

	private static Path fromRoot(Path file) {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve(file))) {
				return dir.resolve(file);
			}
		}
		throw new IllegalStateException("Not found from " + Path.of("").toAbsolutePath() + " upwards: " + file);
	}

}
