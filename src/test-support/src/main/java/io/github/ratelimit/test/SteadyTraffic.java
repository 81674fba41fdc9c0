package io.github.ratelimit.test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * One client sending requests to a gateway one after another, on a daemon thread of its own, counting who decided
 * them by each answer's status and {@code RateLimit} field: for the tests that pause Redis under steady traffic and
 * then check that Redis holds exactly what the requests it decided took. The requests are sent by the test's own HTTP
 * client (WebFlux's or Server MVC's), given as a {@link Supplier} of {@link Answer}s.
 */
public final class SteadyTraffic {

    /**
     * What the traffic needs of one answer.
     *
     * @param status    the HTTP status
     * @param rateLimit the {@code RateLimit} field, {@code null} if the answer had none
     */
    public record Answer(int status, @Nullable String rateLimit) {
    }

    private final String name;

    private final Supplier<Answer> request;

    private final AtomicInteger fromRedis = new AtomicInteger();

    private final AtomicInteger fallback = new AtomicInteger();

    private final AtomicInteger failedClosed = new AtomicInteger();

    private final AtomicInteger other = new AtomicInteger();

    private final AtomicReference<@Nullable String> lastRateLimit = new AtomicReference<>();

    private final AtomicBoolean stopped = new AtomicBoolean();

    private final Thread thread;

    /**
     * A client, not yet sending.
     *
     * @param name    what the counts are printed under, and the thread's name after {@code "traffic "}
     * @param request sends one request and returns its answer; called again and again on the traffic's thread
     */
    public SteadyTraffic(String name, Supplier<Answer> request) {
        this.name = name;
        this.request = request;
        this.thread = new Thread(this::send, "traffic " + name);
        this.thread.setDaemon(true);
    }

    /** Starts sending. */
    public void start() {
        this.thread.start();
    }

    /**
     * Stops sending, waiting (at most 20 s) for the request under way.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void stop() throws InterruptedException {
        this.stopped.set(true);
        this.thread.join(Duration.ofSeconds(20).toMillis());
    }

    /**
     * Stops each of the clients, one after another.
     *
     * @param traffic the clients
     * @throws InterruptedException if interrupted while waiting
     */
    public static void stopAll(List<SteadyTraffic> traffic) throws InterruptedException {
        for (SteadyTraffic t : traffic) {
            t.stop();
        }
    }

    /** @return the answers 200 with a {@code RateLimit} field so far: Redis decided (and admitted) */
    public int fromRedis() {
        return this.fromRedis.get();
    }

    /** @return the answers 200 without a {@code RateLimit} field so far: the local fallback decided */
    public int fallback() {
        return this.fallback.get();
    }

    /** @return the answers 503 so far: a route failing closed without Redis */
    public int failedClosed() {
        return this.failedClosed.get();
    }

    /** @return the other answers so far (e.g. 429) */
    public int other() {
        return this.other.get();
    }

    /** @return the {@code RateLimit} field of the last answer {@link #fromRedis() from Redis}, {@code null} before */
    public @Nullable String lastRateLimit() {
        return this.lastRateLimit.get();
    }

    private void send() {
        while (!this.stopped.get()) {
            Answer answer = this.request.get();
            String field = answer.rateLimit();
            if (answer.status() == 200 && field != null) {
                this.fromRedis.incrementAndGet();
                this.lastRateLimit.set(field);
            }
            else if (answer.status() == 200) {
                this.fallback.incrementAndGet();
            }
            else if (answer.status() == 503) {
                this.failedClosed.incrementAndGet();
            }
            else {
                this.other.incrementAndGet();
            }
        }
    }

    @Override
    public String toString() {
        return this.name + Map.of("fromRedis", fromRedis(), "fallback", fallback(), "failedClosed", failedClosed(),
                "other", other(), "lastRateLimit", Objects.toString(lastRateLimit(), "-"));
    }

}
