/* SPDX-License-Identifier: MIT */
/* probe_reco.c: `punctual probe`'s recommendations: each section adds its own, quoting a
 * gain it measured; rendered after every section, as text and --json. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "probe/probe.h"
#include "util/json.h"
#include "util/out.h"

struct probe_reco *probe_reco_add(struct probe *p, const char *kind, const char *command,
                                  const char *fmt, ...)
{
	if (p->nrecos == PROBE_RECOS)
		return NULL;
	struct probe_reco *r = &p->recos[p->nrecos++];
	*r = (struct probe_reco){.kind = kind};
	snprintf(r->command, sizeof(r->command), "%s", command);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	return r;
}

struct probe_reco *probe_reco_next(struct probe *p)
{
	return p->nrecos < PROBE_RECOS ? &p->recos[p->nrecos] : NULL;
}

void probe_reco_measured(struct probe_reco *r, const char *figure, double before, double after)
{
	if (!r)
		return;
	r->measured = true;
	r->figure = figure;
	r->before = before;
	r->after = after;
}

void probe_reco_text(const struct probe *p)
{
	fprintf(out, "\nrecommendations\n");
	if (!p->nrecos)
		fprintf(out, "  none: nothing measured here calls for a change\n");
	for (int i = 0; i < p->nrecos; i++) {
		char first[16];
		snprintf(first, sizeof(first), "  %d. ", i + 1);
		out_wrap(out, first, "     ", p->recos[i].text);
	}
}

void probe_reco_json(struct json *j, const struct probe *p)
{
	json_arr(j, "recommendations");
	for (int i = 0; i < p->nrecos; i++) {
		const struct probe_reco *r = &p->recos[i];
		json_obj(j, NULL);
		json_str(j, "kind", r->kind);
		if (*r->command)
			json_str(j, "command", r->command);
		if (r->measured) {
			json_obj(j, "effect");
			json_str(j, "figure", r->figure);
			json_num(j, "before", r->before);
			json_num(j, "after", r->after);
			json_obj_end(j);
		}
		json_str(j, "text", r->text);
		json_obj_end(j);
	}
	json_arr_end(j);
}
