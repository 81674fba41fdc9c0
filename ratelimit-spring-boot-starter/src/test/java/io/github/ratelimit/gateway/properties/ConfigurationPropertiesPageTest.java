package io.github.ratelimit.gateway.properties;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The committed configuration properties reference is the one {@link ConfigurationPropertiesPage} generates from
 * the current metadata. When a property or its javadoc changes, rewrite the page with
 * {@value ConfigurationPropertiesPage#REGENERATE} (it then passes).
 */
class ConfigurationPropertiesPageTest {

	/** System property that makes the test write the page instead of failing on a difference. */
	static final String WRITE = "configuration.page.write";

	@Test
	void committedPageIsTheOneGeneratedFromTheMetadata() throws IOException {
		Path file = ConfigurationPropertiesPage.file();
		String expected = ConfigurationPropertiesPage.generate();
		if (Boolean.getBoolean(WRITE) && !(Files.isRegularFile(file) && Files.readString(file).equals(expected))) {
			Files.writeString(file, expected);
		}
		assertThat(file).as("%s is missing; write it with%n  %s", file, ConfigurationPropertiesPage.REGENERATE)
			.isRegularFile();
		assertThat(Files.readString(file)).as("""
				%s differs from what the configuration metadata gives (a property or its javadoc changed).
				Regenerate it with
				  %s""", file, ConfigurationPropertiesPage.REGENERATE).isEqualTo(expected);
	}

	@Test
	void everyPropertyIsOneRowWithItsTypeDefaultDescriptionAndValues() {
		String page = ConfigurationPropertiesPage.of(JsonMapper.shared().readTree("""
				{"properties": [
				  {"name": "ratelimit.b", "type": "java.util.Map<java.lang.String,io.github.x.Outer$Plan>",
				   "description": "Plans | by name."},
				  {"name": "ratelimit.a", "type": "io.github.x.HeaderStyle", "defaultValue": "ietf",
				   "description": "Which fields."}
				 ],
				 "hints": [
				  {"name": "ratelimit.a", "values": [{"value": "ietf", "description": "IETF fields."},
				                                     {"value": "none"}]}
				 ]}
				"""));
		assertThat(page).contains("""
				| property | type | default | description |
				|---|---|---|---|
				| `ratelimit.a` | `HeaderStyle` | `ietf` | Which fields. Values: `ietf` (IETF fields.), `none`. |
				| `ratelimit.b` | `Map<String, Plan>` |  | Plans \\| by name. |
				""").contains(ConfigurationPropertiesPage.REGENERATE);
	}

	@Test
	void typesLoseTheirPackagesAndOuterClasses() {
		assertThat(ConfigurationPropertiesPage.type("java.time.Duration")).isEqualTo("Duration");
		assertThat(ConfigurationPropertiesPage.type("java.util.Set<java.lang.String>")).isEqualTo("Set<String>");
		assertThat(ConfigurationPropertiesPage.type(
				"io.github.ratelimit.gateway.properties.RateLimitProperties$DenialLogLevel"))
			.isEqualTo("DenialLogLevel");
	}

}
