/* fold.c - a repeated block run as a few of its instances (fold.h). */
#include "fold.h"

#include <stdlib.h>
#include <string.h>

/* A block as the loader expanded it: layers [start, start + size * instances) of one item. */
struct span {
	size_t start, size;
	int64_t instances;
};

/* The block that starts at layer i (its layers have sub >= 0 and one item): its span. */
static struct span span_at(const struct workload *w, size_t i)
{
	struct span s = { i, 0, 0 };
	size_t end = i;
	while (end < w->n && w->layers[end].sub >= 0 && w->layers[end].item == w->layers[i].item)
		end++;
	while (i + s.size < end && (s.size == 0 || w->layers[i + s.size].sub != 0))
		s.size++;
	s.instances = (int64_t)((end - i) / s.size);
	return s;
}

/* Whether instances 2 on of s read as instance 1 does, one instance on (fold.h). */
static bool alike(const struct workload *w, const struct span *s)
{
	for (int64_t k = 2; k < s->instances; k++)
		for (size_t u = 0; u < s->size; u++) {
			const struct layer *one = &w->layers[s->start + s->size + u];
			const struct layer *l = &w->layers[s->start + (size_t)k * s->size + u];
			if (l->ninputs != one->ninputs)
				return false;
			for (int j = 0; j < l->ninputs; j++) {
				int64_t want = one->inputs[j];
				if (want != WORKLOAD_NEW_INPUT && (size_t)want >= s->start)
					want += (k - 1) * (int64_t)s->size;
				if (l->inputs[j] != want)
					return false;
			}
		}
	return true;
}

void fold_release(struct fold *f)
{
	free(f->w.layers);
	free(f->to);
	free(f->blocks);
	memset(f, 0, sizeof *f);
}

int fold_workload(const struct workload *w, int64_t keep, struct fold *f, struct err *e)
{
	memset(f, 0, sizeof *f);
	f->w = *w;
	f->w.files = NULL;              /* operands from files are the functional model's, which never folds */
	f->w.nfiles = 0;
	f->w.layers = calloc(w->n ? w->n : 1, sizeof *f->w.layers);
	f->to = calloc(w->n ? w->n : 1, sizeof *f->to);
	f->blocks = calloc(w->n ? w->n : 1, sizeof *f->blocks);
	f->n = w->n;
	f->keep = keep;
	if (!f->w.layers || !f->to || !f->blocks) {
		fold_release(f);
		return err_nomem(e, NULL);
	}
	size_t n = 0;
	for (size_t i = 0; i < w->n;) {
		struct span s = w->layers[i].sub >= 0 ? span_at(w, i) : (struct span){ i, 1, 1 };
		bool fold = s.instances >= 2 * keep && alike(w, &s);
		for (int64_t k = 0; k < s.instances; k++) {
			bool kept = !fold || k < keep - 1 || k == s.instances - 1;
			if (fold && k == keep - 2)
				f->blocks[f->nblocks] = (struct fold_block){ n, n - s.size, s.size, s.instances };
			for (size_t u = 0; u < s.size; u++) {
				size_t old = s.start + (size_t)k * s.size + u;
				if (!kept) {
					f->to[old] = f->blocks[f->nblocks].rep + u;
					continue;
				}
				struct layer *l = &f->w.layers[n];
				*l = w->layers[old];
				for (int j = 0; j < l->ninputs; j++)
					if (l->inputs[j] != WORKLOAD_NEW_INPUT)
						l->inputs[j] = (int32_t)f->to[l->inputs[j]];
				f->to[old] = n++;
			}
		}
		f->nblocks += fold;
		i = s.start + s.size * (size_t)s.instances;
	}
	f->w.n = f->w.cap = n;
	if (!f->nblocks) {
		fold_release(f);
		return 0;
	}
	return 1;
}

/* The row of w's (layer, phase) in rows, through index. */
size_t fold_row(const struct fold *f, const size_t *index, size_t layer, int phase)
{
	return index[f->to[layer] * PH_N + (size_t)phase];
}

int fold_index(const struct fold *f, const struct oprow *rows, size_t nrows, size_t **index, struct err *e)
{
	size_t cells = f->w.n * PH_N;
	if (!(*index = malloc((cells ? cells : 1) * sizeof **index)))
		return err_nomem(e, NULL);
	for (size_t c = 0; c < cells; c++)
		(*index)[c] = SIZE_MAX;
	for (size_t r = 0; r < nrows; r++)
		(*index)[rows ? rows[r].layer * PH_N + (size_t)rows[r].phase : r * PH_N] = r;
	return 0;
}

/* The cycles of phase ph of the instance whose first layer (in w) is first. */
static int64_t instance_cycles(const size_t *index, size_t first, size_t size, int ph, const int64_t *cycles)
{
	int64_t sum = 0;
	for (size_t u = 0; u < size; u++) {
		size_t r = index[(first + u) * PH_N + (size_t)ph];
		if (r != SIZE_MAX)
			sum += cycles[r];
	}
	return sum;
}

bool fold_steady(const struct fold *f, const size_t *index, const int64_t *cycles, double tol)
{
	for (size_t b = 0; b < f->nblocks; b++)
		for (int ph = 0; ph < PH_N; ph++) {
			const struct fold_block *k = &f->blocks[b];
			int64_t rep = instance_cycles(index, k->rep, k->size, ph, cycles);
			int64_t prev = instance_cycles(index, k->prev, k->size, ph, cycles);
			int64_t most = rep > prev ? rep : prev;
			if ((double)(rep > prev ? rep - prev : prev - rep) > tol * (double)most)
				return false;
		}
	return true;
}
