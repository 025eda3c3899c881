/* SPDX-License-Identifier: MIT */
/*
 * punctual/wheel.h: a hierarchical timer wheel whose timers carry a precision, so that
 * timers whose windows [deadline, deadline + precision] overlap share one wakeup
 * (FreeBSD calloutng's precision, sd-event's accuracy, Linux hrtimer's soft/hard expiry).
 *
 * The caller embeds struct pn_timer in its own objects: adding and cancelling never
 * allocate and cost O(1). The loop asks pn_wheel_next() when to wake: the smallest
 * deadline + precision among pending timers (the greedy rule, which gives the fewest
 * wakeups for the windows it knows). Waking at that time and calling pn_wheel_expire()
 * fires every timer whose deadline has come, each inside its window; no timer ever fires
 * before its deadline, whenever the loop wakes.
 *
 * Instants are int64_t ns on pn_now()'s timebase (CLOCK_MONOTONIC); any value works,
 * past ones included. Precisions and periods are durations >= 0. deadline + precision
 * saturates at INT64_MAX, never wraps. A wheel is not thread-safe: one thread (or a
 * lock around every call) per wheel; a timer belongs to one wheel at a time (cancel it
 * before adding it to another).
 */
#ifndef PUNCTUAL_WHEEL_H
#define PUNCTUAL_WHEEL_H

#include <stdint.h>
#include <punctual/version.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pn_wheel;
struct pn_timer;

/* Called by pn_wheel_expire (or pn_wheel_run) for a due timer, which is no longer
 * pending unless periodic (then already re-armed for its next period). The callback may
 * add, cancel or re-arm any timer of w, itself included; it must not free w or call
 * pn_wheel_expire / pn_wheel_run on it. */
typedef void pn_timer_fn(struct pn_wheel *w, struct pn_timer *t, void *arg);

struct pn_timer_link {
	struct pn_timer_link *next, *prev; /* NULL when the timer is not pending */
};

/* Public so that callers embed it; the fields are the wheel's: read them, never write
 * them (pn_timer_init and the pn_wheel_* calls do). */
struct pn_timer {
	struct pn_timer_link link; /* in a slot's list, the due or firing list, or firing */
	int64_t deadline;          /* never fires before this instant */
	int64_t latest;            /* deadline + precision, saturated at INT64_MAX */
	int64_t period;            /* 0: one-shot */
	uint64_t seq;              /* insertion order (ties); the top 12 bits are the wheel's */
	pn_timer_fn *fn;
	void *arg;
	struct pn_wheel *wheel; /* the wheel it was last added to (cancel checks it) */
};

/* Prepares t (not pending) to call fn(w, t, arg) when it fires; fn may be NULL (the
 * timer then only stops being pending). Returns 0; -EINVAL if t is NULL. Must not be
 * called on a pending timer. */
PN_API int pn_timer_init(struct pn_timer *t, pn_timer_fn *fn, void *arg);

/* 1 if t is pending (added and not yet fired or cancelled), 0 if not, -EINVAL for NULL. */
PN_API int pn_timer_pending(const struct pn_timer *t);

/* Creates an empty wheel into *w, its time set to pn_now() (see pn_wheel_expire for
 * another timebase): one allocation of about 87 KiB (its slots and expiry's buckets).
 * Returns 0, -EINVAL (w NULL) or -ENOMEM. */
PN_API int pn_wheel_new(struct pn_wheel **w);

/* Frees w (NULL is ignored). Pending timers are forgotten; they are the caller's memory,
 * left marked pending: pn_timer_init them before reuse. */
PN_API void pn_wheel_free(struct pn_wheel *w);

/* Schedules t to fire once at a time in [deadline, deadline + precision]. Re-adding a
 * pending timer reschedules it (and it goes behind timers already added with the same
 * deadline). Returns 0; -EINVAL if w or t is NULL, precision < 0, or t is pending in
 * another wheel. */
PN_API int pn_wheel_add(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                        int64_t precision);

/* Like pn_wheel_add, then every period: after firing for deadline d, t is re-armed at
 * d + k * period with the smallest k >= 1 that puts it after the expiry time; the k - 1
 * periods skipped count in pn_wheel_stats' missed (no drift: never now + period).
 * -EINVAL if period <= 0. */
PN_API int pn_wheel_add_periodic(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                                 int64_t precision, int64_t period);

/* Cancels t. Returns 1 if it was pending, 0 if not (cancelling twice is harmless);
 * -EINVAL for NULL, or for a timer pending in another wheel (left as it is). */
PN_API int pn_wheel_cancel(struct pn_wheel *w, struct pn_timer *t);

/* The number of pending timers (>= 0), -EINVAL for NULL. */
PN_API int64_t pn_wheel_count(const struct pn_wheel *w);

/* The coalesced wakeup: into *wake, the smallest deadline + precision over pending
 * timers. Waking at *wake and calling pn_wheel_expire fires every timer whose deadline
 * is <= *wake, each inside its window. Returns 0; -ENOENT when no timer is pending;
 * -EINVAL for NULL. */
PN_API int pn_wheel_next(struct pn_wheel *w, int64_t *wake);

/* The whole coalesced window [*earliest, *wake]: *wake as pn_wheel_next gives it,
 * *earliest the latest deadline among the timers due by *wake. Waking at any instant in
 * it fires the same timers, each inside its window; a loop that sleeps with a precision
 * (pn_wheel_run, pn_wheel_timerfd) aims at *earliest so that its own lateness is
 * absorbed. It may do part of the next pn_wheel_expire's work (filing the timers due by
 * a near *wake for expiry), never firing anything. Returns 0, -ENOENT (nothing pending)
 * or -EINVAL (NULL). */
PN_API int pn_wheel_window(struct pn_wheel *w, int64_t *earliest, int64_t *wake);

/* Fires, in order of deadline and then insertion, every timer pending when called whose
 * deadline is <= now. Timers that callbacks add with a deadline <= now fire at the next
 * call, so a callback that re-arms itself in the past cannot loop forever. On an empty
 * wheel it only sets the wheel's time to now: a caller on a simulated timebase does so
 * once before adding (timers are filed relative to that time; any deadline still works,
 * only slower if far behind it). Expiry sorts what it fires through buckets inside the
 * wheel; a cluster of deadlines (and the due list) it sorts in a buffer that grows to the
 * longest such list sorted (freed by pn_wheel_free); when it cannot grow, it sorts the
 * list in place. Returns the number fired (saturated at INT32_MAX); -EINVAL for
 * NULL; -EBUSY if called from a callback of the same wheel. */
PN_API int pn_wheel_expire(struct pn_wheel *w, int64_t now);

/* Runs w's timers in real time until pn_now() >= until: sleeps with pn_sleep_until over
 * each coalesced window (pn_wheel_window) and expires at the time it wakes. Returns the
 * number of timers fired (saturated at INT32_MAX); -EINVAL (NULL), -EBUSY (from a
 * callback). Never fires a timer early. */
PN_API int pn_wheel_run(struct pn_wheel *w, int64_t until);

/* Arms fd, a CLOCK_MONOTONIC timerfd, with TFD_TIMER_ABSTIME at the start of the
 * coalesced window (pn_wheel_window's *earliest), or disarms it when nothing is pending;
 * when it becomes readable, read it and call pn_wheel_expire(w, pn_now()). Returns 1
 * (armed), 0 (disarmed), -EINVAL (w NULL or fd < 0) or timerfd_settime's -errno. */
PN_API int pn_wheel_timerfd(struct pn_wheel *w, int fd);

/* Verifies every internal invariant (list links, slot placement, bitmaps, cached minima,
 * counts): O(pending timers). Returns 0, -EUCLEAN when one is broken, -EINVAL for NULL.
 * For tests and fuzzers. */
PN_API int pn_wheel_check(struct pn_wheel *w);

struct pn_wheel_stats {
	uint64_t added;    /* pn_wheel_add / _add_periodic calls that succeeded */
	uint64_t fired;    /* callbacks run (timers fired) */
	uint64_t missed;   /* periods periodic timers skipped */
	uint64_t expires;  /* pn_wheel_expire calls that fired at least one timer */
	uint64_t cascaded; /* timers moved to a finer level as time advanced */
};

/* Copies w's counters. Returns 0; -EINVAL for NULL. */
PN_API int pn_wheel_stats(const struct pn_wheel *w, struct pn_wheel_stats *st);

#ifdef __cplusplus
}
#endif
#endif
