// SPDX-License-Identifier: MIT
// ForkJoinThrottle.java: a program that sizes its pool the usual way,
// new ForkJoinPool(Runtime.availableProcessors()), and runs TASKS busy tasks of ITERS
// iterations each on it; prints "workers wall_ms nr_throttled throttled_ms" with the
// cgroup's cpu.stat (v1 nr_throttled and throttled_time in ns; v2 throttled_usec) read
// before and after the work.
// java ForkJoinThrottle CPU_STAT TASKS ITERS
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;

public class ForkJoinThrottle {
	static long[] stat(Path p) throws Exception {
		long n = 0, t = 0;
		for (String l : Files.readAllLines(p)) {
			String[] f = l.split(" ");
			if (f[0].equals("nr_throttled"))
				n = Long.parseLong(f[1]);
			else if (f[0].equals("throttled_time"))
				t = Long.parseLong(f[1]);
			else if (f[0].equals("throttled_usec"))
				t = Long.parseLong(f[1]) * 1000;
		}
		return new long[] {n, t};
	}

	static long busy(long iters) {
		long x = 88172645463325252L;
		for (long i = 0; i < iters; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
		}
		return x;
	}

	public static void main(String[] a) throws Exception {
		Path st = Path.of(a[0]);
		int tasks = Integer.parseInt(a[1]);
		long iters = Long.parseLong(a[2]);
		int workers = Runtime.getRuntime().availableProcessors();
		ForkJoinPool pool = new ForkJoinPool(workers);
		busy(iters); // compile it before measuring
		long[] s0 = stat(st);
		long t0 = System.nanoTime();
		List<Future<Long>> fs = new ArrayList<>();
		for (int i = 0; i < tasks; i++)
			fs.add(pool.submit(() -> busy(iters)));
		long sink = 0;
		for (Future<Long> f : fs)
			sink += f.get();
		long t1 = System.nanoTime();
		long[] s1 = stat(st);
		System.out.printf("%d %.0f %d %.0f%s%n", workers, (t1 - t0) / 1e6, s1[0] - s0[0],
			(s1[1] - s0[1]) / 1e6, sink == 42 ? " " : "");
	}
}
