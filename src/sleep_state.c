/* SPDX-License-Identifier: MIT */
/*
 * sleep_state.c: the thread's precise-sleep state (sleep_state.h). Mapped, not in static
 * TLS: glibc carves a preloaded library's static TLS out of every new thread's stack, so
 * 10 KB there would keep a PTHREAD_STACK_MIN thread from being created under the shim. mmap,
 * not malloc: a plan may run in a signal handler. A key's destructor unmaps it at the
 * thread's exit. Lock-free by construction: nothing here is shared between threads.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "sleep_state.h"

static PN_TLS struct pn__sleep_state *T;
static pthread_key_t state_key;
static bool state_key_ok;

static void state_free(void *s)
{
	if (T == s)
		T = NULL; /* a later key destructor's sleep maps a new one, freed in a next round */
	munmap(s, sizeof(struct pn__sleep_state));
}

/* At load time: pthread_key_create is not async-signal-safe, a thread's first plan may be. */
__attribute__((constructor)) static void state_key_init(void)
{
	state_key_ok = pthread_key_create(&state_key, state_free) == 0;
}

struct pn__sleep_state *pn__sleep_state(void)
{
	return T;
}

struct pn__sleep_state *pn__sleep_state_make(void)
{
	if (PN_LIKELY(T != NULL))
		return T;
	void *m = mmap(NULL, sizeof(struct pn__sleep_state), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* without a key (none left) the mapping outlives the thread: a leak, not a fault */
	if (state_key_ok)
		pthread_setspecific(state_key, m);
	return T = m;
}

void pn__sleep_count(struct pn__sleep_state *t, int k, int64_t deadline, int64_t precision,
                     int64_t spin_start, int64_t now)
{
	if (spin_start < deadline) {
		t->st.spun_ns += now - spin_start;
		pn__margin_spun(&t->cls[k], now - deadline);
	} else {
		t->st.kernel_only++;
	}
	t->st.sleeps++;
	if (now < deadline) /* cannot happen: the callers' loops; counted if it ever does */
		t->st.early++;
	if (now - deadline > precision)
		t->st.late++;
}

void pn__sleep_settle(struct pn__sleep_state *t)
{
	if (!t->pend.on)
		return;
	t->pend.on = false;
	struct pn__sleep_pending *d = &t->pend;
	pn__sleep_count(t, d->k, d->deadline, d->precision, d->start, d->at.end);
}

void pn__sleep_pend(struct pn__sleep_state *t, struct pn__sleep_plan *p, int64_t spin_start)
{
	uint32_t seq = t->pend.at.seq + 1;
	t->pend = (struct pn__sleep_pending){.start = spin_start,
	                                     .deadline = p->deadline,
	                                     .precision = p->precision,
	                                     .at = {.end = p->deadline, .seq = seq},
	                                     .k = p->k,
	                                     .on = true};
	p->tail = true;
	p->tail_to = &t->pend.at;
	p->tail_seq = seq;
}
