package io.github.ratelimit.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTP/1.1 requests sent on connections of their own to {@code 127.0.0.1} and left open, for tests of what a gateway
 * does while its clients wait or hang up: the caller reads or closes each connection.
 */
public final class OpenRequests {

    private OpenRequests() {
    }

    /**
     * Sends a bodyless {@code GET} with an API key on a connection of its own, left open.
     *
     * @param port   the gateway's port
     * @param path   the request target, e.g. {@code /kept/hold/1}
     * @param apiKey the {@code X-API-Key} value
     * @return the connection; reads on it time out after 10 s
     * @throws IOException if the connection cannot be opened or written
     */
    public static Socket sendGet(int port, String path, String apiKey) throws IOException {
        Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), port);
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + apiKey + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return socket;
    }

    /**
     * The connections with an answer (or part of one) to read.
     *
     * @param sockets connections from {@link #sendGet}
     * @return those of them with bytes to read now, in their order
     * @throws IOException if a connection broke
     */
    public static List<Socket> answered(List<Socket> sockets) throws IOException {
        List<Socket> answered = new ArrayList<>();
        for (Socket socket : sockets) {
            if (socket.getInputStream().available() > 0) {
                answered.add(socket);
            }
        }
        return answered;
    }

    /**
     * Reads a response's head.
     *
     * @param in the connection's input
     * @return the status line and header lines up to and including the empty line (less if the connection closed)
     * @throws IOException if the connection broke or the read timed out
     */
    public static String readHead(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        int b;
        while (text.indexOf("\r\n\r\n") < 0 && (b = in.read()) >= 0) {
            text.append((char) b);
        }
        return text.toString();
    }

}
