package io.github.ratelimit.accuracy;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.Stroke;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static io.github.ratelimit.accuracy.Png.COLORS;
import static io.github.ratelimit.accuracy.Png.LEFT;
import static io.github.ratelimit.accuracy.Png.WIDTH;

/**
 * Draws the soak as a PNG (Java AWT, headless), three panels over the run's minutes: each gateway's heap after a
 * full GC; Redis' key count with its bound (dashed); admitted, denied and sent per minute.
 */
final class SoakChart {

	private static final int PANEL = 250;

	private static final int RIGHT = 200;

	private static final int GAP = 50;

	private SoakChart() {
	}

	static void write(SoakAnalysis a, Path file) throws IOException {
		String title = String.format(Locale.ROOT, "Soak: %d gateways, one Redis, %d clients churning at %sx the plan,"
				+ " %d min", a.options().gateways().size(), a.options().clients(),
				Double.toString(a.options().overload()), a.options().minutes());
		Png png = new Png(WIDTH, 3 * (PANEL + GAP) + 40, title, 15, LEFT, 24);
		Graphics2D g = png.graphics();
		double minutes = (a.endMicros() - a.startMicros()) / 6e7;
		List<SoakAnalysis.Minute> rows = a.perMinute();

		// heap after GC
		double maxHeap = a.gcSamples().stream().mapToDouble((s) -> s.liveBytes() / 1e6).max().orElse(1);
		Frame heap = new Frame(g, 45, minutes, 0, Math.max(1, maxHeap * 1.25));
		heap.axes("heap after full GC (MB)");
		for (int gw = 0; gw < a.options().gateways().size(); gw++) {
			g.setColor(COLORS[gw % COLORS.length]);
			int px = -1;
			int py = -1;
			for (SoakSampler.GcSample s : a.gcSamples()) {
				if (s.gateway() != gw || s.micros() > a.endMicros()) {
					continue;
				}
				int x = heap.x((s.micros() - a.startMicros()) / 6e7);
				int y = heap.y(s.liveBytes() / 1e6);
				if (px >= 0) {
					g.drawLine(px, py, x, y);
				}
				g.fillOval(x - 2, y - 2, 5, 5);
				px = x;
				py = y;
			}
			heap.legend(gw, a.options().gateways().get(gw).name(), COLORS[gw % COLORS.length]);
		}
		heap.vertical(a.steadyFromMicros() - a.startMicros(), "verdicts from here");

		// keys
		long maxKeys = a.samples().stream().mapToLong((s) -> Math.max(s.dbsize(), a.keyBound(s))).max().orElse(1);
		Frame keys = new Frame(g, 45 + PANEL + GAP, minutes, 0, maxKeys * 1.2);
		keys.axes("Redis keys (DBSIZE)");
		int px = -1;
		int py = -1;
		int bx = -1;
		int by = -1;
		Stroke solid = g.getStroke();
		Stroke dashed = new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] { 6, 4 }, 0);
		for (SoakSampler.Sample s : a.samples()) {
			int x = keys.x((s.beforeMicros() - a.startMicros()) / 6e7);
			if (x > keys.right()) {
				continue;
			}
			int y = keys.y(s.dbsize());
			int yb = keys.y(a.keyBound(s));
			g.setColor(COLORS[2]);
			g.setStroke(solid);
			if (px >= 0) {
				g.drawLine(px, py, x, y);
			}
			g.setColor(Color.GRAY);
			g.setStroke(dashed);
			if (bx >= 0) {
				g.drawLine(bx, by, x, yb);
			}
			px = x;
			py = y;
			bx = x;
			by = yb;
		}
		g.setStroke(solid);
		keys.legend(0, "DBSIZE", COLORS[2]);
		keys.legend(1, "bound (TTLs)", Color.GRAY);

		// per minute
		long maxSent = rows.stream().mapToLong((m) -> m.sent).max().orElse(1);
		Frame perMinute = new Frame(g, 45 + 2 * (PANEL + GAP), minutes, 0, maxSent * 1.15);
		perMinute.axes("requests per minute");
		for (SoakAnalysis.Minute m : rows) {
			int x0 = perMinute.x(m.index) + 2;
			int x1 = perMinute.x(Math.min(minutes, m.index + 1)) - 2;
			int yAdmitted = perMinute.y(m.admitted);
			int yDenied = perMinute.y(m.admitted + m.denied);
			g.setColor(COLORS[0]);
			g.fillRect(x0, yAdmitted, Math.max(1, x1 - x0), perMinute.y(0) - yAdmitted);
			g.setColor(new Color(0xc7c7c7));
			g.fillRect(x0, yDenied, Math.max(1, x1 - x0), yAdmitted - yDenied);
			if (m.serverErrors > 0 || m.unanswered > 0) {
				g.setColor(COLORS[3]);
				g.drawString(((m.serverErrors > 0) ? "5xx " + m.serverErrors + " " : "")
						+ ((m.unanswered > 0) ? "no answer " + m.unanswered : ""), x0, yDenied - 4);
			}
		}
		perMinute.legend(0, "admitted (2xx)", COLORS[0]);
		perMinute.legend(1, "denied (429)", new Color(0xc7c7c7));
		png.write(file);
	}

	/** One panel: minutes across, a value up. */
	private static final class Frame {

		private final Graphics2D g;

		private final int top;

		private final double xMax;

		private final double yMin;

		private final double yMax;

		Frame(Graphics2D g, int top, double xMax, double yMin, double yMax) {
			this.g = g;
			this.top = top;
			this.xMax = Math.max(xMax, 1e-9);
			this.yMin = yMin;
			this.yMax = yMax;
		}

		int right() {
			return WIDTH - RIGHT;
		}

		int x(double minute) {
			return LEFT + (int) Math.round(minute / this.xMax * (WIDTH - LEFT - RIGHT));
		}

		int y(double v) {
			return this.top + PANEL - (int) Math.round((v - this.yMin) / (this.yMax - this.yMin) * PANEL);
		}

		void axes(String title) {
			this.g.setColor(Color.BLACK);
			this.g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
			this.g.drawString(title, LEFT, this.top - 6);
			this.g.drawRect(LEFT, this.top, WIDTH - LEFT - RIGHT, PANEL);
			for (int i = 0; i <= 4; i++) {
				double v = this.yMin + (this.yMax - this.yMin) * i / 4;
				int y = y(v);
				this.g.setColor(new Color(0xeeeeee));
				this.g.drawLine(LEFT + 1, y, WIDTH - RIGHT - 1, y);
				this.g.setColor(Color.BLACK);
				String label = (this.yMax >= 100) ? String.format(Locale.ROOT, "%,.0f", v)
						: String.format(Locale.ROOT, "%.1f", v);
				this.g.drawString(label, LEFT - 8 - this.g.getFontMetrics().stringWidth(label), y + 4);
			}
			int step = (this.xMax > 20) ? 5 : 1;
			for (int m = 0; m <= this.xMax; m += step) {
				int x = x(m);
				this.g.drawLine(x, this.top + PANEL, x, this.top + PANEL + 4);
				this.g.drawString(Integer.toString(m), x - 4, this.top + PANEL + 16);
			}
			this.g.drawString("minute", WIDTH - RIGHT - 40, this.top + PANEL + 30);
		}

		void vertical(long micros, String label) {
			int x = x(micros / 6e7);
			this.g.setColor(Color.GRAY);
			this.g.drawLine(x, this.top + 1, x, this.top + PANEL - 1);
			this.g.drawString(label, x + 4, this.top + 14);
		}

		void legend(int row, String label, Color color) {
			int x = WIDTH - RIGHT + 15;
			int y = this.top + 15 + row * 18;
			this.g.setColor(color);
			this.g.fillRect(x, y - 9, 14, 10);
			this.g.setColor(Color.BLACK);
			this.g.drawString(label, x + 20, y);
		}

	}

}
