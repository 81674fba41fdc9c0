package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Tab-separated result files: a header line, then one row per measurement; appended as results come. */
final class Tsv {

	private Tsv() {
	}

	static void append(Path file, List<String> header, List<?> row) throws IOException {
		if (!Files.exists(file)) {
			Files.writeString(file, String.join("\t", header) + "\n", StandardCharsets.UTF_8);
		}
		List<String> cells = new ArrayList<>();
		for (Object cell : row) {
			cells.add(String.valueOf(cell));
		}
		Files.writeString(file, String.join("\t", cells) + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
	}

	/** Rows as maps from column name to cell; an absent file has no rows. */
	static List<Map<String, String>> read(Path file) throws IOException {
		List<Map<String, String>> rows = new ArrayList<>();
		if (!Files.exists(file)) {
			return rows;
		}
		List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
		if (lines.isEmpty()) {
			return rows;
		}
		String[] header = lines.get(0).split("\t", -1);
		for (String line : lines.subList(1, lines.size())) {
			if (line.isBlank()) {
				continue;
			}
			String[] cells = line.split("\t", -1);
			Map<String, String> row = new LinkedHashMap<>();
			for (int i = 0; i < header.length; i++) {
				row.put(header[i], (i < cells.length) ? cells[i] : "");
			}
			rows.add(row);
		}
		return rows;
	}

}
