package io.github.ratelimit.accuracy;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static io.github.ratelimit.accuracy.Png.COLORS;
import static io.github.ratelimit.accuracy.Png.LEFT;
import static io.github.ratelimit.accuracy.Png.WIDTH;

/**
 * Draws the run as a PNG (Java AWT, headless): top, admitted minus {@code rate × t} over the whole run, per algorithm,
 * with theory (the capacity) as a dashed line; bottom, the number admitted in the window of length W ending at each
 * admission over the first seconds, with the plan's limit per window as a dashed line.
 */
final class AccuracyChart {

	private static final int PANEL = 330;

	private static final int RIGHT = 230;

	private AccuracyChart() {
	}

	/** The legend's name of a run: the algorithm, or for a token bucket with leases "token-bucket+lease 2%". */
	static String chartLabel(AccuracyAnalysis run) {
		String name = run.plan().algorithm().configName();
		if (run.leases() == null || !run.leases().on()) {
			return name;
		}
		double budget = run.leases().budgetPercent();
		return name + "+lease " + ((budget == Math.rint(budget)) ? Long.toString((long) budget) : Double.toString(budget))
				+ "%";
	}

	static void write(List<AccuracyAnalysis> runs, String title, double zoomSeconds, Path file) throws IOException {
		Png png = new Png(WIDTH, 2 * PANEL + 90, title, 15, LEFT, 24);
		excessPanel(png.graphics(), runs, 45);
		windowPanel(png.graphics(), runs, zoomSeconds, 45 + PANEL + 40);
		png.write(file);
	}

	/** Admitted so far minus rate × t: a token bucket stays at its capacity, windows step between 0 and it. */
	private static void excessPanel(Graphics2D g, List<AccuracyAnalysis> runs, int top) {
		double maxSeconds = runs.stream().mapToDouble(AccuracyAnalysis::seconds).max().orElse(1);
		long capacity = runs.get(0).plan().capacity();
		double rate = runs.get(0).plan().ratePerSecond();
		double yMin = -0.25 * capacity;
		for (AccuracyAnalysis run : runs) {
			long[] times = run.admittedTimes();
			for (int i = 0; i < times.length; i++) {
				yMin = Math.min(yMin, (i + 1) - rate * times[i] / 1e6);
			}
		}
		double yMax = 1.5 * capacity;
		Frame f = new Frame(g, top, 0, maxSeconds, yMin - 0.05 * (yMax - yMin), yMax);
		f.axes("admitted − rate × t over the run (tokens)", "Redis time since the first check (s)");
		f.dashed(capacity, "theory: capacity + rate × t");
		// drawn in reverse, so that the first algorithm (the token bucket) is on top
		for (int r = runs.size() - 1; r >= 0; r--) {
			AccuracyAnalysis run = runs.get(r);
			long[] times = run.admittedTimes();
			g.setColor(COLORS[r % COLORS.length]);
			f.clip();
			int lastX = -1;
			double lo = 0;
			double hi = 0;
			int prevY = -1;
			for (int i = 0; i < times.length; i++) {
				double t = times[i] / 1e6;
				double excess = (i + 1) - rate * t;
				int x = f.x(t);
				if (x != lastX) {
					if (lastX >= 0) {
						prevY = f.column(lastX, lo, hi, prevY);
					}
					lastX = x;
					lo = excess;
					hi = excess;
				}
				lo = Math.min(lo, excess);
				hi = Math.max(hi, excess);
			}
			if (lastX >= 0) {
				f.column(lastX, lo, hi, prevY);
			}
			f.unclip();
			f.legend(r, label(run), COLORS[r % COLORS.length]);
		}
	}

	/** Admitted in the window of length W ending at each admission, over the first seconds. */
	private static void windowPanel(Graphics2D g, List<AccuracyAnalysis> runs, double zoomSeconds, int top) {
		long capacity = runs.get(0).plan().capacity();
		int max = runs.stream().mapToInt(AccuracyAnalysis::maxInWindow).max().orElse(1);
		Frame f = new Frame(g, top, 0, zoomSeconds, 0, Math.max(max, capacity) * 1.15);
		f.axes("admitted in the last W = " + runs.get(0).plan().window().toMillis() + " ms (first " + zoomSeconds
				+ " s)", "Redis time since the first check (s)");
		f.dashed(capacity, "capacity per window");
		for (int r = runs.size() - 1; r >= 0; r--) {
			AccuracyAnalysis run = runs.get(r);
			long[] times = run.admittedTimes();
			int[] counts = run.slidingCounts();
			g.setColor(COLORS[r % COLORS.length]);
			g.setStroke(new BasicStroke(1.3f));
			f.clip();
			int px = -1;
			int py = -1;
			for (int i = 0; i < times.length && times[i] / 1e6 <= zoomSeconds; i++) {
				int x = f.x(times[i] / 1e6);
				int y = f.y(counts[i]);
				if (px >= 0) {
					g.drawLine(px, py, x, py);
					g.drawLine(x, py, x, y);
				}
				px = x;
				py = y;
			}
			f.unclip();
			f.legend(r, chartLabel(run) + " (max " + run.maxInWindow() + ")",
					COLORS[r % COLORS.length]);
		}
	}

	private static String label(AccuracyAnalysis run) {
		return String.format("%s %+.2f%%", chartLabel(run), 100 * run.errorVsTheory());
	}

	/** One panel's coordinates. */
	private static final class Frame {

		private final Graphics2D g;

		private final int top;

		private final double x0;

		private final double x1;

		private final double y0;

		private final double y1;

		Frame(Graphics2D g, int top, double x0, double x1, double y0, double y1) {
			this.g = g;
			this.top = top;
			this.x0 = x0;
			this.x1 = x1;
			this.y0 = y0;
			this.y1 = y1;
		}

		int x(double value) {
			return LEFT + (int) Math.round((value - this.x0) / (this.x1 - this.x0) * (WIDTH - LEFT - RIGHT));
		}

		int y(double value) {
			return this.top + PANEL - 30 - (int) Math.round((value - this.y0) / (this.y1 - this.y0) * (PANEL - 50));
		}

		/** Limit drawing to the plot area (the legend is drawn outside it, after {@link #unclip()}). */
		void clip() {
			this.g.setClip(LEFT, y(this.y1) - 2, x(this.x1) - LEFT + 1, y(this.y0) - y(this.y1) + 4);
		}

		void unclip() {
			this.g.setClip(null);
		}

		void axes(String yLabel, String xLabel) {
			this.g.setColor(Color.BLACK);
			this.g.setStroke(new BasicStroke(1f));
			this.g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
			int bottom = y(this.y0);
			this.g.drawLine(LEFT, y(this.y1), LEFT, bottom);
			this.g.drawLine(LEFT, bottom, x(this.x1), bottom);
			this.g.drawString(yLabel, LEFT, this.top + 10);
			this.g.drawString(xLabel, x(this.x1) - 230, bottom + 28);
			double xStep = niceStep(this.x1 - this.x0);
			for (double xv = Math.ceil(this.x0 / xStep) * xStep; xv <= this.x1 + 1e-9; xv += xStep) {
				this.g.drawLine(x(xv), bottom, x(xv), bottom + 4);
				this.g.drawString(format(xv), x(xv) - 10, bottom + 16);
			}
			double yStep = niceStep(this.y1 - this.y0);
			for (double yv = Math.ceil(this.y0 / yStep) * yStep; yv <= this.y1 + 1e-9; yv += yStep) {
				this.g.drawLine(LEFT - 4, y(yv), LEFT, y(yv));
				this.g.drawString(format(yv), LEFT - 50, y(yv) + 4);
			}
		}

		void dashed(double value, String label) {
			this.g.setColor(Color.GRAY);
			this.g.setStroke(new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
					new float[] { 6f, 4f }, 0f));
			this.g.drawLine(LEFT, y(value), x(this.x1), y(value));
			this.g.setColor(Color.DARK_GRAY);
			this.g.drawString(label, LEFT + 8, y(value) - 5);
			this.g.setStroke(new BasicStroke(1.3f));
		}

		/** A vertical segment for one pixel column, joined to the previous column. */
		int column(int x, double lo, double hi, int prevY) {
			int yLo = y(lo);
			int yHi = y(hi);
			this.g.drawLine(x, yLo, x, yHi);
			if (prevY >= 0) {
				this.g.drawLine(x - 1, prevY, x, yHi);
			}
			return yLo;
		}

		void legend(int index, String text, Color color) {
			int y = this.top + 40 + index * 20;
			this.g.setColor(color);
			this.g.fillRect(x(this.x1) + 8, y - 9, 14, 10);
			this.g.setColor(Color.BLACK);
			this.g.drawString(text, x(this.x1) + 28, y);
		}

		/** 1, 2 or 5 times a power of ten, giving 4 to 10 ticks over the range. */
		private static double niceStep(double range) {
			double step = Math.pow(10, Math.floor(Math.log10(range / 5)));
			for (double factor : new double[] { 1, 2, 5, 10 }) {
				if (range / (step * factor) <= 10) {
					return step * factor;
				}
			}
			return step * 10;
		}

		private static String format(double value) {
			return (Math.abs(value - Math.rint(value)) < 1e-9) ? Long.toString(Math.round(value))
					: String.format("%.2f", value);
		}

	}

}
