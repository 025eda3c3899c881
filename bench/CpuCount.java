// SPDX-License-Identifier: MIT
// CpuCount.java: the JDK's peer of pn_cpu_count() for bench/bench_cpus.c: calls
// Runtime.getRuntime().availableProcessors() (container-aware, cached 20 ms since
// JDK-8227006) in a loop after a JIT warm-up, and prints the median calls/s over rounds.
// Usage: java -cp DIR CpuCount ROUNDS ROUND_MS
import java.util.Arrays;

public class CpuCount {
	public static void main(String[] args) {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
		long roundNs = (args.length > 1 ? Long.parseLong(args[1]) : 200) * 1_000_000L;
		Runtime rt = Runtime.getRuntime();
		long sink = 0;
		long warm = System.nanoTime();
		while (System.nanoTime() - warm < 1_000_000_000L)
			for (int i = 0; i < 10_000; i++)
				sink += rt.availableProcessors();
		double[] rate = new double[rounds];
		for (int r = 0; r < rounds; r++) {
			long calls = 0, t0 = System.nanoTime(), t;
			do {
				for (int i = 0; i < 10_000; i++)
					sink += rt.availableProcessors();
				calls += 10_000;
				t = System.nanoTime();
			} while (t - t0 < roundNs);
			rate[r] = calls * 1e9 / (t - t0);
		}
		Arrays.sort(rate);
		System.out.println("count " + rt.availableProcessors());
		System.out.println("calls_per_s " + rate[rounds / 2]);
		System.out.println("version " + System.getProperty("java.version"));
		System.out.println("sink " + sink);
	}
}
