package io.github.ratelimit.test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Measures the time this JVM stood still, as jHiccup does: a daemon thread asks to wake up every
 * {@value #TICK_MILLIS} ms and records by how much it woke up late, when that is more than {@value #LATE_MILLIS} ms.
 * A late wake-up is time in which no thread of the JVM was sure to run: the host took the CPUs (steal), a load
 * generator such as {@code stress-ng} kept them, or a garbage collection paused the JVM.
 *
 * <p>Tests that assert a bound on elapsed time for the code under test (e.g. "decisions come from Redis within the
 * breaker's wait plus one second") subtract the stalls measured in that interval, so that the bound is about the code
 * and a loaded machine does not fail it; the stalls are printed with the figures. One meter per JVM,
 * {@link #meter()}, started on first use; it keeps the stalls of the last {@value #KEPT} late wake-ups.
 */
public final class MachineStalls {

    /** Interval the meter's thread asks to sleep. */
    public static final long TICK_MILLIS = 5;

    /** Lateness from which a wake-up counts as a stall (below it: ordinary scheduling). */
    public static final long LATE_MILLIS = 50;

    private static final int KEPT = 10_000;

    private static final MachineStalls METER = new MachineStalls();

    /** Stalls as {start, end} in {@link System#nanoTime()}, oldest first. */
    private final Deque<long[]> stalls = new ArrayDeque<>();

    private MachineStalls() {
        Thread thread = new Thread(this::run, "machine-stalls");
        thread.setDaemon(true);
        thread.setPriority(Thread.MAX_PRIORITY);
        thread.start();
    }

    /**
     * The JVM's meter, started on first use (stalls before that are not known).
     *
     * @return the meter
     */
    public static MachineStalls meter() {
        return METER;
    }

    /**
     * The time the JVM stood still between two moments: the part of every recorded stall that falls between them.
     *
     * @param fromNanos the start, a {@link System#nanoTime()}
     * @param toNanos   the end, a {@link System#nanoTime()} not before the start
     * @return the stalled time in nanoseconds, 0 to {@code toNanos - fromNanos}
     */
    public synchronized long stalledNanos(long fromNanos, long toNanos) {
        long stalled = 0;
        for (long[] stall : stalls) {
            long start = Math.max(stall[0], fromNanos);
            long end = Math.min(stall[1], toNanos);
            if (end - start > 0) {
                stalled += end - start;
            }
        }
        return stalled;
    }

    private void run() {
        long tick = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
        long late = TimeUnit.MILLISECONDS.toNanos(LATE_MILLIS);
        while (true) {
            long due = System.nanoTime() + tick;
            LockSupport.parkNanos(tick);
            long woke = System.nanoTime();
            if (woke - due > late) {
                record(due, woke);
            }
        }
    }

    private synchronized void record(long start, long end) {
        if (stalls.size() == KEPT) {
            stalls.removeFirst();
        }
        stalls.addLast(new long[] { start, end });
    }

}
