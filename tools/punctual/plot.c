/* SPDX-License-Identifier: MIT */
/*
 * plot.c: `punctual probe --plot DIR`: the overshoot CDF per mechanism and timer slack
 * (log axis) and the clock-cost bars, as PNG and SVG, through gnuplot. The data and the
 * gnuplot script are written to DIR too, so a chart can be restyled by hand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

/* gnuplot's path into path, or exit 1. */
static void find_gnuplot(char *path, size_t n)
{
	const char *env = getenv("PATH");
	for (const char *d = env ? env : "/usr/bin:/bin"; *d;) {
		size_t len = strcspn(d, ":");
		snprintf(path, n, "%.*s/gnuplot", (int)len, d);
		if (len && access(path, X_OK) == 0)
			return;
		d += len + (d[len] == ':');
	}
	die(1, "--plot: gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
}

/* Cumulative fraction against overshoot in us, from the histogram's buckets. */
static int render_cdf(FILE *f, const void *arg)
{
	const struct pn_hist *h = arg;
	uint64_t n = pn_hist_count(h), acc = 0;
	struct pn_hist_bucket b;
	for (int i = pn_hist_next(h, 0, &b); i >= 0; i = pn_hist_next(h, i + 1, &b)) {
		acc += b.count;
		double us = (double)b.hi / 1e3;
		fprintf(f, "%.4f %.6f\n", us < 0.01 ? 0.01 : us, (double)acc / (double)n);
	}
	return 0;
}

static int run_gnuplot(const char *gp, const char *script)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl(gp, "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* dir/name as a gnuplot string: single quotes, a quote inside doubled (the only escape
 * there is), and "./" before a relative path so that no name reads as gnuplot's
 * special files ('<cmd' runs cmd, '|cmd' pipes to it, '-' is stdin). */
static void gp_path(FILE *f, const char *dir, const char *name)
{
	fputs(*dir == '/' ? "'" : "'./", f);
	for (const char *c = dir; *c; c++) {
		if (*c == '\'')
			fputc('\'', f);
		fputc(*c, f);
	}
	fprintf(f, "/%s'", name); /* names are ours: no quote, no colon */
}

void probe_plot_check(const char *dir)
{
	/* a line break would end the gnuplot command in the middle of the path */
	for (const unsigned char *c = (const unsigned char *)dir; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			usage_error("--plot: the directory name has a control character, which a "
			            "gnuplot script cannot hold");
	dir_check("--plot", dir);
	char gp[4096];
	find_gnuplot(gp, sizeof(gp));
}

/* The script: the settings and plot command in body, once per output, PNG then SVG. */
struct script {
	const char *body, *dir, *name, *size;
};

static int render_script(FILE *f, const void *arg)
{
	const struct script *s = arg;
	char file[64];
	fprintf(f, "set terminal pngcairo noenhanced size %s font 'sans,10'\nset output ", s->size);
	snprintf(file, sizeof(file), "%s.png", s->name);
	gp_path(f, s->dir, file);
	fprintf(f, "\n%sset terminal svg noenhanced size %s font 'sans,10'\nset output ", s->body,
	        s->size);
	snprintf(file, sizeof(file), "%s.svg", s->name);
	gp_path(f, s->dir, file);
	fprintf(f, "\n%s", s->body);
	return 0;
}

/* Writes dir/name.gp for body and runs gnuplot on it; frees body. */
static int plot_script(const char *gp, const char *dir, const char *name, char *body,
                       const char *size)
{
	char script[4096];
	/* gnuplot reads its argument as it reads a quoted name: "./" for a relative one */
	snprintf(script, sizeof(script), "%s%s/%s.gp", *dir == '/' ? "" : "./", dir, name);
	int r = file_write(script, render_script,
	                   &(struct script){.body = body, .dir = dir, .name = name, .size = size});
	free(body);
	return r < 0 ? r : run_gnuplot(gp, script);
}

struct clock_rows {
	const struct probe *p;
	const int *order;
	int n;
};

static int render_clocks(FILE *f, const void *arg)
{
	const struct clock_rows *rows = arg;
	for (int k = 0; k < rows->n; k++) {
		const struct clock_result *c = &rows->p->clocks[rows->order[k]];
		int colour = strcmp(c->path, "vdso") == 0          ? 1
		             : strcmp(c->path, "syscall") == 0     ? 2
		             : strcmp(c->path, "instruction") == 0 ? 3
		                                                   : 4;
		fprintf(f, "\"%s\" %.2f %d\n", c->id, c->cost_median, colour);
	}
	return 0;
}

int probe_plot(const struct probe *p, const char *dir)
{
	char gp[4096], file[4096], name[256];
	find_gnuplot(gp, sizeof(gp));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	const struct sleep_matrix *x = &p->sleeps;
	int iv = x->nintervals > 1 ? 1 : 0; /* 100 us */
	char b[32];

	char *body = NULL;
	size_t body_len = 0;
	FILE *f = open_memstream(&body, &body_len);
	if (!f)
		return -errno;
	fprintf(f, "set title 'Sleep overshoot past the deadline, %s sleeps (punctual probe)'\n",
	        fmt_ns(b, sizeof(b), (double)x->intervals[iv]));
	fprintf(f, "set xlabel 'overshoot (us, log scale)'\nset ylabel 'fraction of sleeps'\n");
	fprintf(f, "set logscale x\nset xrange [0.01:*]\nset yrange [0:1]\nset grid\n");
	fprintf(f, "set key outside right top box\n");
	fprintf(f, "plot ");
	int first = 1;
	for (int m = 0; m < x->nm; m++) {
		if (x->unsupported[m])
			continue;
		for (int s = 0; s < x->nslacks; s++) {
			snprintf(name, sizeof(name), "overshoot_%s_slack%lld.dat", x->m[m]->id,
			         (long long)x->slacks[s]);
			for (char *c = name; *c; c++)
				if (*c == ':')
					*c = '_';
			snprintf(file, sizeof(file), "%s/%s", dir, name);
			int r = file_write(file, render_cdf,
			                   &sleep_matrix_cell(x, iv, s, m)->overshoot);
			if (r < 0) {
				fclose(f);
				free(body);
				return r;
			}
			/* a colour per mechanism; the slack values solid, then dashed */
			static const char *colour[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44",
			                               "#66ccee", "#aa3377", "#bbbbbb", "#000000"};
			fputs(first ? "" : ", ", f);
			gp_path(f, dir, name);
			fprintf(f,
			        " using 1:2 with steps lw 2 lc rgb '%s' dt %d title '%s, slack %s'",
			        colour[m % 8], 1 + s, x->m[m]->id,
			        fmt_ns(b, sizeof(b), (double)x->slacks[s]));
			first = 0;
		}
	}
	fprintf(f, "\n");
	int r = file_close(f);
	if (r < 0) {
		free(body);
		return r;
	}
	r = plot_script(gp, dir, "overshoot_cdf", body, "1000,560");
	if (r < 0)
		return r;

	/* cheapest at the top; the colour says what serves the read */
	int order[64], n = p->nclocks < 64 ? p->nclocks : 64;
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++)
		for (int k = i;
		     k > 0 && p->clocks[order[k]].cost_median > p->clocks[order[k - 1]].cost_median;
		     k--) {
			int t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	snprintf(file, sizeof(file), "%s/clock_cost.dat", dir);
	r = file_write(file, render_clocks, &(struct clock_rows){.p = p, .order = order, .n = n});
	if (r < 0)
		return r;
	f = open_memstream(&body, &body_len);
	if (!f)
		return -errno;
	fprintf(f, "set title 'What one clock read costs here (median, punctual probe)'\n");
	fprintf(f, "set xlabel 'ns per read (log scale)'\nset logscale x\nset xrange [1:*]\n");
	fprintf(f, "set yrange [-0.7:%d.7]\nset ytics font 'sans,9'\nset grid xtics\n", n - 1);
	fprintf(f, "set style fill solid 0.8\nset key top right box\n");
	fprintf(f, "set linetype 1 lc rgb '#4477aa'\nset linetype 2 lc rgb '#ee6677'\n"
	           "set linetype 3 lc rgb '#228833'\nset linetype 4 lc rgb '#bbbbbb'\n");
	fputs("plot ", f);
	gp_path(f, dir, "clock_cost.dat");
	fputs(" using 2:0:(1):2:($0-0.35):($0+0.35):3:ytic(1) "
	      "with boxxyerrorbars lc variable notitle, "
	      "NaN with boxes lt 1 title 'vDSO', NaN with boxes lt 2 title 'system call', "
	      "NaN with boxes lt 3 title 'instruction'\n",
	      f);
	r = file_close(f);
	if (r < 0) {
		free(body);
		return r;
	}
	return plot_script(gp, dir, "clock_cost", body, "900,720");
}
