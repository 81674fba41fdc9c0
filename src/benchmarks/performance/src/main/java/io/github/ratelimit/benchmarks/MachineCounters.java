package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the whole machine has done so far, read from {@code /proc/stat} (Linux) at one moment: all cores, every
 * process (the load generator and anything else running too). Two snapshots taken around a measurement give what it
 * did in between.
 *
 * @param busyTicks non-idle CPU time of all cores so far: user + nice + system + irq + softirq + steal of the
 * {@code cpu} line (guest time is already part of user and nice; idle and iowait are left out), clock ticks
 * ({@code getconf CLK_TCK}, usually 100 per second)
 * @param contextSwitches context switches on all cores so far (the {@code ctxt} line)
 */
record MachineCounters(long busyTicks, long contextSwitches) {

	/**
	 * A snapshot of the machine.
	 * @return its counters now
	 * @throws IOException if {@code /proc/stat} cannot be read (not Linux)
	 */
	static MachineCounters read() throws IOException {
		return parse(Files.readString(Path.of("/proc/stat")));
	}

	/**
	 * The counters in a {@code /proc/stat} text.
	 * @param procStat e.g. {@code cpu  4705 356 584 3699 23 0 23 0 0 0\n...\nctxt 1990473\n...}
	 * @return its counters
	 * @throws IllegalArgumentException if the {@code cpu} or the {@code ctxt} line is missing
	 */
	static MachineCounters parse(String procStat) {
		Long busy = null;
		Long switches = null;
		for (String line : procStat.split("\n")) {
			String[] fields = line.trim().split(" +");
			if (fields[0].equals("cpu")) {
				// cpu user nice system idle iowait irq softirq steal guest guest_nice (older kernels: fewer fields)
				long sum = 0;
				for (int field : new int[] { 1, 2, 3, 6, 7, 8 }) {
					sum += (field < fields.length) ? Long.parseLong(fields[field]) : 0;
				}
				busy = sum;
			}
			else if (fields[0].equals("ctxt")) {
				switches = Long.parseLong(fields[1]);
			}
		}
		if (busy == null || switches == null) {
			throw new IllegalArgumentException("no cpu or ctxt line in /proc/stat");
		}
		return new MachineCounters(busy, switches);
	}

	/**
	 * Non-idle CPU time of all cores since an earlier snapshot.
	 * @param before the earlier snapshot
	 * @return clock ticks
	 */
	long busyTicksSince(MachineCounters before) {
		return this.busyTicks - before.busyTicks;
	}

	/**
	 * Context switches on all cores since an earlier snapshot.
	 * @param before the earlier snapshot
	 * @return context switches
	 */
	long contextSwitchesSince(MachineCounters before) {
		return this.contextSwitches - before.contextSwitches;
	}

}
