/* SPDX-License-Identifier: MIT */
/* `punctual sleep`'s matrix as text, CSV and JSON, written to out. */
#ifndef PUNCTUAL_SLEEP_RENDER_H
#define PUNCTUAL_SLEEP_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "util/host.h"
#include "measure/matrix.h"

/* How the matrix ran: the scheduling. */
struct matrix_sched {
	long fifo;        /* SCHED_FIFO at this priority, or 0: SCHED_OTHER */
	int64_t slice_ns; /* --slice; 0: the kernel's own */
	long cpu;         /* pinned to this CPU, or -1 */
	long dma_latency; /* /dev/cpu_dma_latency held at this (us), or -1: not held */
};

/* One table per interval, a column group per slack value as the width allows, then the
 * early returns, the samples cut, the legend and a signal's stop. */
void matrix_text(const struct sleep_matrix *x, const struct matrix_sched *o);
/* One row per cell: its samples, early returns, duration and overshoot p50, p99, max. */
void matrix_csv(const struct sleep_matrix *x);
/* The report: the host, the run, the mechanisms and every cell with its histograms. */
void matrix_json(const struct sleep_matrix *x, const struct matrix_sched *o,
                 const struct host *host);
/* "interrupted by SIGINT after 1.2 s: ..." when a signal stopped the run, else "". */
const char *matrix_interrupted(char *buf, size_t n, int64_t elapsed);

#endif
