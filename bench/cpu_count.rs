// SPDX-License-Identifier: MIT
// cpu_count.rs: Rust std's peer of pn_cpu_count_fresh() for bench/bench_cpus.c:
// std::thread::available_parallelism() (cgroup-aware, walks ancestors, uncached) in a
// loop; prints the median calls/s over rounds. Usage: cpu_count ROUNDS ROUND_MS
use std::thread::available_parallelism;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let round_s: f64 = args.get(2).and_then(|s| s.parse::<f64>().ok()).unwrap_or(200.0) / 1e3;
    let count = || available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut sink = 0usize;
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        let mut calls = 0u64;
        while t0.elapsed().as_secs_f64() < round_s {
            for _ in 0..10 {
                sink += count();
            }
            calls += 10;
        }
        rates.push(calls as f64 / t0.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("count {}", count());
    println!("calls_per_s {}", rates[rounds / 2]);
    println!("sink {}", sink);
}
