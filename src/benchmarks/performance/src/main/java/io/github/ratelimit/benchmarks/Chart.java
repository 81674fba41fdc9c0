package io.github.ratelimit.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.accuracy.Png;

/** Grouped bar charts drawn with Java2D (headless), written as one PNG of several panels. */
final class Chart {

	static final Color[] PALETTE = { new Color(0x1f77b4), new Color(0xaec7e8), new Color(0xff7f0e),
			new Color(0x2ca02c), new Color(0x9467bd), new Color(0x8c564b) };

	/** One panel: groups along x, one bar per series in each group; NaN values are left out. */
	record Panel(String title, String unit, List<String> groups, List<String> series, double[][] values,
			boolean logScale, List<RefLine> refLines) {
	}

	/** A horizontal reference line. */
	record RefLine(String label, double value, Color color) {
	}

	private Chart() {
	}

	static void write(Path file, String title, List<Panel> panels, int columns) throws IOException {
		int panelWidth = 700;
		int panelHeight = 420;
		int rows = (panels.size() + columns - 1) / columns;
		int top = 50;
		Png png = new Png(panelWidth * columns, top + panelHeight * rows, title, 20, 20, 32);
		for (int i = 0; i < panels.size(); i++) {
			Rectangle area = new Rectangle((i % columns) * panelWidth, top + (i / columns) * panelHeight, panelWidth,
					panelHeight);
			draw(png.graphics(), area, panels.get(i));
		}
		png.write(file);
	}

	private static void draw(Graphics2D g, Rectangle area, Panel panel) {
		Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
		Font normal = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
		Font bold = new Font(Font.SANS_SERIF, Font.BOLD, 14);
		int left = area.x + 70;
		int right = area.x + area.width - 20;
		int top = area.y + 55;
		int bottom = area.y + area.height - 45;
		g.setColor(Color.BLACK);
		g.setFont(bold);
		g.drawString(panel.title(), area.x + 20, area.y + 22);

		double max = 0;
		double minPositive = Double.MAX_VALUE;
		for (double[] row : panel.values()) {
			for (double v : row) {
				if (!Double.isNaN(v)) {
					max = Math.max(max, v);
					if (v > 0) {
						minPositive = Math.min(minPositive, v);
					}
				}
			}
		}
		for (RefLine line : panel.refLines()) {
			max = Math.max(max, line.value());
			if (line.value() > 0) {
				minPositive = Math.min(minPositive, line.value());
			}
		}
		if (max <= 0) {
			max = 1;
		}
		double lo;
		double hi;
		if (panel.logScale()) {
			lo = Math.pow(10, Math.floor(Math.log10(Math.min(minPositive, max))));
			hi = Math.pow(10, Math.ceil(Math.log10(max * 1.2)));
		}
		else {
			lo = 0;
			hi = niceCeiling(max * 1.15);
		}
		// axes and grid
		g.setFont(small);
		FontMetrics fm = g.getFontMetrics();
		g.setStroke(new BasicStroke(1f));
		if (panel.logScale()) {
			for (double t = lo; t <= hi * 1.0001; t *= 10) {
				int y = y(t, lo, hi, top, bottom, true);
				grid(g, left, right, y, label(t), fm);
			}
		}
		else {
			for (int i = 0; i <= 5; i++) {
				double t = hi * i / 5;
				int y = y(t, lo, hi, top, bottom, false);
				grid(g, left, right, y, label(t), fm);
			}
		}
		g.setColor(Color.BLACK);
		g.drawLine(left, bottom, right, bottom);
		g.drawLine(left, top, left, bottom);
		g.drawString(panel.unit(), area.x + 8, top - 10);

		int groups = panel.groups().size();
		int series = panel.series().size();
		double groupWidth = (double) (right - left) / groups;
		double barWidth = groupWidth * 0.8 / series;
		for (int gi = 0; gi < groups; gi++) {
			double gx = left + gi * groupWidth + groupWidth * 0.1;
			for (int si = 0; si < series; si++) {
				double v = panel.values()[si][gi];
				if (Double.isNaN(v)) {
					continue;
				}
				int x = (int) Math.round(gx + si * barWidth);
				int yTop = y(Math.max(v, panel.logScale() ? lo : 0), lo, hi, top, bottom, panel.logScale());
				g.setColor(PALETTE[si % PALETTE.length]);
				g.fillRect(x, yTop, Math.max(1, (int) barWidth - 2), bottom - yTop);
				g.setColor(Color.DARK_GRAY);
				String text = label(v);
				int tw = fm.stringWidth(text);
				if (tw <= barWidth + 10) {
					g.drawString(text, (int) (x + barWidth / 2 - tw / 2.0), yTop - 3);
				}
			}
			g.setColor(Color.BLACK);
			g.setFont(normal);
			String name = panel.groups().get(gi);
			int tw = g.getFontMetrics().stringWidth(name);
			g.drawString(name, (int) (left + gi * groupWidth + groupWidth / 2 - tw / 2.0), bottom + 18);
			g.setFont(small);
		}
		for (RefLine line : panel.refLines()) {
			int y = y(line.value(), lo, hi, top, bottom, panel.logScale());
			g.setColor(line.color());
			g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] { 6f, 4f },
					0f));
			g.drawLine(left, y, right, y);
			g.setStroke(new BasicStroke(1f));
			String text = line.label() + " " + label(line.value());
			g.drawString(text, right - fm.stringWidth(text) - 4, y - 3);
		}
		// legend
		int lx = left;
		int ly = area.y + area.height - 12;
		for (int si = 0; si < series; si++) {
			g.setColor(PALETTE[si % PALETTE.length]);
			g.fillRect(lx, ly - 9, 10, 10);
			g.setColor(Color.BLACK);
			g.drawString(panel.series().get(si), lx + 14, ly);
			lx += 14 + fm.stringWidth(panel.series().get(si)) + 16;
		}
	}

	private static void grid(Graphics2D g, int left, int right, int y, String label, FontMetrics fm) {
		g.setColor(new Color(0xe6e6e6));
		g.drawLine(left, y, right, y);
		g.setColor(Color.DARK_GRAY);
		g.drawString(label, left - fm.stringWidth(label) - 5, y + 4);
	}

	private static int y(double v, double lo, double hi, int top, int bottom, boolean log) {
		double f = log ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo);
		return (int) Math.round(bottom - f * (bottom - top));
	}

	private static double niceCeiling(double v) {
		double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
		for (double step : new double[] { 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 }) {
			if (step * magnitude >= v) {
				return step * magnitude;
			}
		}
		return 10 * magnitude;
	}

	static String label(double v) {
		if (v >= 1_000_000) {
			return String.format(Locale.ROOT, "%.1fM", v / 1_000_000);
		}
		if (v >= 10_000) {
			return String.format(Locale.ROOT, "%.0fk", v / 1000);
		}
		if (v >= 1000) {
			return String.format(Locale.ROOT, "%.1fk", v / 1000);
		}
		if (v >= 10) {
			return String.format(Locale.ROOT, "%.0f", v);
		}
		if (v >= 0.1) {
			return String.format(Locale.ROOT, "%.2f", v);
		}
		if (v == 0) {
			return "0";
		}
		return String.format(Locale.ROOT, "%.4f", v);
	}

}
