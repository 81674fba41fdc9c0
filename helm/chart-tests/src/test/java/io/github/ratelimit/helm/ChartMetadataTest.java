package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;

/**
 * Chart.yaml carries what chart repositories and Artifact Hub show: the project's home and sources, maintainers and
 * an icon, and the icon's URL names a file of this repository (on its main branch), so it cannot point nowhere.
 */
class ChartMetadataTest {

	/** The project's repository. */
	static final String PROJECT = "https://github.com/ratelimit/ratelimit-spring-boot-starter";

	/** Raw files of the repository's main branch. */
	static final String RAW = "https://raw.githubusercontent.com/ratelimit/ratelimit-spring-boot-starter/main/";

	private static Map<String, Object> chart;

	@BeforeAll
	static void readChart() throws IOException {
		chart = new Yaml().load(Files.readString(HelmChart.dir().resolve("Chart.yaml")));
	}

	@Test
	void homeAndSourcesAreTheProject() {
		assertThat(chart).containsEntry("home", PROJECT);
		assertThat(chart.get("sources")).isEqualTo(List.of(PROJECT));
	}

	@Test
	void maintainersAreNamed() {
		assertThat(chart.get("maintainers")).asInstanceOf(LIST)
			.isNotEmpty()
			.allSatisfy((maintainer) -> {
				Map<?, ?> entry = (Map<?, ?>) maintainer;
				assertThat(entry.get("name")).asString().isNotBlank();
				assertThat(entry.get("url")).isEqualTo(PROJECT);
			});
	}

	@Test
	void iconIsAnSvgOfThisRepository() throws IOException {
		String icon = (String) chart.get("icon");
		assertThat(icon).startsWith(RAW);
		Path repository = HelmChart.dir().getParent().getParent();
		Path file = repository.resolve(icon.substring(RAW.length()));
		assertThat(file).as("the icon's file in this repository").isRegularFile();
		assertThat(Files.readString(file)).contains("<svg xmlns=\"http://www.w3.org/2000/svg\"");
	}

}
