/* SPDX-License-Identifier: MIT */
/*
 * contract.h: the internals `punctual` may use besides the public API, and the one header
 * of src/ that tools/ includes: where a figure must be the library's, the tool measures
 * with the library's machinery. tests/house checks the tool uses no pn__ symbol beyond
 * this list:
 *
 *   basics      pn__duration_parse pn__duration_parse_share pn__duration_format
 *               pn__fs_root pn__fs_read pn__fs_read_file pn__clock_vdso_gettime;
 *   cgroups     pn__cgroup_limit_of (another process's quota, for tune --pid)
 *               pn__cgroup_stat pn__cgroup_stat_open pn__cgroup_stat_pread (cpu.stat);
 *   schedstat   pn__runs_open pn__runs_pread pn__runs_read pn__runs_read_task;
 *   causes      pn__why_classify pn__why_name (one rule for the library and the tool);
 *   a thread's  pn__state_new pn__state_use pn__state_free pn__state_stats (the
 *   waits       frontier's variants side by side in one process) pn__slice_parse
 *               pn__slice_set_self pn__slice_set_default pn__slice_busy pn__slice_note
 *               pn__slice_due pn__slice_spun pn__sched_get pn__sched_set pn__rt_limit;
 *   the lend    pn__sched_lend_signal pn__sched_on_bound pn__sched_exit pn__state_get
 *               (the shared frontier's default lends as `run --precise` does);
 *   records     pn__records_sum pn__decay_hist_bucket_hi (PUNCTUAL_STATS_FILE's)
 *               pn__decay_hist_bucket_of (tune's traced runs, in the records' buckets)
 *
 * A symbol added to the tool's use is added here, with the reason a library user would not
 * want it public.
 */
#ifndef PUNCTUAL_CONTRACT_H
#define PUNCTUAL_CONTRACT_H

#include "internal.h"
#include "fs.h"
#include "splitmix.h"
#include "cpus/cgroup.h"
#include "hist/decay_hist.h"
#include "report/record.h"
#include "report/why.h"
#include "sched/rt.h"
#include "sched/runs.h"
#include "sched/slice.h"
#include "wait/state.h"

#endif
