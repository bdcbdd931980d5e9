/* pipeline.c - a workload in pipeline stages, and their schedule (pipeline.h). */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"

int pipe_split(const struct workload *w, const int64_t *macs, int64_t stages, size_t *first)
{
	/* Segments: a layer outside blocks, or the first of a block's instance, starts one. */
	size_t units = 0;
	double total = 0;
	for (size_t i = 0; i < w->n; i++) {
		units += w->layers[i].sub <= 0;
		total += (double)macs[i];
	}
	if ((int64_t)units < stages)
		return -1;
	first[0] = 0;
	first[stages] = w->n;
	/* Stage k ends at the segment start nearest k/P of the MACs (of the segments when none has MACs), leaving one a stage. */
	double before = 0;
	int64_t k = 1;
	size_t unit = 0;
	for (size_t i = 0; i < w->n && k < stages; i++) {
		if (w->layers[i].sub <= 0 && i > first[k - 1]) {
			double target = (total > 0 ? total : (double)units) * (double)k / (double)stages;
			double here = total > 0 ? before : (double)unit;
			/* The next segment start, and how far past the target it would be. */
			size_t j = i + 1;
			double next = here + (total > 0 ? (double)macs[i] : 1);
			while (j < w->n && w->layers[j].sub > 0)
				next += total > 0 ? (double)macs[j++] : 0;
			bool must = (int64_t)(units - unit) == stages - k;      /* as many segments left as stages */
			if (must || (here >= target) || (next > target && target - here <= next - target)) {
				first[k++] = i;
				i--;                    /* this segment starts stage k: count it there */
				continue;
			}
		}
		unit += w->layers[i].sub <= 0;
		before += (double)macs[i];
	}
	return 0;
}

int pipe_stage(const struct workload *w, size_t a, size_t b, struct workload *out, struct err *e)
{
	*out = *w;
	out->files = NULL;
	out->nfiles = 0;
	out->n = out->cap = b - a;
	if (!(out->layers = malloc((b - a ? b - a : 1) * sizeof *out->layers)))
		return err_nomem(e, NULL);
	for (size_t i = a; i < b; i++) {
		struct layer *l = &out->layers[i - a];
		*l = w->layers[i];
		for (int j = 0; j < l->ninputs; j++)
			l->inputs[j] = l->inputs[j] == WORKLOAD_NEW_INPUT || (size_t)l->inputs[j] < a ? WORKLOAD_NEW_INPUT :
				       (int32_t)((size_t)l->inputs[j] - a);
	}
	return 0;
}

void pipe_stage_release(struct workload *s)
{
	free(s->layers);
	s->layers = NULL;
}

void pipe_result_release(struct pipe_result *r)
{
	free(r->busy);
	free(r->bubble);
	free(r->kept);
	memset(r, 0, sizeof *r);
}

bool pipe_task(int schedule, int64_t s, int64_t stages, int64_t mbs, bool train, int64_t idx, int64_t *m)
{
	if (!train || (schedule == PIPE_GPIPE && idx < mbs)) {
		*m = idx;
		return false;
	}
	if (schedule == PIPE_GPIPE) {
		*m = idx - mbs;
		return true;
	}
	int64_t warm = stages - 1 - s < mbs ? stages - 1 - s : mbs, left = mbs - warm, j = idx - warm;
	if (idx < warm) {
		*m = idx;
		return false;
	}
	if (j < 2 * left) {
		*m = j % 2 ? j / 2 : warm + j / 2;
		return j % 2;
	}
	*m = j - left;
	return true;
}

int pipe_schedule(int schedule, int64_t stages, int64_t mbs, bool train, const struct pipe_times *t,
		  struct pipe_result *r, struct err *e)
{
	size_t cells = (size_t)(stages * mbs);
	int64_t per = train ? 2 * mbs : mbs, done = 0, total = stages * per;
	int64_t *fend = malloc(cells * sizeof *fend), *bend = malloc(cells * sizeof *bend);
	int64_t *next = calloc((size_t)stages, sizeof *next), *free_at = calloc((size_t)stages, sizeof *free_at);
	int64_t *live = calloc((size_t)stages, sizeof *live);
	memset(r, 0, sizeof *r);
	r->busy = calloc((size_t)stages, sizeof *r->busy);
	r->bubble = calloc((size_t)stages, sizeof *r->bubble);
	r->kept = calloc((size_t)stages, sizeof *r->kept);
	int rc = -1;
	if (!fend || !bend || !next || !free_at || !live || !r->busy || !r->bubble || !r->kept) {
		err_nomem(e, NULL);
		goto out;
	}
	for (size_t c = 0; c < cells; c++)
		fend[c] = bend[c] = -1;
	/* Sweeps up the stages (forwards flow up) and down (backwards flow down), each stage as far as its inputs allow. */
	while (done < total) {
		int64_t before = done;
		for (int dir = 0; dir < 2; dir++)
			for (int64_t q = 0; q < stages; q++) {
				int64_t s = dir ? stages - 1 - q : q;
				while (next[s] < per) {
					int64_t m, ready;
					bool back = pipe_task(schedule, s, stages, mbs, train, next[s], &m);
					if (!back) {
						if (s > 0 && fend[(s - 1) * mbs + m] < 0)
							break;
						ready = s > 0 ? fend[(s - 1) * mbs + m] + t[s - 1].send : 0;
					} else if (s + 1 < stages) {
						if (bend[(s + 1) * mbs + m] < 0)
							break;
						ready = bend[(s + 1) * mbs + m] + t[s].send;
					} else {
						ready = fend[s * mbs + m];
					}
					int64_t start = ready > free_at[s] ? ready : free_at[s];
					free_at[s] = start + (back ? t[s].b : t[s].f);
					(back ? bend : fend)[s * mbs + m] = free_at[s];
					live[s] += back ? -1 : 1;
					if (live[s] > r->kept[s])
						r->kept[s] = live[s];
					if (!train)
						live[s] = 0;
					next[s]++;
					done++;
				}
			}
		SIM_ASSERT(done > before);      /* every order above has a task ready */
	}
	for (int64_t s = 0; s < stages; s++) {
		int64_t end = free_at[s] + (train ? t[s].update : 0);
		if (end > r->step)
			r->step = end;
		r->busy[s] = mbs * (t[s].f + (train ? t[s].b : 0)) + (train ? t[s].update : 0);
	}
	for (int64_t s = 0; s < stages; s++)
		r->bubble[s] = r->step - r->busy[s];
	rc = 0;
out:
	free(fend);
	free(bend);
	free(next);
	free(free_at);
	free(live);
	if (rc < 0)
		pipe_result_release(r);
	return rc;
}
