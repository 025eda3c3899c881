// SPDX-License-Identifier: MIT
// SleepJ: the JDK's Thread.sleep as JMH's ThreadSleep benchmark calls it, timed with
// System.nanoTime. Prints one Markdown table row: requested, actual duration p50, p99,
// p99.9 in us. usage: java SleepJ LABEL MILLIS NANOS COUNT
import java.util.Arrays;

public class SleepJ {
	public static void main(String[] a) throws Exception {
		String label = a[0];
		long millis = Long.parseLong(a[1]);
		int nanos = Integer.parseInt(a[2]);
		int n = Integer.parseInt(a[3]);
		long[] d = new long[n];
		for (int i = 0; i < 200; i++) // warm up the JIT and the sleeper
			Thread.sleep(millis, nanos);
		for (int i = 0; i < n; i++) {
			long s = System.nanoTime();
			Thread.sleep(millis, nanos);
			d[i] = System.nanoTime() - s;
		}
		Arrays.sort(d);
		double req = millis * 1e3 + nanos / 1e3;
		System.out.printf("| %s | sleep(%d, %d) = %.0f us | %d | %.1f | %.1f | %.1f |%n", label,
				millis, nanos, req, n, d[n / 2] / 1e3, d[n * 99 / 100] / 1e3,
				d[n * 999 / 1000] / 1e3);
	}
}
