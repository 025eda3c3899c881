// SPDX-License-Identifier: MIT
// tick.js PERIOD_NS N: a Node.js service's timer, as Node defines one: setTimeout(fn, 1 ms)
// re-armed each tick, a little work per tick (a JSON round trip), its lateness against the
// time the timer was due (armed + the period). Prints "p50 p99 p99.9 cpu% early" (ns) over N
// ticks after 200.
'use strict';
const period = Number(process.argv[2]), n = Number(process.argv[3]);
if (!(period > 0) || !(n > 0)) {
  console.error('usage: tick.js PERIOD_NS N');
  process.exit(2);
}
const now = () => process.hrtime.bigint();
const late = [];
let i = -200, due = 0n, c0 = null, w0 = 0n;
function arm() {
  due = now() + BigInt(period);
  setTimeout(tick, period / 1e6);
}
function tick() {
  const lag = Number(now() - due);
  JSON.parse(JSON.stringify({ tick: i, late: lag }));
  if (i === 0) {
    c0 = process.cpuUsage();
    w0 = now();
  }
  if (i >= 0) late.push(lag);
  if (++i < n) return arm();
  const c = process.cpuUsage(c0), wall = Number(now() - w0);
  late.sort((a, b) => a - b);
  console.log(late[n >> 1], late[Math.floor(n * 99 / 100)], late[Math.floor(n * 999 / 1000)],
    Math.floor(100 * (c.user + c.system) * 1000 / wall), late.filter((x) => x < 0).length);
}
arm();
