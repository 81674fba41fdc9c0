package io.github.ratelimit.test;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * One plain-socket HTTP/1.1 keep-alive connection to {@code 127.0.0.1}, as a load tool or a browser holds one:
 * requests are written as given (one or several in a single write, that is pipelined), and responses are read one at
 * a time, whole (a {@code Content-Length} or chunked body), each with a timeout, so a response that never comes is
 * seen as such instead of blocking. Not thread-safe: one thread uses a connection.
 */
public final class KeepAliveConnection implements Closeable {

    /**
     * A response read whole.
     *
     * @param status  its status code
     * @param closing whether it announced {@code Connection: close}
     */
    public record Response(int status, boolean closing) {
    }

    private final Socket socket;

    private final OutputStream out;

    private final InputStream in;

    private final int port;

    private final byte[] buffer = new byte[16 * 1024];

    private int position;

    private int limit;

    /**
     * Opens a connection to 127.0.0.1.
     *
     * @param port        the server's port
     * @param readTimeout the longest wait for each response (whole milliseconds)
     * @throws UncheckedIOException if the connection cannot be opened
     */
    public KeepAliveConnection(int port, Duration readTimeout) {
        try {
            this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
            this.socket.setTcpNoDelay(true);
            this.socket.setSoTimeout((int) readTimeout.toMillis());
            this.out = this.socket.getOutputStream();
            this.in = this.socket.getInputStream();
            this.port = port;
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * A bodyless {@code GET} keeping the connection open.
     *
     * @param target      the request target, e.g. {@code /a/x}
     * @param headerLines header lines such as {@code X-API-Key: k}
     * @return the request's bytes as text
     */
    public String get(String target, String... headerLines) {
        StringBuilder request = new StringBuilder("GET ").append(target).append(" HTTP/1.1\r\n")
                .append("Host: 127.0.0.1:").append(this.port).append("\r\n");
        for (String line : headerLines) {
            request.append(line).append("\r\n");
        }
        return request.append("\r\n").toString();
    }

    /**
     * Writes requests in one write (pipelined when there are several).
     *
     * @param requests requests from {@link #get}
     * @throws UncheckedIOException if the connection broke
     */
    public void send(String... requests) {
        send(String.join("", requests).getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Writes requests given as bytes in one write.
     *
     * @param requests the requests' bytes
     * @throws UncheckedIOException if the connection broke
     */
    public void send(byte[] requests) {
        try {
            this.out.write(requests);
            this.out.flush();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Reads the next response whole.
     *
     * @return the response, or {@code null} if none began within the read timeout (the connection still open)
     * @throws UncheckedIOException if the connection closed or broke, or a response that began did not end in time
     */
    public Response read() {
        try {
            if (this.position == this.limit) {
                try {
                    fill();
                } catch (SocketTimeoutException ex) {
                    return null;
                }
            }
            String head = readHead();
            int status = Integer.parseInt(head.substring(9, 12));
            long length = 0;
            boolean chunked = false;
            boolean closing = false;
            for (String line : head.split("\r\n")) {
                String lower = line.toLowerCase(Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Long.parseLong(lower.substring(15).strip());
                } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    chunked = true;
                } else if (lower.startsWith("connection:") && lower.contains("close")) {
                    closing = true;
                }
            }
            if (chunked) {
                skipChunks();
            } else {
                skip(length);
            }
            return new Response(status, closing);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Reads the next response whole.
     *
     * @return its status code, or {@code -1} if it did not come (or not whole) within the read timeout
     * @throws UncheckedIOException if the connection closed or broke
     */
    public int readStatus() {
        try {
            Response response = read();
            return (response != null) ? response.status() : -1;
        } catch (UncheckedIOException ex) {
            if (ex.getCause() instanceof SocketTimeoutException) {
                return -1;
            }
            throw ex;
        }
    }

    private void fill() throws IOException {
        int n = this.in.read(this.buffer);
        if (n < 0) {
            throw new EOFException("connection closed by the server");
        }
        this.position = 0;
        this.limit = n;
    }

    private int next() throws IOException {
        if (this.position == this.limit) {
            fill();
        }
        return this.buffer[this.position++] & 0xff;
    }

    private String readHead() throws IOException {
        StringBuilder head = new StringBuilder(256);
        int matched = 0;
        while (matched < 4) {
            int b = next();
            head.append((char) b);
            matched = (b == ((matched % 2 == 0) ? '\r' : '\n')) ? matched + 1 : ((b == '\r') ? 1 : 0);
        }
        return head.toString();
    }

    private String readLine() throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = next()) != '\n') {
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString().strip();
    }

    private void skipChunks() throws IOException {
        while (true) {
            String sizeLine = readLine();
            int semicolon = sizeLine.indexOf(';');
            long size = Long.parseLong((semicolon >= 0) ? sizeLine.substring(0, semicolon) : sizeLine, 16);
            if (size == 0) {
                while (!readLine().isEmpty()) {
                    // trailer fields
                }
                return;
            }
            skip(size);
            readLine();
        }
    }

    private void skip(long length) throws IOException {
        long left = length;
        while (left > 0) {
            if (this.position == this.limit) {
                fill();
            }
            int n = (int) Math.min(left, this.limit - this.position);
            this.position += n;
            left -= n;
        }
    }

    /** Closes the socket; a connection that will not close is left as it is. */
    @Override
    public void close() {
        try {
            this.socket.close();
        } catch (IOException ex) {
            // nothing left to do with a connection that will not close
        }
    }

}
