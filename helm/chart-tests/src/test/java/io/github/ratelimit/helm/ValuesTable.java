package io.github.ratelimit.helm;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.comments.CommentLine;
import org.yaml.snakeyaml.comments.CommentType;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The values table of the chart's README (key, type, default, description), derived from {@code values.yaml} the
 * way helm-docs reads it: a value is documented by a comment block right above its key whose first line starts
 * with {@code # --}; the following comment lines continue the description. A documented key is one row, its default
 * the whole value below it (as JSON); an undocumented map is descended into, and an undocumented value anywhere else
 * is an error, so every value stays documented where it is declared.
 *
 * <p>The type is the default's (int, float, bool, string, list, object), or the one given in parentheses at the start
 * of the description, e.g. {@code # -- (int) ...}; a value whose default is {@code null} must give one.
 */
final class ValuesTable {

	/** The line the table starts after, in the README. */
	static final String START = "<!-- values-table:start -->";

	/** The line the table ends before, in the README. */
	static final String END = "<!-- values-table:end -->";

	private static final Pattern TYPE_ANNOTATION = Pattern.compile("^\\((\\w[\\w ]*)\\)\\s*");

	private ValuesTable() {
	}

	/**
	 * The table for a values file.
	 * @param valuesYaml the text of {@code values.yaml}
	 * @return the Markdown table, header included, each line ending with a newline
	 * @throws IllegalStateException naming every value without a description, or with a {@code null} default and
	 * no type
	 */
	static String of(String valuesYaml) {
		LoaderOptions options = new LoaderOptions();
		options.setProcessComments(true);
		Node root = new Yaml(options).compose(new StringReader(valuesYaml));
		Map<String, Object> values = new Yaml().load(valuesYaml);
		List<String> problems = new ArrayList<>();
		StringBuilder table = new StringBuilder("| Key | Type | Default | Description |\n|---|---|---|---|\n");
		rows((MappingNode) root, values, "", table, problems);
		if (!problems.isEmpty()) {
			throw new IllegalStateException("values.yaml: " + String.join("; ", problems));
		}
		return table.toString();
	}

	/**
	 * The table between {@link #START} and {@link #END} in a README.
	 * @param readme the README's text
	 * @return the table as written there, or {@code null} without the markers
	 */
	static String in(String readme) {
		int start = readme.indexOf(START);
		int end = readme.indexOf(END);
		if (start < 0 || end < start) {
			return null;
		}
		return readme.substring(readme.indexOf('\n', start) + 1, end);
	}

	/**
	 * Write a table between the markers of a README file.
	 * @param readme the README file, with both markers
	 * @param table the table
	 */
	static void write(Path readme, String table) {
		try {
			String text = Files.readString(readme);
			int start = text.indexOf('\n', text.indexOf(START)) + 1;
			int end = text.indexOf(END);
			Files.writeString(readme, text.substring(0, start) + table + text.substring(end));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static void rows(MappingNode mapping, Map<String, Object> values, String prefix, StringBuilder table,
			List<String> problems) {
		for (NodeTuple tuple : mapping.getValue()) {
			String key = ((ScalarNode) tuple.getKeyNode()).getValue();
			String path = prefix + key;
			Object value = values.get(key);
			String description = description(tuple.getKeyNode().getBlockComments());
			if (description == null) {
				if (tuple.getValueNode() instanceof MappingNode nested && !nested.getValue().isEmpty()) {
					rows(nested, (Map<String, Object>) value, path + ".", table, problems);
				}
				else {
					problems.add(path + " has no '# --' description");
				}
				continue;
			}
			String type = type(value);
			Matcher annotation = TYPE_ANNOTATION.matcher(description);
			if (annotation.find()) {
				type = annotation.group(1);
				description = description.substring(annotation.end());
			}
			if (type == null) {
				problems.add(path + " defaults to null: give its type, '# -- (int) ...'");
				continue;
			}
			table.append("| ").append(cell(path)).append(" | ").append(type).append(" | `")
				.append(cell(JsonMapper.shared().writeValueAsString(value))).append("` | ").append(descriptionCell(description))
				.append(" |\n");
		}
	}

	/** The description of the comment block right above a key, or {@code null} when it has none. */
	private static String description(List<CommentLine> comments) {
		if (comments == null) {
			return null;
		}
		List<String> block = new ArrayList<>();
		for (CommentLine comment : comments) {
			if (comment.getCommentType() == CommentType.BLANK_LINE) {
				block.clear(); // only the block right above the key counts
			}
			else {
				block.add(comment.getValue().strip());
			}
		}
		for (int i = 0; i < block.size(); i++) {
			if (block.get(i).startsWith("--")) {
				List<String> lines = new ArrayList<>(block.subList(i, block.size()));
				lines.set(0, lines.get(0).substring(2).strip());
				return String.join(" ", lines).strip();
			}
		}
		return null;
	}

	private static String type(Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof Integer || value instanceof Long || value instanceof java.math.BigInteger) {
			return "int";
		}
		if (value instanceof Number) {
			return "float";
		}
		if (value instanceof Boolean) {
			return "bool";
		}
		if (value instanceof List<?>) {
			return "list";
		}
		if (value instanceof Map<?, ?>) {
			return "object";
		}
		return "string";
	}

	private static String cell(String text) {
		return text.replace("|", "\\|");
	}

	/**
	 * A description for a table cell: {@code |} escaped, and {@code <} outside code spans written as {@code &lt;},
	 * so that {@code groups.<group>} is not taken for an HTML tag (which GitHub drops).
	 */
	private static String descriptionCell(String text) {
		StringBuilder cell = new StringBuilder();
		boolean code = false;
		for (char c : text.toCharArray()) {
			if (c == '`') {
				code = !code;
			}
			cell.append((c == '<' && !code) ? "&lt;" : String.valueOf(c));
		}
		return cell(cell.toString());
	}

}
