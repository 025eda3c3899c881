// SPDX-License-Identifier: MIT
// AvailableProcessors.java: prints what the JDK's Runtime.availableProcessors() answers,
// the count the JVM sizes its GC and JIT threads and the common ForkJoinPool by
// (bench/bench_containers.sh asks it inside containers of a given CPU limit).
public class AvailableProcessors {
	public static void main(String[] args) {
		System.out.println(Runtime.getRuntime().availableProcessors());
	}
}
