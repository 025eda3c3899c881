/* SPDX-License-Identifier: MIT */
/*
 * plot.c: `punctual probe --plot DIR`: the overshoot CDF, the clock costs and what
 * precision costs, as PNG and SVG through gnuplot, with the data and a script to restyle
 * them by hand. gnuplot itself opens nothing in DIR: it reads its script and the data on
 * its stdin and writes the chart on its stdout, so a link planted in DIR redirects nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/probe.h"
#include "util/diag.h"
#include "util/encode.h"
#include "util/files.h"
#include "util/out.h"

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

/* dir/name as a gnuplot string: single quotes, a quote doubled, and "./" before a relative
 * path so that no name reads as a special file ('<cmd', '|cmd', '-'). */
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
	/* a line break would end the gnuplot command */
	for (const unsigned char *c = (const unsigned char *)dir; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			usage_error("--plot: the directory name has a control character, which a "
			            "gnuplot script cannot hold");
	dir_check("--plot", dir);
	char gp[4096];
	find_gnuplot(gp, sizeof(gp));
}

/* One data set of a chart: saved in DIR, and inline in the script gnuplot runs. */
struct dataset {
	char name[96];
	int (*render)(FILE *f, const void *arg);
	const void *arg;
	char style[192]; /* what follows the data set in the plot command */
};

/* A chart: the settings before its plot command, the data sets, and what ends it. */
struct chart {
	const char *name, *size; /* the files' stem; gnuplot's size in pixels */
	const char *dir;         /* DIR as given, for the saved script's paths */
	char *head;
	const char *tail;
	struct dataset set[PROBE_MECHS * PROBE_SLACKS];
	int nsets;
};

/* The settings and the plot command: data set i by its file (the saved script), or as
 * the datablock $di (the script gnuplot runs). */
static void chart_body(FILE *f, const struct chart *c, bool inline_data)
{
	fputs(c->head, f);
	fputs("plot ", f);
	for (int i = 0; i < c->nsets; i++) {
		fputs(i ? ", " : "", f);
		if (inline_data)
			fprintf(f, "$d%d", i);
		else
			gp_path(f, c->dir, c->set[i].name);
		fputs(c->set[i].style, f);
	}
	fprintf(f, "%s\n", c->tail);
}

/* The outputs, PNG then SVG: gnuplot's terminal and the file's extension. */
static const char *const terminals[][2] = {{"pngcairo", "png"}, {"svg", "svg"}};

/* DIR/name.gp, for restyling by hand: it reads the data files and writes both outputs. */
static int render_saved(FILE *f, const void *arg)
{
	const struct chart *c = arg;
	for (size_t t = 0; t < sizeof(terminals) / sizeof(terminals[0]); t++) {
		char file[128];
		fprintf(f, "set terminal %s noenhanced size %s font 'sans,10'\nset output ",
		        terminals[t][0], c->size);
		snprintf(file, sizeof(file), "%s.%s", c->name, terminals[t][1]);
		gp_path(f, c->dir, file);
		fputc('\n', f);
		chart_body(f, c, false);
	}
	return 0;
}

/* The script gnuplot runs for one output: the data inline, the chart on its stdout. */
static int render_run(FILE *f, const struct chart *c, const char *terminal)
{
	fprintf(f, "set terminal %s noenhanced size %s font 'sans,10'\nset output\n", terminal,
	        c->size);
	for (int i = 0; i < c->nsets; i++) {
		fprintf(f, "$d%d << EOD\n", i); /* no data line is "EOD" */
		int r = c->set[i].render(f, c->set[i].arg);
		if (r < 0)
			return r;
		fputs("EOD\n", f);
	}
	chart_body(f, c, true);
	return 0;
}

/* gnuplot's first line of complaint, said on stderr once it failed (its warnings while
 * it succeeds are no concern of the user's). */
static void gnuplot_said(int err)
{
	char buf[512], line[256];
	ssize_t n = pread(err, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *p = buf;
	while (*p == '\n' || *p == ' ')
		p++;
	p[strcspn(p, "\n")] = '\0';
	if (*p)
		fprintf(stderr, "punctual %s: gnuplot: %s\n", tool_cmd,
		        text_safe(line, sizeof(line), p));
}

/* gnuplot reading script on its stdin, writing output: 0, or -EIO (its complaint said). */
static int run_gnuplot(const char *gp, int script, int output)
{
	int err = memfd_create("punctual-gnuplot-err", MFD_CLOEXEC);
	if (err < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(err);
		return e;
	}
	if (pid == 0) {
		/* copies above 2 first, so that no dup2 clobbers another's source */
		int s = fcntl(script, F_DUPFD_CLOEXEC, 3), o = fcntl(output, F_DUPFD_CLOEXEC, 3);
		int e = fcntl(err, F_DUPFD_CLOEXEC, 3);
		if (s < 0 || o < 0 || e < 0 || dup2(s, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		execl(gp, "gnuplot", (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			int e = -errno;
			close(err);
			return e;
		}
	bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!ok)
		gnuplot_said(err);
	close(err);
	return ok ? 0 : -EIO;
}

/* Copies the memory file from to fd, every write checked: gnuplot exits 0 when a full
 * disk cuts its output short. 0 or -errno; -EIO when gnuplot wrote nothing. */
static int copy_out(int from, int fd)
{
	char buf[65536];
	ssize_t n;
	off_t total = 0;
	if (lseek(from, 0, SEEK_SET) != 0)
		return -errno;
	while ((n = read(from, buf, sizeof(buf))) > 0) {
		total += n;
		for (ssize_t done = 0, w; done < n; done += w)
			if ((w = write(fd, buf + done, (size_t)(n - done))) < 0)
				return -errno;
	}
	return n < 0 ? -errno : total ? 0 : -EIO;
}

/* One output of c, gnuplot writing into memory and the tool into DIR/file, staged in b.
 * 0 or -errno. */
static int chart_output(const char *gp, struct file_batch *b, int dir, const char *file,
                        const struct chart *c, const char *terminal)
{
	int script = memfd_create("punctual-plot", MFD_CLOEXEC);
	int chart = memfd_create("punctual-chart", MFD_CLOEXEC);
	int fd = script < 0 ? -1 : dup(script);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	int r = f && chart >= 0 ? 0 : -errno;
	if (!f && fd >= 0)
		close(fd);
	if (f) {
		r = render_run(f, c, terminal);
		int e = file_close(f);
		if (!r)
			r = e;
	}
	if (!r && lseek(script, 0, SEEK_SET) != 0)
		r = -errno;
	if (!r)
		r = run_gnuplot(gp, script, chart);
	struct file_out *o = NULL;
	if (!r)
		o = file_stage_open(b, dir, file, &r);
	if (o)
		r = file_stage_end(b, copy_out(chart, o->fd));
	if (script >= 0)
		close(script);
	if (chart >= 0)
		close(chart);
	return r;
}

/* c's data files, script and outputs, staged in b; what names the file that failed. */
static int chart_write(const char *gp, struct file_batch *b, int dir, const struct chart *c,
                       char *what, size_t n)
{
	for (int i = 0; i < c->nsets; i++) {
		snprintf(what, n, "%s", c->set[i].name);
		int r = file_stage_at(b, dir, c->set[i].name, c->set[i].render, c->set[i].arg);
		if (r < 0)
			return r;
	}
	snprintf(what, n, "%s.gp", c->name);
	int r = file_stage_at(b, dir, what, render_saved, c);
	for (size_t t = 0; !r && t < sizeof(terminals) / sizeof(terminals[0]); t++) {
		snprintf(what, n, "%s.%s", c->name, terminals[t][1]);
		r = chart_output(gp, b, dir, what, c, terminals[t][0]);
	}
	if (!r)
		*what = '\0';
	return r;
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

/* The overshoot CDF chart into c; 0 or -errno. */
static int cdf_chart(const struct probe *p, struct chart *c)
{
	const struct sleep_matrix *x = &p->sleeps;
	int iv = x->nintervals > 1 ? 1 : 0; /* 100 us */
	char b[32];
	size_t len;
	FILE *f = open_memstream(&c->head, &len);
	if (!f)
		return -errno;
	fprintf(f, "set title 'Sleep overshoot past the deadline, %s sleeps (punctual probe)'\n",
	        fmt_ns(b, sizeof(b), (double)x->intervals[iv]));
	fprintf(f, "set xlabel 'overshoot (us, log scale)'\nset ylabel 'fraction of sleeps'\n");
	fprintf(f, "set logscale x\nset xrange [0.01:*]\nset yrange [0:1]\nset grid\n");
	fprintf(f, "set key outside right top box\n");
	int r = file_close(f);
	if (r < 0)
		return r;
	c->name = "overshoot_cdf";
	c->size = "1000,560";
	c->tail = "";
	/* a colour per mechanism; the slack values solid, then dashed */
	static const char *colour[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44",
	                               "#66ccee", "#aa3377", "#bbbbbb", "#000000"};
	for (int m = 0; m < x->nm; m++) {
		if (x->unsupported[m])
			continue;
		for (int s = 0; s < x->nslacks; s++) {
			if (c->nsets == (int)(sizeof(c->set) / sizeof(c->set[0])))
				return -E2BIG;
			struct dataset *d = &c->set[c->nsets++];
			snprintf(d->name, sizeof(d->name), "overshoot_%s_slack%lld.dat",
			         x->m[m]->id, (long long)x->slacks[s]);
			for (char *n = d->name; *n; n++)
				if (*n == ':')
					*n = '_';
			d->render = render_cdf;
			d->arg = &sleep_matrix_cell(x, iv, s, m)->late;
			snprintf(
			        d->style, sizeof(d->style),
			        " using 1:2 with steps lw 2 lc rgb '%s' dt %d title '%s, slack %s'",
			        colour[m % 8], 1 + s, x->m[m]->id,
			        fmt_ns(b, sizeof(b), (double)x->slacks[s]));
		}
	}
	return 0;
}

/* The clock-cost chart into c; 0 or -errno. */
static int clock_chart(const struct clock_rows *rows, struct chart *c)
{
	size_t len;
	FILE *f = open_memstream(&c->head, &len);
	if (!f)
		return -errno;
	fprintf(f, "set title 'What one clock read costs here (median, punctual probe)'\n");
	fprintf(f, "set xlabel 'ns per read (log scale)'\nset logscale x\nset xrange [1:*]\n");
	fprintf(f, "set yrange [-0.7:%d.7]\nset ytics font 'sans,9'\nset grid xtics\n",
	        rows->n - 1);
	fprintf(f, "set style fill solid 0.8\nset key top right box\n");
	fprintf(f, "set linetype 1 lc rgb '#4477aa'\nset linetype 2 lc rgb '#ee6677'\n"
	           "set linetype 3 lc rgb '#228833'\nset linetype 4 lc rgb '#bbbbbb'\n");
	int r = file_close(f);
	if (r < 0)
		return r;
	c->name = "clock_cost";
	c->size = "900,720";
	c->tail = ", NaN with boxes lt 1 title 'vDSO', NaN with boxes lt 2 title 'system call', "
	          "NaN with boxes lt 3 title 'instruction'";
	struct dataset *d = &c->set[c->nsets++];
	snprintf(d->name, sizeof(d->name), "clock_cost.dat");
	d->render = render_clocks;
	d->arg = rows;
	snprintf(d->style, sizeof(d->style), "%s",
	         " using 2:0:(1):2:($0-0.35):($0+0.35):3:ytic(1) "
	         "with boxxyerrorbars lc variable notitle");
	return 0;
}

struct frontier_rows {
	const struct frontier *f;
	int len;
};

/* A length's variants: CPU %, p99 lateness in us, name. */
static int render_frontier(FILE *f, const void *arg)
{
	const struct frontier_rows *r = arg;
	char name[32];
	for (int v = 0; v < r->f->c.nvar; v++) {
		const struct frontier_cell *c = &r->f->cell[r->len][v];
		if (pn_hist_count(&c->late) < FRONTIER_MIN_P99)
			continue;
		double us = (double)pn_hist_percentile(&c->late, 99) / 1e3;
		fprintf(f, "%.2f %.4f \"%s\"\n", frontier_cpu_pct(c), us < 0.01 ? 0.01 : us,
		        frontier_name(&r->f->c.var[v], name, sizeof(name)));
	}
	return 0;
}

/* The frontier chart, a colour per sleep length, into c; 0 or -errno. */
static int frontier_chart(const struct probe *p, struct frontier_rows *rows, struct chart *c)
{
	const struct frontier *fr = p->frontier.f;
	size_t len;
	FILE *f = open_memstream(&c->head, &len);
	if (!f)
		return -errno;
	fprintf(f, "set title 'What precision costs here: p99 lateness against CPU (punctual "
	           "probe)'\n");
	fprintf(f,
	        "set xlabel 'CPU (%% of the sleeps)'\nset ylabel 'p99 lateness (us, log scale)'\n");
	fprintf(f, "set logscale y\nset xrange [0:105]\nset grid\nset key top right box\n");
	int r = file_close(f);
	if (r < 0)
		return r;
	c->name = "precision_cost";
	c->size = "1000,620";
	c->tail = "";
	static const char *colour[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#aa3377"};
	char b[32];
	for (int l = 0; l < fr->c.nlen && l < 5; l++) {
		bool any = false; /* a length without a p99 has no points */
		for (int v = 0; v < fr->c.nvar; v++)
			any |= pn_hist_count(&fr->cell[l][v].late) >= FRONTIER_MIN_P99;
		if (!any)
			continue;
		struct dataset *d = &c->set[c->nsets++];
		rows[l] = (struct frontier_rows){fr, l};
		snprintf(d->name, sizeof(d->name), "precision_cost_%lldus.dat",
		         (long long)(fr->c.len[l] / 1000));
		d->render = render_frontier;
		d->arg = &rows[l];
		snprintf(d->style, sizeof(d->style),
		         " using 1:2:3 with labels point pt 7 ps 1.2 lc rgb '%s' offset char "
		         "0.8,0.4 "
		         "font 'sans,8' title '%s sleeps'",
		         colour[l], fmt_ns(b, sizeof(b), (double)fr->c.len[l]));
	}
	return 0;
}

int probe_plot(const struct probe *p, const char *dir, char *what, size_t n)
{
	char gp[4096];
	find_gnuplot(gp, sizeof(gp));
	*what = '\0';
	int dfd = dir_open(dir);
	if (dfd < 0)
		return dfd;

	/* cheapest at the top; the colour says what serves the read */
	int order[64], nclocks = p->nclocks < 64 ? p->nclocks : 64;
	for (int i = 0; i < nclocks; i++)
		order[i] = i;
	for (int i = 1; i < nclocks; i++)
		for (int k = i;
		     k > 0 && p->clocks[order[k]].cost_median > p->clocks[order[k - 1]].cost_median;
		     k--) {
			int t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	struct clock_rows rows = {.p = p, .order = order, .n = nclocks};

	/* every file staged, then all renamed: a failure leaves none of them */
	struct chart cdf = {.dir = dir}, clocks = {.dir = dir}, cost = {.dir = dir};
	struct frontier_rows frows[5];
	struct file_batch b = {0};
	int r = cdf_chart(p, &cdf);
	if (!r)
		r = chart_write(gp, &b, dfd, &cdf, what, n);
	if (!r)
		r = clock_chart(&rows, &clocks);
	if (!r)
		r = chart_write(gp, &b, dfd, &clocks, what, n);
	if (!r && p->frontier.f)
		r = frontier_chart(p, frows, &cost);
	if (!r && p->frontier.f)
		r = chart_write(gp, &b, dfd, &cost, what, n);
	if (!r) {
		snprintf(what, n, "the charts' files");
		r = file_batch_commit(&b);
		if (!r)
			*what = '\0';
	}
	file_batch_discard(&b);
	free(cdf.head);
	free(clocks.head);
	free(cost.head);
	close(dfd);
	return r;
}
