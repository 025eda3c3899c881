/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wheel.c: libFuzzer harness for the timer wheel (src/wheel.c). The input is a
 * byte that picks the expiry's sort, then a sequence of operations on 16 timers: add,
 * add periodic, cancel, expire at a time that moves forwards, backwards or jumps,
 * next/window; callbacks read further operations from the same input, so they add,
 * cancel and re-arm timers, themselves included.
 * After every operation pn_wheel_check must pass, pn_wheel_next must equal the smallest
 * deadline + precision over pending timers, the count must match, no timer may fire
 * before its deadline, and an expiry fires in (deadline, insertion) order. Any failure
 * aborts.
 *
 * `make fuzz` (fuzz/run.sh) builds and runs it with the others; by hand:
 *   clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
 *         -Iinclude -Isrc fuzz/fuzz_wheel.c src/wheel.c src/sleep.c src/slack.c \
 *         src/clock.c src/error.c -o build/fuzz/fuzz_wheel -lpthread
 *   build/fuzz/fuzz_wheel -max_total_time=60 -max_len=4096
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <punctual/wheel.h>
#include "wheel/hooks.h" /* the wheel's test hooks */

#define NT 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t n;
};

static struct input in;
static struct pn_timer timers[NT];
static int64_t now;
static int depth;
static bool on_time; /* the expiry is at pn_wheel_next's time */
/* Each timer's deadline and insertion order as last added (or re-armed), and the last
 * (deadline, order) the expiry in progress fired: firing must follow that order. */
static int64_t shadow_d[NT];
static uint64_t shadow_seq[NT], seq_next;
static int64_t last_d;
static uint64_t last_seq;
static bool fired_any;

static void begin_expiry(void)
{
	fired_any = false;
}

static void added(const struct pn_timer *t)
{
	shadow_d[t - timers] = t->deadline;
	shadow_seq[t - timers] = seq_next++;
}

static uint64_t take(int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++) {
		v <<= 8;
		if (in.n) {
			v |= *in.p++;
			in.n--;
		}
	}
	return v;
}

static int64_t sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* A value from a few bytes: small, large, or an extreme. */
static int64_t value(void)
{
	uint8_t k = (uint8_t)take(1);
	switch (k & 7) {
	case 0:
		return (int64_t)take(1);
	case 1:
		return (int64_t)take(2);
	case 2:
		return (int64_t)take(4);
	case 3:
		return (int64_t)(take(8) >> 1);
	case 4:
		return INT64_MAX - (int64_t)take(1);
	default:
		return (int64_t)take(3) << (k >> 3);
	}
}

static void verify(struct pn_wheel *w)
{
	if (pn_wheel_check(w) != 0)
		abort();
	int64_t pending = 0, min = INT64_MAX, wake, e;
	for (int i = 0; i < NT; i++) {
		if (pn_timer_pending(&timers[i]) == 1) {
			pending++;
			if (timers[i].latest < min)
				min = timers[i].latest;
		}
	}
	if (pn_wheel_count(w) != pending)
		abort();
	int r = pn_wheel_next(w, &wake);
	if (pending ? (r != 0 || wake != min) : r != -ENOENT)
		abort();
	if (pending && (pn_wheel_window(w, &e, &wake) != 0 || e > wake || wake != min))
		abort();
	/* earliest: the latest deadline among the timers due by the wakeup */
	int64_t emax = INT64_MIN;
	for (int i = 0; pending && i < NT; i++)
		if (pn_timer_pending(&timers[i]) == 1 && timers[i].deadline <= wake &&
		    timers[i].deadline > emax)
			emax = timers[i].deadline;
	if (pending && e != emax)
		abort();
}

static void op(struct pn_wheel *w);

static void on_fire(struct pn_wheel *w, struct pn_timer *t, void *arg)
{
	(void)arg;
	int id = (int)(t - timers);
	int64_t d = shadow_d[id]; /* periodic: t is already re-armed */
	if (d > now)
		abort(); /* early */
	if (fired_any && (d < last_d || (d == last_d && shadow_seq[id] < last_seq)))
		abort(); /* out of (deadline, insertion) order */
	fired_any = true;
	last_d = d;
	last_seq = shadow_seq[id];
	if (t->period)
		added(t); /* re-armed, with the wheel's next insertion order */
	if (on_time && !t->period && now > t->latest)
		abort(); /* woken on time, yet past its window */
	if (depth < 4 && in.n) {
		depth++;
		op(w);
		depth--;
	}
}

static void op(struct pn_wheel *w)
{
	uint8_t c = (uint8_t)take(1);
	struct pn_timer *t = &timers[(c >> 4) % NT];
	switch (c & 7) {
	case 0:
	case 1:
		if (pn_wheel_add(w, t, sat(now, value() - value()), value()) != 0)
			abort();
		added(t);
		break;
	case 2:
		if (pn_wheel_add_periodic(w, t, sat(now, value() - value()), value(),
		                          value() | 1) != 0)
			abort();
		added(t);
		break;
	case 3:
		if (pn_wheel_cancel(w, t) < 0)
			abort();
		break;
	case 4:
	case 5:
		if (depth == 0) {
			now = sat(now, value());
			begin_expiry();
			if (pn_wheel_expire(w, now) < 0)
				abort();
		} else if (pn_wheel_expire(w, now) != -EBUSY) {
			abort();
		}
		break;
	case 6:
		if (depth == 0) {
			int64_t wake;
			if (pn_wheel_next(w, &wake) == 0) {
				if (wake >= now) {
					now = wake; /* on time: fires inside windows */
					on_time = true;
				}
				begin_expiry();
				if (pn_wheel_expire(w, now) < 0)
					abort();
				on_time = false;
			}
		}
		break;
	case 7:
		if (depth == 0) {
			int64_t behind = sat(now, -value());
			int64_t keep = now;
			now = behind; /* what on_fire compares with */
			begin_expiry();
			if (pn_wheel_expire(w, behind) < 0)
				abort(); /* a clock behind: nothing early */
			now = keep;
		}
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pn_wheel *w;
	if (pn_wheel_new(&w) != 0)
		return 0;
	in = (struct input){data, size};
	depth = 0;
	seq_next = 0;
	fired_any = false;
	/* 16 timers never crowd an expiry's bucket, nor make a list long enough for the
	 * records' sort: one input bit makes every bucket of two timers or more a crowd,
	 * another lowers the records' threshold to 2, a third makes the buffer fail (then
	 * the list sort is used). */
	unsigned sort = (unsigned)take(1);
	pn__wheel_check_tune(w, sort & 2, sort & 1 ? 2 : 129, sort & 4 ? 1 : 32);
	now = (int64_t)take(8);
	if (pn_wheel_expire(w, now) != 0) /* empty: adopts the time */
		abort();
	for (int i = 0; i < NT; i++)
		pn_timer_init(&timers[i], on_fire, NULL);
	while (in.n) {
		op(w);
		verify(w);
	}
	pn_wheel_free(w);
	return 0;
}
