package io.github.ratelimit.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import io.github.ratelimit.accuracy.Png;

/**
 * The protection benchmark's chart (Java2D, headless, like {@link Chart}): one panel per run with the load phases
 * shaded and, over the run's seconds, the protection's limit, the requests in flight through it at the gateway and
 * the requests at the upstream (queued and in service); a last panel with each run's successful answers per second
 * ÷ the upstream's capacity.
 */
final class ProtectionChart {

	private static final int WIDTH = 1200;

	private static final int PANEL = 250;

	private static final int LEFT = 70;

	private static final int RIGHT = 250;

	/** A line over the run's seconds: x in seconds, y values; NaN leaves a gap. */
	record Line(String label, Color color, float width, double[] x, double[] y) {
	}

	/** A shaded load phase. */
	record Band(String label, double from, double to) {
	}

	/** One panel: its title, y unit, lines, and optional dashed reference lines. */
	record Panel(String title, String unit, List<Line> lines, List<Chart.RefLine> refs) {
	}

	private ProtectionChart() {
	}

	static void write(Path file, String title, List<Band> bands, double seconds, List<Panel> panels)
			throws IOException {
		int top = 45;
		Png png = new Png(WIDTH, top + PANEL * panels.size() + 10, title, 18, 20, 28);
		Graphics2D g = png.graphics();
		for (int i = 0; i < panels.size(); i++) {
			draw(g, top + i * PANEL, bands, seconds, panels.get(i));
		}
		png.write(file);
	}

	private static void draw(Graphics2D g, int top, List<Band> bands, double seconds, Panel panel) {
		Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
		int plotTop = top + 30;
		int bottom = top + PANEL - 35;
		int right = WIDTH - RIGHT;
		double max = 0;
		for (Line line : panel.lines()) {
			for (double v : line.y()) {
				if (!Double.isNaN(v)) {
					max = Math.max(max, v);
				}
			}
		}
		for (Chart.RefLine ref : panel.refs()) {
			max = Math.max(max, ref.value());
		}
		double hi = niceCeiling(Math.max(1, max * 1.1));
		// phases
		g.setFont(small);
		FontMetrics fm = g.getFontMetrics();
		for (int b = 0; b < bands.size(); b++) {
			Band band = bands.get(b);
			int x0 = x(band.from(), seconds, right);
			int x1 = x(band.to(), seconds, right);
			g.setColor((b % 2 == 0) ? new Color(0xf2f2f2) : new Color(0xe3e3e3));
			g.fillRect(x0, plotTop, x1 - x0, bottom - plotTop);
			g.setColor(Color.DARK_GRAY);
			g.drawString(band.label(), (x0 + x1) / 2 - fm.stringWidth(band.label()) / 2, plotTop + 12);
		}
		// axes
		g.setColor(Color.BLACK);
		g.setStroke(new BasicStroke(1f));
		g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
		g.drawString(panel.title(), 20, top + 20);
		g.setFont(small);
		g.drawLine(LEFT, plotTop, LEFT, bottom);
		g.drawLine(LEFT, bottom, right, bottom);
		for (int i = 0; i <= 4; i++) {
			double v = hi * i / 4;
			int y = y(v, hi, plotTop, bottom);
			g.drawLine(LEFT - 4, y, LEFT, y);
			String text = Chart.label(v);
			g.drawString(text, LEFT - 8 - fm.stringWidth(text), y + 4);
		}
		g.drawString(panel.unit(), 8, plotTop - 4);
		double step = (seconds > 40) ? 10 : (seconds > 15 ? 5 : 2);
		for (double s = 0; s <= seconds + 1e-9; s += step) {
			int x = x(s, seconds, right);
			g.drawLine(x, bottom, x, bottom + 4);
			String text = Chart.label(s);
			g.drawString(text, x - fm.stringWidth(text) / 2, bottom + 16);
		}
		g.drawString("s since the run began", right - 110, bottom + 30);
		// reference lines
		for (Chart.RefLine ref : panel.refs()) {
			int y = y(ref.value(), hi, plotTop, bottom);
			g.setColor(ref.color());
			g.setStroke(new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
					new float[] { 6f, 4f }, 0f));
			g.drawLine(LEFT, y, right, y);
			g.drawString(ref.label(), right + 6, y + 4);
		}
		// lines
		g.setClip(LEFT, plotTop - 2, right - LEFT + 1, bottom - plotTop + 4);
		for (Line line : panel.lines()) {
			g.setColor(line.color());
			g.setStroke(new BasicStroke(line.width()));
			int px = -1;
			int py = -1;
			for (int i = 0; i < line.x().length; i++) {
				if (Double.isNaN(line.y()[i])) {
					px = -1;
					continue;
				}
				int x = x(line.x()[i], seconds, right);
				int y = y(line.y()[i], hi, plotTop, bottom);
				if (px >= 0) {
					g.drawLine(px, py, x, y);
				}
				px = x;
				py = y;
			}
		}
		g.setClip(null);
		// legend
		g.setStroke(new BasicStroke(1f));
		int ly = plotTop + 30;
		for (Line line : panel.lines()) {
			g.setColor(line.color());
			g.fillRect(right + 8, ly - 8, 14, 8);
			g.setColor(Color.BLACK);
			g.drawString(line.label(), right + 28, ly);
			ly += 18;
		}
	}

	private static int x(double seconds, double total, int right) {
		return LEFT + (int) Math.round(seconds / total * (right - LEFT));
	}

	private static int y(double v, double hi, int top, int bottom) {
		return (int) Math.round(bottom - v / hi * (bottom - top));
	}

	private static double niceCeiling(double v) {
		double magnitude = Math.pow(10, Math.floor(Math.log10(v)));
		for (double step : new double[] { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 }) {
			if (step * magnitude >= v) {
				return step * magnitude;
			}
		}
		return 10 * magnitude;
	}

}
