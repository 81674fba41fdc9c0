package io.github.ratelimit.helm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The chart README's values table is the one derived from values.yaml ({@link ValuesTable}). When values.yaml
 * changes, refresh the table with
 * {@code ./mvnw -B test -pl helm/chart-tests -am -Dtest=ValuesTableTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dvalues.table.write=true}, which rewrites it in place (and passes).
 */
class ValuesTableTest {

	/** System property that makes the test write the table instead of failing on a difference. */
	static final String WRITE = "values.table.write";

	@Test
	void readmeTableIsTheOneDerivedFromValuesYaml() throws IOException {
		Path readme = HelmChart.dir().resolve("README.md");
		String expected = ValuesTable.of(Files.readString(HelmChart.dir().resolve("values.yaml")));
		String written = ValuesTable.in(Files.readString(readme));
		assertThat(written).as("%s has no lines %s and %s around the values table", readme, ValuesTable.START,
				ValuesTable.END).isNotNull();
		if (Boolean.getBoolean(WRITE) && !expected.equals(written)) {
			ValuesTable.write(readme, expected);
			written = ValuesTable.in(Files.readString(readme));
		}
		assertThat(written).as("""
				The values table of %s differs from values.yaml. Refresh it with
				  ./mvnw -B test -pl helm/chart-tests -am -Dtest=ValuesTableTest -Dsurefire.failIfNoSpecifiedTests=false -D%s=true
				or paste the expected table between the markers. Expected table:
				%s""", readme, WRITE, expected).isEqualTo(expected);
	}

	@Test
	void everyDefaultValueIsARow() {
		String table = ValuesTable.of("""
				# -- Pods.
				replicaCount: 2
				image:
				  # -- Repository.
				  repository: ratelimit/sample-gateway
				  # -- Tag; "" = the appVersion.
				  tag: ""
				# -- Limits of a | b: groups.<group>, `<code>`.
				plans:
				  free: { capacity: 20 }
				# -- (int) Instances; null = derived.
				instances: null
				""");
		assertThat(table).isEqualTo("""
				| Key | Type | Default | Description |
				|---|---|---|---|
				| replicaCount | int | `2` | Pods. |
				| image.repository | string | `"ratelimit/sample-gateway"` | Repository. |
				| image.tag | string | `""` | Tag; "" = the appVersion. |
				| plans | object | `{"free":{"capacity":20}}` | Limits of a \\| b: groups.&lt;group>, `<code>`. |
				| instances | int | `null` | Instances; null = derived. |
				""");
	}

	@Test
	void descriptionIsTheCommentBlockRightAboveItsKeyFromTheDashedLineOn() {
		String table = ValuesTable.of("""
				# Section heading, not a description.

				# Also not part of it.
				# -- First line,
				# second line.
				port: 8080
				""");
		assertThat(table).endsWith("| port | int | `8080` | First line, second line. |\n");
	}

	@Test
	void anUndocumentedValueOrANullWithoutTypeIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> ValuesTable.of("""
				server:
				  # just a comment
				  port: 8080
				# -- Timeout.
				timeout: null
				"""))
			.withMessageContaining("server.port has no '# --' description")
			.withMessageContaining("timeout defaults to null: give its type");
	}

}
