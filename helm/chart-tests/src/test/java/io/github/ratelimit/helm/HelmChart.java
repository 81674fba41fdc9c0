package io.github.ratelimit.helm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.assertj.core.api.ThrowableAssertAlternative;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The chart under test, rendered by helm-java (Helm's own Go code in a native library: no helm binary) and parsed
 * into fabric8 Kubernetes objects.
 */
final class HelmChart {

	/** Release name used for every rendering. */
	static final String RELEASE = "edge";

	/** Namespace used for every rendering. */
	static final String NAMESPACE = "gateways";

	/**
	 * Kubernetes version rendered for. helm-java's client-only rendering otherwise assumes v1.20, below the chart's
	 * kubeVersion constraint (the preStop sleep action needs 1.30).
	 */
	static final String KUBE_VERSION = "v1.31.0";

	/** Full name of the resources for {@link #RELEASE}. */
	static final String FULLNAME = RELEASE + "-ratelimit-gateway";

	private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");

	private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

	private HelmChart() {
	}

	/**
	 * The chart directory, {@code helm/ratelimit-gateway} at the top of the repository. Surefire runs with the
	 * module directory as working directory; the system property {@code chart.dir} overrides it.
	 * @return the chart directory
	 */
	static Path dir() {
		String configured = System.getProperty("chart.dir");
		Path dir = (configured != null) ? Paths.get(configured) : Paths.get("..", "helm", "ratelimit-gateway");
		Path chart = dir.toAbsolutePath().normalize();
		if (!Files.isRegularFile(chart.resolve("Chart.yaml"))) {
			throw new IllegalStateException("No chart at " + chart + " (set -Dchart.dir)");
		}
		return chart;
	}

	/**
	 * The production example values file.
	 * @return {@code examples/production.yaml} of the chart
	 */
	static Path productionValues() {
		return dir().resolve("examples").resolve("production.yaml");
	}

	/**
	 * A {@code helm template} command for the chart with the test release name and namespace.
	 * @return the command, to add values to and {@link #render(TemplateCommand) render}
	 */
	static TemplateCommand template() {
		return template(dir());
	}

	/**
	 * Assert that {@code helm template} refuses the given values (a values file, as list values need: {@code --set}
	 * on a list element replaces the whole list) with a message holding each of the given texts.
	 * @param dir a directory to write the values file in
	 * @param values the values, as YAML
	 * @param messages the texts the message holds
	 * @throws IOException if the values file cannot be written
	 */
	static void assertRefuses(Path dir, String values, String... messages) throws IOException {
		TemplateCommand command = template().withValuesFile(Files.writeString(dir.resolve("values.yaml"), values));
		ThrowableAssertAlternative<IllegalStateException> refusal = assertThatIllegalStateException()
			.isThrownBy(command::call);
		for (String message : messages) {
			refusal.withMessageContaining(message);
		}
	}

	static TemplateCommand template(Path chart) {
		return new Helm(chart).template().withName(RELEASE).withNamespace(NAMESPACE).withKubeVersion(KUBE_VERSION);
	}

	/**
	 * Render and parse.
	 * @param command the template command
	 * @return the rendered objects
	 * @throws IllegalStateException with Helm's message when rendering fails (schema, {@code fail})
	 */
	static Manifests render(TemplateCommand command) {
		return Manifests.parse(command.call());
	}

	/**
	 * Copy the chart to a directory, e.g. to change a template for one test.
	 * @param target the directory to copy into
	 * @return the copied chart's directory
	 */
	static Path copyTo(Path target) {
		Path source = dir();
		try (Stream<Path> files = Files.walk(source)) {
			for (Path file : files.sorted(Comparator.naturalOrder()).toList()) {
				Path copy = target.resolve(source.relativize(file).toString());
				if (Files.isDirectory(file)) {
					Files.createDirectories(copy);
				}
				else {
					Files.copy(file, copy);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return target;
	}

	/** The objects of one rendering, in template order, with the raw text kept for text assertions. */
	record Manifests(String text, List<HasMetadata> objects) {

		static Manifests parse(String text) {
			List<HasMetadata> objects = new ArrayList<>();
			for (String document : DOCUMENT_SEPARATOR.split(text)) {
				if (document.lines().allMatch((line) -> line.isBlank() || line.startsWith("#"))) {
					continue;
				}
				objects.add(SERIALIZATION.unmarshal(document, HasMetadata.class));
			}
			return new Manifests(text, List.copyOf(objects));
		}

		/**
		 * The one object of a type (fails when there is none or several).
		 * @param type the fabric8 class
		 * @param <T> the type
		 * @return the object
		 */
		<T extends HasMetadata> T one(Class<T> type) {
			List<T> found = all(type);
			if (found.size() != 1) {
				throw new AssertionError("Expected one " + type.getSimpleName() + ", found " + found.size() + " in "
						+ kinds());
			}
			return found.get(0);
		}

		/**
		 * The object of a type with a name.
		 * @param type the fabric8 class
		 * @param name the metadata name
		 * @param <T> the type
		 * @return the object
		 */
		<T extends HasMetadata> T named(Class<T> type, String name) {
			return all(type).stream()
				.filter((object) -> name.equals(object.getMetadata().getName()))
				.findFirst()
				.orElseThrow(() -> new AssertionError("No " + type.getSimpleName() + " " + name + " in " + kinds()));
		}

		<T extends HasMetadata> List<T> all(Class<T> type) {
			return this.objects.stream().filter(type::isInstance).map(type::cast).toList();
		}

		/**
		 * Kind and name of every object, e.g. {@code Deployment/edge-ratelimit-gateway}, in template order.
		 * @return kind/name to the object's class
		 */
		Map<String, Class<?>> kinds() {
			Map<String, Class<?>> kinds = new LinkedHashMap<>();
			this.objects.forEach((o) -> kinds.put(o.getKind() + "/" + o.getMetadata().getName(), o.getClass()));
			return kinds;
		}

	}

}
