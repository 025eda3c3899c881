/* SPDX-License-Identifier: MIT */
/*
 * compare.c: `punctual probe --compare BEFORE AFTER`: two probe reports side by side, each
 * pair of figures given a verdict that accounts for noise. A build without jansson parses
 * the same options, then says so and exits 1.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/compare/compare.h"
#include "probe/probe.h"
#include "util/diag.h"
#include "util/opts.h"
#include "util/out.h"

/* ---- the command ------------------------------------------------------------------ */

static const char usage[] =
        "usage: punctual probe --compare BEFORE.json AFTER.json [--json]\n"
        "                      [--fail-on-worse]\n"
        "\n"
        "Two reports of `punctual probe --json` (a file, or - for standard input) side by\n"
        "side: the system facts that differ, then every figure both have with the ratio\n"
        "AFTER/BEFORE and a verdict (better, worse, same) when the difference exceeds\n"
        "both reports' noise (man punctual: the rules); sample counts and other\n"
        "processes' CPU are shown as context, never judged. Figures only one report has,\n"
        "and quantiles a report has too few samples for, are skipped, and listed.\n"
        "\n"
        "  -j, --json           JSON\n"
        "  -w, --fail-on-worse  exit 3 when a figure got worse (for CI)\n"
        "  -h, --help           this text\n";

int probe_compare(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"compare", no_argument, NULL, 'C'},
	        {"json", no_argument, NULL, 'j'},
	        {"fail-on-worse", no_argument, NULL, 'w'},
	        {"help", no_argument, NULL, 'h'},
	        {0},
	};
	bool json = false, fail_worse = false;
	int c;
	while ((c = next_opt(argc, argv, ":Cjwh", opts, usage)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'w')
			fail_worse = true;
	}
	if (argc - optind != 2)
		usage_error("--compare needs two reports, BEFORE.json AFTER.json (- for standard "
		            "input)");
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		usage_error("--compare: only one report can come from standard input");
#ifndef PN_HAVE_JANSSON
	(void)json;
	(void)fail_worse;
	die(1, "--compare needs punctual built with jansson (Debian: libjansson-dev)");
#else
	static struct report a, b;
	compare_load(&a, argv[optind]);
	compare_load(&b, argv[optind + 1]);
	compare_figures(&a, &b);

	size_t max = a.n + b.n + 1, ns = 0;
	struct row *rows = calloc(max, sizeof(*rows));
	struct skip *sk = calloc(max, sizeof(*sk));
	struct fact fa[64];
	if (!rows || !sk)
		die(1, "out of memory");
	size_t nf = compare_facts(&a, &b, fa, 64);

	int count[5] = {0};
	size_t nr = compare_join(&a, &b, rows, sk, &ns, count);
	if (!nr)
		die(EXIT_USAGE, "--compare %s %s: the reports have no figure in common", a.file,
		    b.file);
	struct comparison cmp = {
	        .fa = fa, .nf = nf, .rows = rows, .nr = nr, .sk = sk, .ns = ns, .count = count};
	compare_load_of(&a, &b, &cmp.load);
	cmp.nh = compare_headlines(rows, nr, cmp.head);

	out_open();
	if (json)
		compare_json(&a, &b, &cmp);
	else
		compare_text(&a, &b, &cmp);
	out_commit();
	free(rows);
	free(sk);
	compare_free(&a);
	compare_free(&b);
	return fail_worse && count[V_WORSE] ? 3 : 0;
#endif
}
