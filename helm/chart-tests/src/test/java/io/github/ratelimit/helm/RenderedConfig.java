package io.github.ratelimit.helm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;

import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * The Spring configuration a gateway pod would see: the ConfigMap's {@code application.yml} (its second document,
 * extraConfig, overriding the first), the API key document of a chart-created Secret on top (it is imported by
 * {@code spring.config.import}, so it wins), and the demo upstream's address when routes use it (the sample's
 * {@code DemoUpstreamInitializer} sets {@code sample.upstream-uri} at start-up). Environment variables such as the
 * Redis password are not part of it.
 */
final class RenderedConfig {

	/** The address the test pretends the demo upstream has. */
	static final String DEMO_UPSTREAM = "http://127.0.0.1:65535";

	private final MutablePropertySources sources = new MutablePropertySources();

	private final Binder binder;

	private RenderedConfig(HelmChart.Manifests manifests) {
		String applicationYaml = manifests.one(ConfigMap.class).getData().get("application.yml");
		load("ConfigMap application.yml", applicationYaml).forEach(this.sources::addFirst);
		for (Secret secret : manifests.all(Secret.class)) {
			String apiKeys = (secret.getData() != null) ? secret.getData().get("api-keys.yml") : null;
			if (apiKeys != null) {
				String document = new String(Base64.getDecoder().decode(apiKeys), StandardCharsets.UTF_8);
				load("Secret api-keys.yml", document).forEach(this.sources::addFirst);
			}
		}
		if (!this.sources.stream().anyMatch((source) -> source.containsProperty("sample.upstream-uri"))) {
			this.sources.addLast(new MapPropertySource("demo upstream", Map.of("sample.upstream-uri", DEMO_UPSTREAM)));
		}
		this.binder = new Binder(ConfigurationPropertySources.from(this.sources),
				new PropertySourcesPlaceholdersResolver(this.sources), ApplicationConversionService.getSharedInstance());
	}

	static RenderedConfig of(HelmChart.Manifests manifests) {
		return new RenderedConfig(manifests);
	}

	/**
	 * Bind a prefix into a properties object, failing on any key under the prefix that the object does not have
	 * (Spring would silently ignore a misspelt key).
	 * @param prefix the property prefix
	 * @param instance the properties object to bind into
	 * @param <T> its type
	 * @return the bound object
	 */
	<T> T bindStrictly(String prefix, T instance) {
		return this.binder
			.bind(prefix, Bindable.ofInstance(instance), new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
			.orElse(instance);
	}

	/**
	 * One property, converted.
	 * @param name the property name
	 * @param type the type
	 * @param <T> the type
	 * @return the value, or {@code null} when not set
	 */
	<T> T get(String name, Class<T> type) {
		return this.binder.bind(name, type).orElse(null);
	}

	private static List<PropertySource<?>> load(String name, String yaml) {
		try {
			return new YamlPropertySourceLoader().load(name,
					new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8), name));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
