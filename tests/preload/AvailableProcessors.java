// SPDX-License-Identifier: MIT
// AvailableProcessors.java: prints Runtime.availableProcessors() and the common
// ForkJoinPool's parallelism (sized from it: count - 1, at least 1), then the system
// property named by the first argument if any. Compiled (javac) or as a single-file source
// program: java AvailableProcessors.java [PROPERTY]
import java.util.concurrent.ForkJoinPool;

public class AvailableProcessors {
	public static void main(String[] args) {
		String line = Runtime.getRuntime().availableProcessors() + " "
			+ ForkJoinPool.commonPool().getParallelism();
		if (args.length > 0)
			line += " " + System.getProperty(args[0]);
		System.out.println(line);
	}
}
