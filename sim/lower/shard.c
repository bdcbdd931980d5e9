/*
 * shard.c - the mesh's keys and where its axes run on the pod (see shard.h).
 */
#include "shard.h"

#include <stddef.h>
#include <stdio.h>

const char *const pipe_schedule_names[] = { "1f1b", "gpipe", NULL };

#define F(x) offsetof(struct mesh_params, x)
const struct cfg_key mesh_keys[] = {
	{ "data", CFG_INT, F(data), "chips", "1", 1, POD_MAX_CHIPS, NULL,
	  "data parallelism: the batch split this many ways, every chip holding every weight" },
	{ "fsdp", CFG_INT, F(fsdp), "chips", "1", 1, POD_MAX_CHIPS, NULL,
	  "fully sharded data parallelism: the batch split, and every weight, gathered before its GEMM" },
	{ "tensor", CFG_INT, F(tensor), "chips", "1", 1, POD_MAX_CHIPS, NULL,
	  "tensor parallelism: attention heads and the MLP's hidden width split, partial sums all-reduced" },
	{ "pipeline", CFG_INT, F(pipeline), "stages", "1", 1, PIPE_MAX_STAGES, NULL,
	  "pipeline parallelism: the layers in this many stages of consecutive blocks, each on its own chips" },
	{ "schedule", CFG_ENUM, F(schedule), "", "1f1b", 0, 0, pipe_schedule_names,
	  "the pipeline's order of microbatches: 1f1b (one forward, one backward) or gpipe (every forward, then every "
	  "backward)" },
	{ "microbatches", CFG_INT, F(microbatches), "", "1", 1, 1 << 20, NULL,
	  "inference on a pipeline: the batch in this many microbatches (a training step's are train.microbatches)" },
	{ "sequence", CFG_BOOL, F(sequence), "", "false", 0, 0, NULL,
	  "sequence parallelism with mesh.tensor: what runs between attention and MLP blocks takes 1/tensor of the "
	  "tokens; a block all-gathers its input and reduce-scatters its output instead of all-reducing it" },
	CFG_END
};
#undef F

bool shard_active(const struct lower_pod *lp)
{
	return lp && (lp->data > 1 || lp->fsdp > 1 || lp->tensor > 1 || lp->pipeline > 1);
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * Takes a group of `need` chips from what is left of the pod's ICI axes
 * (left[], changed): whole axes first (so that their rings wrap), the
 * largest that divides what is still needed each time, then parts of axes
 * in order. Returns what it could not place (1: all).
 */
static int64_t take(int64_t left[3], const int64_t full[3], int64_t need, struct ici_group *g)
{
	for (int a = 0; a < ICI_NAXES; a++)
		g->n[a] = 1;
	for (;;) {
		int best = -1;
		for (int a = 0; a < 3; a++)
			if (left[a] == full[a] && left[a] > 1 && need % left[a] == 0 && (best < 0 || left[a] > left[best]))
				best = a;
		if (best < 0)
			break;
		g->n[best] = (int16_t)left[best];
		need /= left[best];
		left[best] = 1;
	}
	for (int a = 0; a < 3 && need > 1; a++) {
		int64_t f = gcd64(left[a], need);
		if (f > 1) {
			g->n[a] = (int16_t)(g->n[a] * f);
			left[a] /= f;
			need /= f;
		}
	}
	return need;
}

/* The mesh key to place an error about the degrees together at: the first given of data, fsdp, tensor, pipeline. */
static const char *given_key(const struct config *cfg)
{
	static const char *const keys[] = { "mesh.data", "mesh.fsdp", "mesh.tensor", "mesh.pipeline" };
	for (int i = 0; i < 4; i++)
		if (config_origin(cfg, keys[i]).line > 0)
			return keys[i];
	return keys[0];
}

int shard_place(const struct config *cfg, struct lower_pod *lp, struct err *e)
{
	const struct arch *a = &cfg->arch;
	const struct ici_params *p = &a->pod;
	const struct mesh_params *m = &a->mesh;
	int64_t left[3] = { p->dim[0], p->dim[1], p->dim[2] }, chips = ici_chips(p);
	lp->pod = p;
	lp->data = m->data;
	lp->fsdp = m->fsdp;
	lp->tensor = m->tensor;
	lp->pipeline = m->pipeline;
	lp->sequence = m->sequence && m->tensor > 1;
	ici_group_of(p, 0, &lp->g_data);
	lp->g_fsdp = lp->g_tensor = lp->g_pipeline = lp->g_data;
	if (m->microbatches > 1 && a->train.enabled)
		return err_at(e, config_origin(cfg, "mesh.microbatches"), "mesh.microbatches",
			      "expected 1 in a training step (its pipeline's microbatches are train.microbatches), found %lld",
			      (long long)m->microbatches);
	if (!shard_active(lp))
		return 0;
	int64_t prod;
	if (__builtin_mul_overflow(m->data, m->fsdp, &prod) || __builtin_mul_overflow(prod, m->tensor, &prod) ||
	    __builtin_mul_overflow(prod, m->pipeline, &prod) || prod != chips)
		return err_at(e, config_origin(cfg, given_key(cfg)), given_key(cfg),
			      "expected mesh.data x mesh.fsdp x mesh.tensor x mesh.pipeline to be the pod's %lld chips (pod.x x "
			      "pod.y x pod.z x pod.slices), found %lld x %lld x %lld x %lld", (long long)chips, (long long)m->data,
			      (long long)m->fsdp, (long long)m->tensor, (long long)m->pipeline);
	/* The slices go to data: the DCN is the slowest link. */
	if (m->data % p->slices)
		return err_at(e, config_origin(cfg, "mesh.data"), "mesh.data",
			      "expected a multiple of pod.slices (%lld: data parallelism spans the slices), found %lld",
			      (long long)p->slices, (long long)m->data);
	static const char *const keys[] = { "mesh.tensor", "mesh.fsdp", "mesh.pipeline", "mesh.data" };
	struct ici_group *gs[] = { &lp->g_tensor, &lp->g_fsdp, &lp->g_pipeline, &lp->g_data };
	int64_t need[] = { m->tensor, m->fsdp, m->pipeline, m->data / p->slices };
	for (int i = 0; i < 4; i++) {
		int64_t rest = take(left, p->dim, need[i], gs[i]);
		if (rest > 1)
			return err_at(e, config_origin(cfg, keys[i]), keys[i],
				      "expected a degree the pod's axes left after the mesh axes before it factor into (%lld x "
				      "%lld x %lld), found %lld", (long long)(left[0]), (long long)left[1], (long long)left[2],
				      (long long)need[i]);
	}
	lp->g_data.n[ICI_DCN] = (int16_t)p->slices;
	return 0;
}
