package io.github.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What a process has done so far, read from {@code /proc} (Linux) at one moment: two snapshots taken around a
 * measurement give what it did in between.
 *
 * @param cpuTicks user + system CPU time of the process so far ({@code utime + stime} of {@code /proc/<pid>/stat}:
 * every thread, also the ended ones), clock ticks ({@code getconf CLK_TCK}, usually 100 per second)
 * @param contextSwitchesByTask per thread alive when read (its task id), its voluntary + nonvoluntary context switches
 * so far ({@code /proc/<pid>/task/<tid>/status})
 */
record ProcessCounters(long cpuTicks, Map<Long, Long> contextSwitchesByTask) {

	/**
	 * A snapshot of a running process.
	 * @param pid its process id
	 * @return its counters now
	 * @throws IOException if the process does not exist (any more) or its {@code /proc} entry cannot be read
	 */
	static ProcessCounters read(long pid) throws IOException {
		Path proc = Path.of("/proc", String.valueOf(pid));
		long cpuTicks = cpuTicks(Files.readString(proc.resolve("stat")));
		Map<Long, Long> switches = new HashMap<>();
		try (Stream<Path> tasks = Files.list(proc.resolve("task"))) {
			for (Path task : (Iterable<Path>) tasks::iterator) {
				try {
					switches.put(Long.parseLong(task.getFileName().toString()),
							contextSwitches(Files.readString(task.resolve("status"))));
				}
				catch (IOException ex) {
					// the thread ended between the listing and the read
				}
			}
		}
		return new ProcessCounters(cpuTicks, Map.copyOf(switches));
	}

	/**
	 * CPU time used since an earlier snapshot of the same process.
	 * @param before the earlier snapshot
	 * @return clock ticks, 0 or more
	 */
	long cpuTicksSince(ProcessCounters before) {
		return this.cpuTicks - before.cpuTicks;
	}

	/**
	 * Context switches since an earlier snapshot of the same process: per thread alive now, its count now minus its
	 * count then (a thread started in between counts in full). Threads that ended in between are not counted: their
	 * switches went with them ({@code /proc} keeps no per-thread count of ended threads).
	 * @param before the earlier snapshot
	 * @return context switches, 0 or more
	 */
	long contextSwitchesSince(ProcessCounters before) {
		long sum = 0;
		for (Map.Entry<Long, Long> task : this.contextSwitchesByTask.entrySet()) {
			sum += task.getValue() - before.contextSwitchesByTask.getOrDefault(task.getKey(), 0L);
		}
		return sum;
	}

	/**
	 * User + system time (fields 14 and 15) of a {@code /proc/<pid>/stat} (or {@code /proc/<pid>/task/<tid>/stat})
	 * line; the command name (field 2, in parentheses) may hold spaces and parentheses.
	 * @param stat the line
	 * @return utime + stime, clock ticks
	 */
	static long cpuTicks(String stat) {
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
		// fields[0] is field 3 (state): utime is field 14, stime field 15
		return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
	}

	/**
	 * Voluntary + nonvoluntary context switches of a thread, from its {@code /proc/<pid>/task/<tid>/status} text
	 * (lines {@code voluntary_ctxt_switches:\t12} and {@code nonvoluntary_ctxt_switches:\t3}).
	 * @param status the file's text
	 * @return the sum
	 * @throws IllegalArgumentException if either line is missing
	 */
	static long contextSwitches(String status) {
		Long voluntary = null;
		Long nonvoluntary = null;
		for (String line : status.split("\n")) {
			if (line.startsWith("voluntary_ctxt_switches:")) {
				voluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
			}
			else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
				nonvoluntary = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		if (voluntary == null || nonvoluntary == null) {
			throw new IllegalArgumentException("no voluntary_ctxt_switches or nonvoluntary_ctxt_switches line");
		}
		return voluntary + nonvoluntary;
	}

	/**
	 * CPU time of a process' JIT compiler threads (those whose name holds {@code Compiler}) so far.
	 * @param pid the process id of a JVM
	 * @return clock ticks
	 * @throws IOException if the process does not exist (any more)
	 */
	static long compilerTicks(long pid) throws IOException {
		long sum = 0;
		try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
			for (Path task : (Iterable<Path>) tasks::iterator) {
				try {
					if (Files.readString(task.resolve("comm")).contains("Compiler")) {
						sum += cpuTicks(Files.readString(task.resolve("stat")));
					}
				}
				catch (IOException ex) {
					// the thread ended
				}
			}
		}
		return sum;
	}

}
