// SPDX-License-Identifier: MIT
// Tick PERIOD_NS N: a JVM service's heartbeat (ScheduledThreadPoolExecutor,
// scheduleAtFixedRate), a little work per tick (a string round trip), its lateness taken
// when the task runs, against its own fixed-rate deadline. Prints "p50 p99 p99.9 cpu% early" (ns) over N ticks after 200.
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

public class Tick {
	public static void main(String[] args) throws Exception {
		long period = Long.parseLong(args[0]);
		int n = Integer.parseInt(args[1]);
		long[] late = new long[n];
		long[] c0 = new long[1], w0 = new long[1];
		int[] i = {-200};
		CountDownLatch done = new CountDownLatch(1);
		ScheduledExecutorService ex = Executors.newSingleThreadScheduledExecutor();
		com.sun.management.OperatingSystemMXBean os =
			(com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
		long[] first = new long[1];
		Runnable task = () -> {
			long t = System.nanoTime(), due;
			synchronized (first) { due = first[0] + (long) (i[0] + 200) * period; }
			String s = Long.toString(t - due);
			if (Long.parseLong(s) == Long.MIN_VALUE) System.out.print("");
			if (i[0] == 0) { c0[0] = os.getProcessCpuTime(); w0[0] = t; }
			if (i[0] >= 0 && i[0] < n) late[i[0]] = t - due;
			if (++i[0] == n) done.countDown();
		};
		synchronized (first) { /* the first deadline as the executor has it */
			java.util.concurrent.ScheduledFuture<?> f =
				ex.scheduleAtFixedRate(task, 20 * period, period, TimeUnit.NANOSECONDS);
			first[0] = System.nanoTime() + f.getDelay(TimeUnit.NANOSECONDS);
		}
		done.await();
		ex.shutdownNow();
		long cpu = os.getProcessCpuTime() - c0[0], wall = System.nanoTime() - w0[0];
		long early = Arrays.stream(late).filter(x -> x < 0).count();
		Arrays.sort(late);
		System.out.println(late[n / 2] + " " + late[n * 99 / 100] + " " + late[n * 999 / 1000] + " "
			+ 100 * cpu / wall + " " + early);
	}
}
