/* SPDX-License-Identifier: MIT */
/*
 * punctual/wheel.h: a timer wheel whose timers fire inside [deadline, deadline +
 * precision], overlapping windows sharing one wakeup, never before the deadline. Add and
 * cancel are O(1) and never allocate. Not thread-safe; a timer in one wheel at a time.
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

/* Called for a due timer, no longer pending unless periodic (then re-armed). It may add,
 * cancel or re-arm any timer of w; it must not free w or expire or run it. */
typedef void pn_timer_fn(struct pn_wheel *w, struct pn_timer *t, void *arg);

struct pn_timer_link {
	struct pn_timer_link *next, *prev; /* NULL when the timer is not pending */
};

/* Callers embed it; its fields are the wheel's, read-only to them. */
struct pn_timer {
	struct pn_timer_link link;
	int64_t deadline; /* never fires before this instant */
	int64_t latest;   /* deadline + precision, saturated */
	int64_t period;   /* 0: one-shot */
	uint64_t seq;     /* insertion order; the top 12 bits are the wheel's */
	pn_timer_fn *fn;
	void *arg;
	struct pn_wheel *wheel; /* the wheel it was last added to */
};

/* Prepares t, not pending, to call fn(w, t, arg) when it fires (fn may be NULL). 0;
 * -EINVAL for NULL. */
PN_API int pn_timer_init(struct pn_timer *t, pn_timer_fn *fn, void *arg);

/* 1 if t is pending, 0 if not, -EINVAL for NULL. */
PN_API int pn_timer_pending(const struct pn_timer *t);

/* Creates an empty wheel, its time pn_now(). 0, -EINVAL (NULL) or -ENOMEM. */
PN_API int pn_wheel_new(struct pn_wheel **w);

/* Frees w (NULL is ignored); its pending timers stay marked pending until pn_timer_init. */
PN_API void pn_wheel_free(struct pn_wheel *w);

/* Schedules t to fire once in [deadline, deadline + precision]; re-adding reschedules it.
 * 0; -EINVAL for NULL, precision < 0, or t pending in another wheel. */
PN_API int pn_wheel_add(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                        int64_t precision);

/* pn_wheel_add, then re-armed at d + k * period, the smallest k >= 1 past the expiry time;
 * the k - 1 skipped count as missed. -EINVAL if period <= 0. */
PN_API int pn_wheel_add_periodic(struct pn_wheel *w, struct pn_timer *t, int64_t deadline,
                                 int64_t precision, int64_t period);

/* 1 if t was pending, 0 if not; -EINVAL for NULL or t pending in another wheel. */
PN_API int pn_wheel_cancel(struct pn_wheel *w, struct pn_timer *t);

/* Pending timers, or -EINVAL for NULL. */
PN_API int64_t pn_wheel_count(const struct pn_wheel *w);

/* The coalesced wakeup, the smallest deadline + precision pending. 0; -ENOENT when
 * nothing is pending; -EINVAL for NULL. */
PN_API int pn_wheel_next(struct pn_wheel *w, int64_t *wake);

/* The coalesced window: waking anywhere in [*earliest, *wake] fires the same timers, each
 * inside its window. Fires nothing. 0, -ENOENT or -EINVAL as pn_wheel_next. */
PN_API int pn_wheel_window(struct pn_wheel *w, int64_t *earliest, int64_t *wake);

/* Fires, by deadline then insertion, every timer pending at the call with deadline <= now;
 * those its callbacks add fire at the next call. On an empty wheel it sets the wheel's
 * time (a simulated timebase does so once first). The number fired (at most INT32_MAX);
 * -EINVAL for NULL; -EBUSY from a callback of the same wheel. */
PN_API int pn_wheel_expire(struct pn_wheel *w, int64_t now);

/* Sleeps with pn_sleep_until over each coalesced window and expires, until pn_now() >=
 * until. The number fired, -EINVAL or -EBUSY as pn_wheel_expire. */
PN_API int pn_wheel_run(struct pn_wheel *w, int64_t until);

/* Arms fd, a CLOCK_MONOTONIC timerfd, at the window's start, or disarms it when nothing is
 * pending. 1 (armed), 0 (disarmed), -EINVAL, or timerfd_settime's -errno. */
PN_API int pn_wheel_timerfd(struct pn_wheel *w, int fd);

/* Verifies every invariant, O(pending): 0, -EUCLEAN when one is broken, -EINVAL. */
PN_API int pn_wheel_check(struct pn_wheel *w);

struct pn_wheel_stats {
	uint64_t added;    /* successful adds */
	uint64_t fired;    /* callbacks run */
	uint64_t missed;   /* periods skipped */
	uint64_t expires;  /* expiries that fired a timer */
	uint64_t cascaded; /* timers moved to a finer level */
};

/* 0; -EINVAL for NULL. */
PN_API int pn_wheel_stats(const struct pn_wheel *w, struct pn_wheel_stats *st);

#ifdef __cplusplus
}
#endif
#endif
