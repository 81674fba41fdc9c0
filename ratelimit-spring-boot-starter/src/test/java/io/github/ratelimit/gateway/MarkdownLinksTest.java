package io.github.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link in the repository's Markdown (README, CONTRIBUTING, CHANGELOG, {@code src/docs}, the chart's
 * and the harnesses' READMEs) names a file that exists and, with a {@code #fragment} into a Markdown file, a heading
 * of it (GitHub's anchors: lower case, punctuation dropped, spaces as {@code -}, {@code -1}, {@code -2} for repeated
 * headings). Links in code blocks and code spans are not links; web addresses are not followed.
 */
class MarkdownLinksTest {

	/** {@code [text](target)} or {@code ![alt](target "title")}; group 1 is the target. */
	private static final Pattern LINK = Pattern
		.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

	private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");

	private final Map<Path, Set<String>> anchors = new HashMap<>();

	@Test
	void everyRelativeLinkResolves() throws IOException {
		Path root = root();
		List<Path> files = markdownFiles(root);
		assertThat(files).as("Markdown files under %s", root).contains(root.resolve("README.md"));
		List<String> broken = new ArrayList<>();
		for (Path file : files) {
			for (String target : links(Files.readString(file))) {
				String problem = check(file, target);
				if (problem != null) {
					broken.add(root.relativize(file) + ": (" + target + ") " + problem);
				}
			}
		}
		assertThat(broken).as("broken links").isEmpty();
	}

	@Test
	void anchorsAreGitHubs() {
		assertThat(anchors("""
				# Title
				## Requests in flight (`type: concurrency`)
				## Managed Redis: AUTH, ACL, TLS
				## Title
				```
				# not a heading
				```
				<a id="custom"></a>
				""")).containsExactlyInAnyOrder("title", "requests-in-flight-type-concurrency",
						"managed-redis-auth-acl-tls", "title-1", "custom");
		assertThat(links("see [a](b.md#c), `[x](y.md)`, ![img](p.png \"t\") and [web](https://example.com)\n"
				+ "```\n[z](z.md)\n```\n")).containsExactly("b.md#c", "p.png", "https://example.com");
	}

	private String check(Path file, String target) {
		if (target.matches("(?i)[a-z][a-z0-9+.-]*:.*")) {
			return null; // https:, mailto:, ...
		}
		int hash = target.indexOf('#');
		String path = (hash < 0) ? target : target.substring(0, hash);
		String fragment = (hash < 0) ? null : target.substring(hash + 1);
		Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
		if (!Files.exists(resolved)) {
			return "no such file: " + resolved;
		}
		if (fragment != null && resolved.toString().endsWith(".md")) {
			Set<String> known = this.anchors.computeIfAbsent(resolved, (md) -> {
				try {
					return anchors(Files.readString(md));
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
			if (!known.contains(fragment)) {
				return "no heading with anchor #" + fragment + " in " + resolved.getFileName();
			}
		}
		return null;
	}

	static List<String> links(String markdown) {
		List<String> links = new ArrayList<>();
		for (String line : prose(markdown)) {
			Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
			while (link.find()) {
				links.add(link.group(1));
			}
		}
		return links;
	}

	static Set<String> anchors(String markdown) {
		Set<String> anchors = new LinkedHashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		for (String line : prose(markdown)) {
			Matcher heading = HEADING.matcher(line);
			if (heading.matches()) {
				String slug = heading.group(1).replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
					.toLowerCase(Locale.ROOT)
					.replaceAll("[^\\p{L}\\p{N} _-]", "")
					.replace(' ', '-');
				int n = seen.merge(slug, 1, Integer::sum) - 1;
				anchors.add((n == 0) ? slug : slug + "-" + n);
			}
			Matcher html = HTML_ANCHOR.matcher(line);
			while (html.find()) {
				anchors.add(html.group(1));
			}
		}
		return anchors;
	}

	/** The lines outside fenced code blocks. */
	private static List<String> prose(String markdown) {
		List<String> lines = new ArrayList<>();
		boolean fenced = false;
		for (String line : markdown.split("\n", -1)) {
			if (line.strip().startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			if (!fenced) {
				lines.add(line);
			}
		}
		return lines;
	}

	private static List<Path> markdownFiles(Path root) throws IOException {
		List<Path> files = new ArrayList<>();
		for (String name : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
			if (Files.isRegularFile(root.resolve(name))) {
				files.add(root.resolve(name));
			}
		}
		for (String dir : List.of("src/docs", "src/benchmarks", "helm")) {
			try (Stream<Path> walk = Files.walk(root.resolve(dir))) {
				walk.filter((p) -> p.toString().endsWith(".md"))
					.filter((p) -> !root.relativize(p).toString().contains("target"))
					.sorted()
					.forEach(files::add);
			}
		}
		return files;
	}

	private static Path root() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("src/docs"))) {
				return dir;
			}
		}
		throw new IllegalStateException("No README.md with src/docs from " + Path.of("").toAbsolutePath() + " up");
	}

}
