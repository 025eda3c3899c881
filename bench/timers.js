// SPDX-License-Identifier: MIT
// timers.js: Node.js timers, unmodified, for `punctual run --precise` (libuv waits in
// epoll_pwait with a timeout in whole ms).
//
//   node timers.js bench LABEL   a chain of setTimeout(1 ms), 1000 after 50 to warm up,
//       then of setTimeout(10 ms), 150; prints one Markdown row each: lateness against
//       the instant asked for (setTimeout's call + the delay, on process.hrtime) p50 and
//       p99, against libuv's own deadline (the timer's _idleStart + delay on the loop's
//       ms clock: hrtime truncated to ms, minus the loop's base, found as below) p50 and
//       p99, in us, and the CPU share (process.cpuUsage / wall time, %).
//   node timers.js check TOL_MS  deterministic output (order, counts) for the tests; a
//       callback that runs sooner than delay - TOL_MS after setTimeout was called counts as
//       early (libuv's loop time is ms-truncated, from CLOCK_MONOTONIC or, where its
//       resolution is <= 1 ms, CLOCK_MONOTONIC_COARSE: a timer may run up to 1 ms, or 2,
//       before call + delay on hrtime, and that is all Node guarantees). On stderr,
//       whether libpunctual-preload.so is mapped.
'use strict';

const hr = () => process.hrtime.bigint();

function pct(a, q) {
	const s = Float64Array.from(a).sort();
	return s[Math.min(s.length - 1, Math.floor(s.length * q))];
}

// One chain of n + warm setTimeout(delay); resolves to [asked, libuv, cpu%].
function chain(delay, n, warm) {
	return new Promise((resolve) => {
		const asked = [], rt = [], idle = [], before = [], after = [];
		let i = 0, c0, w0;
		const step = () => {
			if (i === warm) {
				c0 = process.cpuUsage();
				w0 = hr();
			}
			if (i === warm + n) {
				const cu = process.cpuUsage(c0);
				const cpu = (100 * (cu.user + cu.system) * 1000) / Number(hr() - w0);
				// The loop's base (ms): _idleStart = floor(T / 1 ms) - base for the instant
				// T setTimeout read the clock, between before and after; where both read
				// the same ms, base is exact.
				let base;
				for (let k = 0; k < idle.length && base === undefined; k++) {
					const b = before[k] / 1000000n, a = after[k] / 1000000n;
					if (a === b)
						base = Number(b) - idle[k];
				}
				for (let k = 0; k < idle.length; k++) {
					const d = BigInt(base + idle[k] + delay) * 1000000n;
					rt[k] = Number(rt[k] - d) / 1e3;
				}
				resolve([asked, rt, cpu]);
				return;
			}
			const t0 = hr();
			const tm = setTimeout(() => {
				const t1 = hr();
				if (i >= warm) {
					asked.push(Number(t1 - t0 - BigInt(delay) * 1000000n) / 1e3);
					rt.push(t1);
				}
				i++;
				step();
			}, delay);
			const ta = hr();
			if (i >= warm) {
				idle.push(tm._idleStart);
				before.push(t0);
				after.push(ta);
			}
		};
		step();
	});
}

async function bench(label) {
	for (const [delay, n] of [[1, 1000], [10, 150]]) {
		const [asked, rt, cpu] = await chain(delay, n, 50);
		const f = (x) => x.toFixed(1);
		console.log(`| setTimeout(${delay} ms) | ${label} | ${f(pct(asked, 0.5))} | ` +
			`${f(pct(asked, 0.99))} | ${f(pct(rt, 0.5))} | ${f(pct(rt, 0.99))} | ${cpu.toFixed(0)} |`);
	}
}

// The tests' part: what Node guarantees, printed so that two runs can be compared.
async function check(tol) {
	let early = 0;
	const timed = (delay) => new Promise((resolve) => {
		const t0 = hr();
		setTimeout(() => {
			if (Number(hr() - t0) / 1e6 < delay - tol)
				early++;
			resolve();
		}, delay);
	});
	// Chains of 1, 2, 5 and 10 ms.
	for (const [delay, n] of [[1, 200], [2, 50], [5, 20], [10, 10]]) {
		for (let i = 0; i < n; i++)
			await timed(delay);
		console.log(`setTimeout(${delay} ms) chain: ${n} callbacks`);
	}
	// Timers of the same delay run in the order they were set; a cleared one never runs.
	const order = [];
	await new Promise((resolve) => {
		for (const name of ['a', 'b', 'c', 'd'])
			setTimeout(() => order.push(name), 3);
		const x = setTimeout(() => order.push('cleared'), 3);
		setTimeout(() => resolve(), 3);
		clearTimeout(x);
	});
	console.log(`same-delay order: ${order.join(' ')}`);
	// setInterval(2 ms) cleared at its 25th run (not checked for early runs: the next
	// run counts from the loop time read before the callback, which load can delay).
	await new Promise((resolve) => {
		let runs = 0;
		const iv = setInterval(() => {
			if (++runs === 25) {
				clearInterval(iv);
				resolve();
			}
		}, 2);
	});
	console.log('setInterval(2 ms): 25 runs');
	// A socket event during a timer wait: a server writes 3 messages 2 ms apart; the
	// client reads them all while a 30 s timer is pending (the timer is then cleared).
	const net = require('net');
	await new Promise((resolve) => {
		const srv = net.createServer((s) => {
			let k = 0;
			const iv = setInterval(() => {
				s.write(`m${k}\n`);
				if (++k === 3) {
					clearInterval(iv);
					s.end();
				}
			}, 2);
		});
		srv.listen(0, '127.0.0.1', () => {
			const got = [];
			const guard = setTimeout(() => got.push('timeout'), 30000);
			const c = net.connect(srv.address().port, '127.0.0.1');
			let buf = '';
			c.on('data', (d) => (buf += d));
			c.on('end', () => {
				clearTimeout(guard);
				got.push(...buf.trim().split('\n'));
				console.log(`socket: ${got.join(' ')}`);
				srv.close(resolve);
			});
		});
	});
	console.log(`early: ${early}`);
	const maps = require('fs').readFileSync('/proc/self/maps', 'utf8');
	console.error(`shim: ${maps.includes('libpunctual-preload.so') ? 'mapped' : 'absent'}`);
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'bench')
	bench(arg || 'node');
else if (mode === 'check')
	check(Number(arg || 2));
else {
	console.error('usage: node timers.js bench LABEL | check TOL_MS');
	process.exit(2);
}
