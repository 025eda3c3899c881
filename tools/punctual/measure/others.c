/* SPDX-License-Identifier: MIT */
/*
 * measure/others.c: the CPU time every other process used while a measurement ran, from
 * /proc/PID/stat read before and after it, with reaped children counted for their parent
 * up to what the CPUs could give. A loop that measured a busy machine then names who kept
 * it busy. A tick is 1/sysconf(_SC_CLK_TCK) s.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/others.h"

/* pid's CPU ticks and comm: 0, or -1 (gone, unreadable). */
static int read_stat(const char *root, const char *pid, uint64_t *ticks, uint64_t *reaped,
                     char comm[16])
{
	char path[256], buf[1024];
	if ((size_t)snprintf(path, sizeof(path), "%s/proc/%s/stat", root, pid) >= sizeof(path))
		return -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold ')': the last one ends it */
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -1;
	size_t len = (size_t)(close - open - 1);
	len = len < 15 ? len : 15;
	memcpy(comm, open + 1, len);
	comm[len] = 0;
	for (size_t i = 0; i < len; i++)
		if (!isprint((unsigned char)comm[i]))
			comm[i] = '?';
	/* after ") ": state(3) ... utime(14) stime(15) cutime(16) cstime(17) */
	unsigned long long ut, st;
	long long cut, cst;
	if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
	           &ut, &st, &cut, &cst) != 4)
		return -1;
	*ticks = ut + st;
	*reaped = (uint64_t)(cut > 0 ? cut : 0) + (uint64_t)(cst > 0 ? cst : 0);
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct others_proc *)a)->pid, y = ((const struct others_proc *)b)->pid;
	return (x > y) - (x < y);
}

int others_take(struct others_snap *s, const char *root)
{
	char path[256];
	*s = (struct others_snap){0};
	snprintf(path, sizeof(path), "%s/proc", root);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (s->n == cap) {
			size_t c = cap ? 2 * cap : 256;
			struct others_proc *p = realloc(s->p, c * sizeof(*p));
			if (!p) {
				closedir(d);
				others_free(s);
				return -ENOMEM;
			}
			s->p = p;
			cap = c;
		}
		struct others_proc *p = &s->p[s->n];
		if (read_stat(root, e->d_name, &p->ticks, &p->reaped, p->comm) == 0) {
			p->pid = (pid_t)atol(e->d_name);
			s->n++;
		}
	}
	closedir(d);
	qsort(s->p, s->n, sizeof(*s->p), by_pid);
	return 0;
}

void others_diff(const struct others_snap *before, const struct others_snap *after, int64_t elapsed,
                 pid_t self, int ncpus, struct others *o)
{
	*o = (struct others){.elapsed = elapsed};
	long hz = sysconf(_SC_CLK_TCK);
	if (elapsed <= 0 || hz <= 0 || ncpus < 1)
		return;
	double per_tick = 1e9 / (double)hz / (double)elapsed; /* one tick over elapsed */
	size_t i = 0;
	for (size_t k = 0; k < after->n; k++) {
		const struct others_proc *a = &after->p[k];
		while (i < before->n && before->p[i].pid < a->pid)
			i++;
		/* a process born during the stretch counts from 0, as does a reused pid */
		const struct others_proc *b = i < before->n && before->p[i].pid == a->pid &&
		                                              before->p[i].ticks <= a->ticks &&
		                                              before->p[i].reaped <= a->reaped
		                                      ? &before->p[i]
		                                      : NULL;
		uint64_t own = a->ticks - (b ? b->ticks : 0),
		         reaped = a->reaped - (b ? b->reaped : 0);
		if (a->pid == self || own + reaped == 0)
			continue;
		double c = (double)own * per_tick, r = (double)reaped * per_tick;
		c += r < ncpus - c ? r
		     : c < ncpus   ? ncpus - c
		                   : 0; /* the reaped: within the CPUs */
		o->cpus += c;
		o->nbusy++;
		size_t j = o->ntop < OTHERS_TOP ? o->ntop++ : OTHERS_TOP;
		while (j > 0 && o->top[j - 1].cpus < c) {
			if (j < OTHERS_TOP)
				o->top[j] = o->top[j - 1];
			j--;
		}
		if (j < OTHERS_TOP) {
			o->top[j].pid = a->pid;
			memcpy(o->top[j].comm, a->comm, sizeof(a->comm));
			o->top[j].cpus = c;
		}
	}
	if (o->cpus > ncpus) /* reaped children's earlier time */
		o->cpus = ncpus;
}

void others_free(struct others_snap *s)
{
	free(s->p);
	*s = (struct others_snap){0};
}
