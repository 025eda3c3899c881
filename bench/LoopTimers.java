// SPDX-License-Identifier: MIT
// LoopTimers.java: the JDK's timers and its selector, unmodified, for `punctual run
// --precise`: ScheduledThreadPoolExecutor waits in LockSupport.parkNanos
// (pthread_cond_timedwait), Selector.select(ms) in epoll_wait.
//
//   java LoopTimers bench LABEL   schedule(1 ms) on a one-thread ScheduledThreadPoolExecutor,
//       1000 after 200 to warm up, then Selector.select(1) on an idle pipe, 1000 after 200;
//       one Markdown row each: lateness against the instant asked for (the call + the
//       delay, on System.nanoTime) p50 and p99, against the JDK's own deadline (the task's
//       getDelay when it runs; for select, the same as asked) p50 and p99, in us, and the
//       CPU share (the process's CPU time / wall time, %: the JVM's own threads included).
//   java LoopTimers check         deterministic output (order, counts, results) for the tests;
//       "early" counts what runs or returns before the JDK guarantees (a task before its
//       trigger time, select(ms) with nothing ready before ms have passed): must be 0.
//       On stderr, whether libpunctual-preload.so is mapped.
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

public class LoopTimers {
	static final long MS = 1_000_000L;
	static final AtomicInteger early = new AtomicInteger();

	static long cpu() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
				.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	static double pct(long[] a, double q) {
		long[] s = a.clone();
		Arrays.sort(s);
		return s[Math.min(s.length - 1, (int) (s.length * q))] / 1e3;
	}

	static void row(String what, String label, long[] asked, long[] own, double cpu) {
		System.out.printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.0f |%n", what, label,
				pct(asked, 0.5), pct(asked, 0.99), pct(own, 0.5), pct(own, 0.99), cpu);
	}

	static void bench(String label) throws Exception {
		int warm = 200, n = 1000;
		ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1);
		long[] asked = new long[n], own = new long[n];
		long c0 = 0, w0 = 0;
		for (int i = -warm; i < n; i++) {
			if (i == 0) {
				c0 = cpu();
				w0 = System.nanoTime();
			}
			AtomicReference<ScheduledFuture<?>> self = new AtomicReference<>();
			long[] got = new long[2];
			CountDownLatch set = new CountDownLatch(1);
			long t0 = System.nanoTime();
			ScheduledFuture<?> f = ex.schedule(() -> {
				try {
					set.await(); // self is set (long before the task is due)
				} catch (InterruptedException e) {
					throw new RuntimeException(e);
				}
				got[1] = -self.get().getDelay(TimeUnit.NANOSECONDS); // now - trigger time
				got[0] = System.nanoTime();
			}, 1, TimeUnit.MILLISECONDS);
			self.set(f);
			set.countDown();
			f.get();
			if (i >= 0) {
				asked[i] = got[0] - t0 - MS;
				own[i] = got[1];
			}
		}
		double cpu = 100.0 * (cpu() - c0) / (System.nanoTime() - w0);
		ex.shutdown();
		row("ScheduledThreadPoolExecutor schedule(1 ms)", label, asked, own, cpu);

		Selector sel = Selector.open();
		Pipe p = Pipe.open();
		p.source().configureBlocking(false);
		p.source().register(sel, SelectionKey.OP_READ);
		for (int i = -warm; i < n; i++) {
			if (i == 0) {
				c0 = cpu();
				w0 = System.nanoTime();
			}
			long t0 = System.nanoTime();
			int r = sel.select(1);
			long t1 = System.nanoTime();
			if (r != 0)
				throw new IllegalStateException("select returned " + r);
			if (i >= 0)
				asked[i] = own[i] = t1 - t0 - MS;
		}
		cpu = 100.0 * (cpu() - c0) / (System.nanoTime() - w0);
		row("Selector.select(1)", label, asked, own, cpu);
	}

	static void check() throws Exception {
		ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1);
		// Chains of schedule(d): each task runs no sooner than d after schedule was called.
		for (long d : new long[] {1, 2, 5}) {
			int n = d == 1 ? 200 : 20;
			for (int i = 0; i < n; i++) {
				long t0 = System.nanoTime();
				long t = ex.schedule(System::nanoTime, d, TimeUnit.MILLISECONDS).get();
				if (t - t0 < d * MS)
					early.incrementAndGet();
			}
			System.out.println("schedule(" + d + " ms) chain: " + n + " tasks");
		}
		// Tasks of the same delay run in the order they were scheduled; a cancelled one never.
		List<String> order = new ArrayList<>();
		List<ScheduledFuture<?>> fs = new ArrayList<>();
		for (String name : new String[] {"a", "b", "c", "d", "cancelled"})
			fs.add(ex.schedule(() -> {
				synchronized (order) {
					order.add(name);
				}
			}, 3, TimeUnit.MILLISECONDS));
		fs.get(4).cancel(false);
		for (int i = 0; i < 4; i++)
			fs.get(i).get();
		ex.schedule(() -> null, 3, TimeUnit.MILLISECONDS).get();
		synchronized (order) {
			System.out.println("same-delay order: " + String.join(" ", order));
		}
		// A fixed-rate task (2 ms) that ends itself at its 25th run (throwing stops it);
		// run k is due at its first trigger time + k periods.
		AtomicInteger runs = new AtomicInteger();
		CountDownLatch done = new CountDownLatch(1);
		long start = System.nanoTime();
		ScheduledFuture<?> rate = ex.scheduleAtFixedRate(() -> {
			int k = runs.getAndIncrement();
			if (System.nanoTime() - start < (1 + 2L * k) * MS)
				early.incrementAndGet();
			if (k == 24) {
				done.countDown();
				throw new RuntimeException("stop");
			}
		}, 1, 2, TimeUnit.MILLISECONDS);
		done.await();
		try {
			rate.get();
		} catch (java.util.concurrent.ExecutionException e) {
			// the 25th run's "stop"
		}
		System.out.println("scheduleAtFixedRate(2 ms): " + runs.get() + " runs");
		ex.shutdown();
		ex.awaitTermination(1, TimeUnit.MINUTES);

		// The selector: an idle pipe times out (select(1) returns 0, never before 1 ms);
		// a ready one is reported at once; one written during a long select ends it.
		Selector sel = Selector.open();
		Pipe p = Pipe.open();
		p.source().configureBlocking(false);
		SelectionKey key = p.source().register(sel, SelectionKey.OP_READ);
		int zeros = 0;
		for (int i = 0; i < 200; i++) {
			long t0 = System.nanoTime();
			zeros += sel.select(1) == 0 ? 1 : 0;
			if (System.nanoTime() - t0 < MS)
				early.incrementAndGet();
		}
		System.out.println("select(1) on an idle pipe: " + zeros + " of 200 returned 0");
		p.sink().write(ByteBuffer.wrap(new byte[] {1}));
		int r = sel.select(1);
		System.out.println("select(1) on a ready pipe: " + r + ", readable " + key.isReadable());
		sel.selectedKeys().clear();
		p.source().read(ByteBuffer.allocate(8));
		Thread w = new Thread(() -> {
			try {
				Thread.sleep(2);
				p.sink().write(ByteBuffer.wrap(new byte[] {2}));
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		});
		w.start();
		r = sel.select(30000);
		w.join();
		System.out.println("select(30000), pipe written after 2 ms: " + r + ", readable "
				+ key.isReadable());
		System.out.println("early: " + early.get());
		boolean shim = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/maps"))
				.contains("libpunctual-preload.so");
		System.err.println("shim: " + (shim ? "mapped" : "absent"));
	}

	public static void main(String[] args) throws Exception {
		if (args.length >= 1 && args[0].equals("bench"))
			bench(args.length > 1 ? args[1] : "java");
		else if (args.length == 1 && args[0].equals("check"))
			check();
		else {
			System.err.println("usage: java LoopTimers bench LABEL | check");
			System.exit(2);
		}
	}
}
