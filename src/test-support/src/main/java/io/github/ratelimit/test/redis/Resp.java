package io.github.ratelimit.test.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A minimal RESP2 client: one connection per command, no pooling; TLS and {@code AUTH} on request.
 * Good enough to seed and inspect a test Redis; not a production client.
 */
final class Resp {

    /** Default connect and read timeout of {@link #command(String, int, Duration, String...)} callers. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    /** Rendering of a null bulk string or null array nested inside an array reply (as redis-cli prints it). */
    static final String NIL = "(nil)";

    private Resp() {
    }

    /**
     * Sends one command and renders its reply.
     *
     * @param host    server host
     * @param port    server TCP port
     * @param timeout connect timeout and socket read timeout (millisecond resolution)
     * @param args    command name and arguments, sent as UTF-8 bulk strings
     * @return the reply rendered as text: simple and bulk strings as-is, integers in decimal, arrays as their
     *     elements joined with {@code '\n'} (nested arrays flattened, nested nulls as {@code (nil)}, nested errors as
     *     {@code (error) MESSAGE}); {@code null} for a top-level null reply
     * @throws IllegalStateException if Redis replies with an error
     * @throws UncheckedIOException  if the connection fails or the read times out
     */
    static String command(String host, int port, Duration timeout, String... args) {
        return command(null, host, port, timeout, List.of(), args);
    }

    /**
     * Sends one command, first over TLS and after {@code AUTH} if asked, and renders its reply.
     *
     * @param tls     the factory of the TLS sockets, or {@code null} for a plain connection
     * @param host    server host (also the name the server's certificate is checked against)
     * @param port    server TCP port
     * @param timeout connect timeout and socket read timeout (millisecond resolution), also of the TLS handshake
     * @param auth    {@code AUTH} arguments sent first ({@code user, password}), or none
     * @param args    command name and arguments, sent as UTF-8 bulk strings
     * @return the reply rendered as in {@link #command(String, int, Duration, String...)}
     * @throws IllegalStateException if Redis replies with an error (to {@code AUTH} or to the command)
     * @throws UncheckedIOException  if the connection or the handshake fails or the read times out
     */
    static String command(SSLSocketFactory tls, String host, int port, Duration timeout, List<String> auth,
            String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("no command given");
        }
        int millis = (int) Math.max(1, timeout.toMillis());
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress(host, port), millis);
            plain.setSoTimeout(millis);
            plain.setTcpNoDelay(true);
            Socket socket = plain;
            if (tls != null) {
                SSLSocket secure = (SSLSocket) tls.createSocket(plain, host, port, true);
                SSLParameters parameters = secure.getSSLParameters();
                parameters.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host
                secure.setSSLParameters(parameters);
                secure.startHandshake();
                socket = secure;
            }
            OutputStream out = new BufferedOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            if (!auth.isEmpty()) {
                List<String> command = new ArrayList<>(List.of("AUTH"));
                command.addAll(auth);
                write(out, command.toArray(String[]::new));
                out.flush();
                if (read(in) instanceof Error error) {
                    throw new IllegalStateException("Redis " + host + ":" + port + " replied to AUTH: "
                            + error.message());
                }
            }
            write(out, args);
            out.flush();
            Object reply = read(in);
            if (reply instanceof Error error) {
                throw new IllegalStateException("Redis " + host + ":" + port + " replied to " + args[0] + ": "
                        + error.message());
            }
            return reply == null ? null : render(reply);
        } catch (IOException e) {
            throw new UncheckedIOException("Redis " + host + ":" + port + " " + args[0] + " failed: " + e, e);
        }
    }

    /**
     * Whether a server at host:port answers PING with PONG within the timeout.
     *
     * @param timeout connect and read timeout
     */
    static boolean ping(String host, int port, Duration timeout) {
        try {
            return "PONG".equals(command(host, port, timeout, "PING"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Encodes a command as a RESP array of bulk strings. */
    static void write(OutputStream out, String... args) throws IOException {
        out.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            out.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.write('\r');
            out.write('\n');
        }
    }

    /**
     * Reads one RESP2 reply.
     *
     * @return a {@link String} (simple or bulk string), {@link Long}, {@link List}, {@link Error}, or {@code null}
     */
    static Object read(DataInputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed before a reply");
        }
        String line = readLine(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                return new Error(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = new byte[length];
                in.readFully(bytes);
                if (in.read() != '\r' || in.read() != '\n') {
                    throw new IOException("bulk string not terminated by CRLF");
                }
                return new String(bytes, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> elements = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    elements.add(read(in));
                }
                return elements;
            }
            default:
                throw new IOException("unexpected RESP type byte '" + (char) type + "' followed by: " + line);
        }
    }

    /**
     * Reads one line of a RESP reply, up to its CRLF.
     *
     * @param in the connection's input
     * @return the line without the CRLF, decoded as UTF-8
     * @throws EOFException if the connection closes inside the line
     * @throws IOException  if reading fails (a read timeout included)
     */
    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed inside a reply");
            }
            if (previous == '\r' && b == '\n') {
                byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            line.write(b);
            previous = b;
        }
    }

    private static String render(Object reply) {
        if (reply == null) {
            return NIL;
        }
        if (reply instanceof Error error) {
            return "(error) " + error.message();
        }
        if (reply instanceof List<?> elements) {
            StringJoiner joined = new StringJoiner("\n");
            for (Object element : elements) {
                joined.add(render(element));
            }
            return joined.toString();
        }
        return reply.toString();
    }

    /** An error reply ({@code -ERR ...}). */
    record Error(String message) {
    }
}
