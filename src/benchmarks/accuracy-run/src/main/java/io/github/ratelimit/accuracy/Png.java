package io.github.ratelimit.accuracy;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import javax.imageio.ImageIO;

/**
 * A chart of the harnesses as a PNG drawn with Java AWT (headless): a white canvas with a bold title, drawn on through
 * {@link #graphics()} (black, the title's font, anti-aliased) and written once drawn.
 */
public final class Png {

	/** The colours of the series of the accuracy and soak charts, in order (matplotlib's first four). */
	static final Color[] COLORS = { new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
			new Color(0xd62728) };

	/** The width of the accuracy and soak charts, in pixels. */
	static final int WIDTH = 1100;

	/** The left margin of their panels (room for the value labels), in pixels. */
	static final int LEFT = 80;

	private final BufferedImage image;

	private final Graphics2D graphics;

	/**
	 * Start a canvas.
	 * @param width its width in pixels
	 * @param height its height in pixels
	 * @param title the title, drawn in black, bold, sans serif
	 * @param titleSize the title's font size in points
	 * @param titleX where the title's baseline starts, in pixels from the left
	 * @param titleY where the title's baseline is, in pixels from the top
	 */
	public Png(int width, int height, String title, int titleSize, int titleX, int titleY) {
		System.setProperty("java.awt.headless", "true");
		this.image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
		this.graphics = this.image.createGraphics();
		this.graphics.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
		this.graphics.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
		this.graphics.setColor(Color.WHITE);
		this.graphics.fillRect(0, 0, width, height);
		this.graphics.setColor(Color.BLACK);
		this.graphics.setFont(new Font(Font.SANS_SERIF, Font.BOLD, titleSize));
		this.graphics.drawString(title, titleX, titleY);
	}

	/**
	 * The canvas to draw on.
	 * @return its graphics
	 */
	public Graphics2D graphics() {
		return this.graphics;
	}

	/**
	 * Finish drawing and write the PNG.
	 * @param file where to write it
	 * @throws IOException if it cannot be written
	 */
	public void write(Path file) throws IOException {
		this.graphics.dispose();
		ImageIO.write(this.image, "png", file.toFile());
	}

}
