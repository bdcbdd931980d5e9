/*
 * chip.c - the chip's keys (see chip.h).
 */
#include "chip.h"

#include <stdlib.h>

#include "config.h"
#include "lower.h"
#include "schedule.h"

#define F(x) offsetof(struct chip_params, x)
const struct cfg_key chip_keys[] = {
	{ "cores", CFG_INT, F(cores), "", "1", 1, CHIP_MAX_CORES, NULL,
	  "cores on the chip; each has its own SRAM buffers (sram.*) and vector unit, all share the off-chip memory" },
	{ "arrays_per_core", CFG_INT, F(arrays_per_core), "", "1", 1, CHIP_MAX_ARRAYS_PER_CORE, NULL,
	  "systolic arrays per core; they share the core's SRAM buffers and vector unit, and split each op" },
	{ "keep_activations", CFG_BOOL, F(keep_activations), "", "false", 0, 0, NULL,
	  "a tensor an op writes stays on chip until its last reader when it fits (else it spills to HBM)" },
	{ "prefetch_across_ops", CFG_BOOL, F(prefetch_across_ops), "", "false", 0, 0, NULL,
	  "the load queue runs on into the next ops' weights; an op starts when its inputs exist" },
	{ "activation_kib", CFG_AUTO, F(activation_kib), "KiB", "auto", 1, 1 << 30, NULL,
	  "on-chip storage for the activations kept between ops, whole chip; auto: each core's inputs buffer "
	  "(the unified pool when sram.unified)" },
	CFG_END
};
#undef F

int64_t chip_activation_bytes(const struct config *cfg)
{
	const struct arch *a = &cfg->arch;
	if (a->chip.activation_kib)
		return a->chip.activation_kib * 1024;
	return a->chip.cores * sram_pool_bytes(&a->sram, SRAM_INPUTS);
}

bool chip_keeps(const struct config *cfg)
{
	return cfg->arch.chip.keep_activations && !cfg->arch.array.scalesim_compat;
}

/* Tensor t of ops, or NULL for TENSOR_NONE or an index out of range (hand-built ops name none). */
static struct tensor *tensor_at(struct oplist *ops, int32_t t)
{
	return t >= 0 && (size_t)t < ops->nt ? &ops->t[t] : NULL;
}

int chip_place(const struct config *cfg, struct oplist *ops, struct err *e)
{
	int64_t eb = array_elem_bytes(cfg->arch.array.dtype), cap = chip_activation_bytes(cfg), live = 0;
	bool *held;
	if (!chip_keeps(cfg) || !ops->nt)
		return 0;
	/* held[t]: tensor t is in activation storage now. */
	if (!(held = calloc(ops->nt, sizeof *held)))
		return err_nomem(e, NULL);
	for (size_t i = 0; i < ops->n; i++) {
		struct op *o = &ops->v[i];
		int32_t idx = (int32_t)i;
		o->onchip = o->spill = 0;
		o->onchip_elems = o->spill_elems = 0;
		for (int j = 0; j < 2; j++) {
			struct tensor *t = tensor_at(ops, o->in[j]);
			int bit = j ? OC_B : OC_A;
			if (!t)
				continue;
			if (held[o->in[j]]) {
				o->onchip |= bit;
				o->onchip_elems += t->elems;
			} else if (t->kind == TK_ACT) {
				o->spill |= bit;
				o->spill_elems += t->elems;
			} else if (t->kind == TK_INPUT && t->first_reader == idx && t->last_reader > idx &&
				   live + t->elems * eb <= cap) {
				held[o->in[j]] = true;      /* read from HBM once, then kept for the later readers */
				live += t->elems * eb;
			}
		}
		struct tensor *out = tensor_at(ops, o->out);
		if (out && out->kind == TK_ACT) {
			if (out->producer == idx && out->last_reader != TENSOR_NONE && live + out->elems * eb <= cap) {
				held[o->out] = true;
				live += out->elems * eb;
			}
			if (held[o->out])
				o->onchip |= OC_C;
			else if (out->last_reader != TENSOR_NONE)
				o->spill |= OC_C;
		}
		/* Tensors whose last reader this is leave the storage. */
		for (int j = 0; j < 2; j++) {
			struct tensor *t = tensor_at(ops, o->in[j]);
			if (t && t->last_reader == idx && held[o->in[j]]) {
				held[o->in[j]] = false;
				live -= t->elems * eb;
			}
		}
	}
	free(held);
	return 0;
}

int64_t chip_spill_bytes(const struct config *cfg, const struct op *o, const struct sched *s)
{
	int64_t eb = array_elem_bytes(cfg->arch.array.dtype), bytes = 0;
	if (!o->spill)
		return 0;
	if (o->kind == OP_GEMM) {
		if (o->spill & OC_A)
			bytes += s->read_bytes[OPND_A];
		if (o->spill & OC_B)
			bytes += s->read_bytes[OPND_B];
		if (o->spill & OC_C)
			bytes += s->write_bytes;
		return bytes;
	}
	/* A vector op's inputs that spilled (not the network inputs it also reads from HBM). */
	bytes += o->spill_elems * eb;
	if (o->spill & OC_C)
		bytes += o->out_elems * eb;
	return bytes;
}

/* The share of total in part i of n, in whole units (the last unit may be short), as even as units allow. */
static int64_t unit_share(int64_t total, int64_t unit, int64_t i, int64_t n)
{
	int64_t units = total / unit + (total % unit != 0), mine = units / n + (i < units % n);
	int64_t first = i * (units / n) + (i < units % n ? i : units % n);
	int64_t from = first * unit, to = (first + mine) * unit;
	if (to > total)
		to = total;
	return to > from ? to - from : 0;
}

/* total * x / y, rounded up (sizes fit: lowering keeps products below 2^58). */
static int64_t scaled(int64_t total, int64_t x, int64_t y)
{
	return (int64_t)(((__int128)total * x + y - 1) / y);
}

bool chip_part_empty(const struct op *p)
{
	return p->kind == OP_VEC && p->lane_ops == 0 && p->in_elems == 0 && p->out_elems == 0;
}

int chip_split(const struct config *cfg, const struct op *o, int by, int df, struct op *part)
{
	const struct arch *a = &cfg->arch;
	int64_t arrays = arch_arrays(a), apc = a->chip.arrays_per_core, cores = a->chip.cores, used = 0;
	for (int64_t q = 0; q < arrays; q++) {
		part[q] = *o;
		part[q].kind = OP_VEC;
		part[q].m = part[q].k = part[q].n = 0;
		part[q].lane_ops = part[q].in_elems = part[q].out_elems = part[q].onchip_elems = part[q].spill_elems = 0;
	}
	if (o->kind == OP_VEC) {
		/* The vector unit is the core's: one part a core, on its first array. */
		int64_t n = cores;
		if (o->lane_ops < n)
			n = 1;
		for (int64_t c = 0; c < n; c++) {
			struct op *p = &part[c * apc];
			*p = *o;
			p->lane_ops = unit_share(o->lane_ops, 1, c, n);
			p->in_elems = unit_share(o->in_elems, 1, c, n);
			p->out_elems = unit_share(o->out_elems, 1, c, n);
			p->onchip_elems = unit_share(o->onchip_elems, 1, c, n);
			p->spill_elems = unit_share(o->spill_elems, 1, c, n);
			used += p->lane_ops > 0 || p->in_elems > 0 || p->out_elems > 0;
		}
		return used ? (int)used : 1;
	}
	if (by == SPLIT_NONE || arrays == 1) {
		part[0] = *o;
		return 1;
	}
	int64_t total = by == SPLIT_M ? o->m : o->n, first[CHIP_MAX_ARRAYS];
	int64_t unit = by == SPLIT_M ? (df == DF_OS ? a->array.rows : df == DF_IS ? a->array.cols : 1)
				     : (df == DF_IS ? 1 : a->array.cols);
	for (int64_t q = 0; q < arrays; q++) {
		int64_t share = unit_share(total, unit, q, arrays);
		if (!share)
			continue;
		struct op *p = &part[q];
		*p = *o;
		if (by == SPLIT_M) {
			p->m = share;
			p->a_elems = scaled(o->a_elems ? o->a_elems : o->m * o->k, share, o->m);
		} else {
			p->n = share;
		}
		used++;
	}
	/*
	 * Every part reads all of one operand (A when split by N, B by M). The
	 * arrays of a core share its buffers: the core's first part brings that
	 * operand from HBM, and its other parts read it there, as if on chip.
	 */
	int bit = by == SPLIT_M ? OC_B : OC_A;
	for (int64_t c = 0; c < cores; c++)
		first[c] = -1;
	for (int64_t q = 0; q < arrays; q++) {
		if (chip_part_empty(&part[q]))
			continue;
		if (first[q / apc] < 0) {
			first[q / apc] = q;
			continue;
		}
		part[q].onchip |= (uint8_t)bit;
		part[q].spill &= (uint8_t)~bit;
	}
	return (int)used;
}

void chip_array_sram(const struct config *cfg, struct sram_params *out)
{
	int64_t apc = cfg->arch.chip.arrays_per_core;
	*out = cfg->arch.sram;
	for (int b = 0; b < SRAM_NBUF; b++) {
		int64_t kib = cfg->arch.sram.buf[b].kib / apc;
		out->buf[b].kib = kib < 1 ? 1 : kib;
	}
}

void chip_array_config(const struct config *cfg, struct config *out)
{
	*out = *cfg;
	chip_array_sram(cfg, &out->arch.sram);
}
