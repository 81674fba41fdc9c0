package io.github.ratelimit.test.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority and a server certificate signed by it, made for one test with {@code openssl} (on the
 * {@code PATH}) in a directory, as PEM files: what a TLS server needs ({@link #serverCertificate()},
 * {@link #serverKey()}) and what its clients trust ({@link #caCertificate()}, e.g. as Spring Boot's
 * {@code spring.ssl.bundle.pem.<name>.truststore.certificate}). The server certificate names {@code 127.0.0.1} and
 * {@code localhost} (subject alternative names), so clients that verify host names accept it. RSA 2048 keys, valid
 * for one day; the keys are not encrypted.
 *
 * @param caCertificate     the CA's certificate (PEM), the one to trust
 * @param serverCertificate the server's certificate (PEM), signed by the CA
 * @param serverKey         the server's private key (PEM, unencrypted)
 */
public record TestCertificates(Path caCertificate, Path serverCertificate, Path serverKey) {

    /** Longest wait for one {@code openssl} run, in seconds. */
    private static final long OPENSSL_SECONDS = 60;

    /**
     * Makes a new CA and a server certificate in {@code dir} ({@code ca.crt}, {@code ca.key}, {@code server.crt},
     * {@code server.key}); takes about 0.1 to 0.5 s (two RSA keys).
     *
     * @param dir an existing directory
     * @return the files
     * @throws IllegalStateException if {@code openssl} is missing or fails (the message holds its output)
     */
    public static TestCertificates create(Path dir) {
        Path caKey = dir.resolve("ca.key");
        Path caCert = dir.resolve("ca.crt");
        Path serverKey = dir.resolve("server.key");
        Path csr = dir.resolve("server.csr");
        Path serverCert = dir.resolve("server.crt");
        Path extensions = dir.resolve("server.ext");
        try {
            Files.writeString(extensions, "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                    + "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                    + "extendedKeyUsage=serverAuth\n", StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ratelimit test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout", caKey.toString(), "-out", caCert.toString());
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", serverKey.toString(), "-out", csr.toString());
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", caCert.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-days", "1", "-extfile", extensions.toString(), "-out", serverCert.toString());
        return new TestCertificates(caCert, serverCert, serverKey);
    }

    /**
     * The CA certificate's PEM text.
     *
     * @return the text, {@code -----BEGIN CERTIFICATE-----} ...
     */
    public String caCertificatePem() {
        try {
            return Files.readString(this.caCertificate, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A TLS socket factory trusting exactly the CA (no client certificate).
     *
     * @return the factory
     * @throws IllegalStateException if the CA certificate cannot be read
     */
    public SSLSocketFactory socketFactory() {
        try (InputStream in = Files.newInputStream(this.caCertificate)) {
            Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(in);
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            trusted.setCertificateEntry("ca", ca);
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot trust " + this.caCertificate + ": " + e, e);
        }
    }

    private static void openssl(Path dir, String... args) {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Path output = dir.resolve("openssl.out");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(OPENSSL_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("openssl " + args[0] + " did not finish in " + OPENSSL_SECONDS + " s");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("openssl " + String.join(" ", args) + " exited with "
                        + process.exitValue() + "\n" + RedisProcess.tail(output));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run openssl (is it installed and on the PATH?): " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running openssl", e);
        }
    }
}
