/*
 * place.c - where tensors live and how ops are shared out over the arrays (see place.h).
 */
#include "place.h"

#include <stdlib.h>

#include "schedule.h"

int64_t place_activation_bytes(const struct arch *a)
{
	if (a->chip.activation_kib)
		return a->chip.activation_kib * 1024;
	return a->chip.cores * sram_pool_bytes(&a->sram, SRAM_INPUTS);
}

bool place_keeps(const struct arch *a)
{
	return a->chip.keep_activations && !a->array.scalesim_compat;
}

/* Tensor t of ops, or NULL for TENSOR_NONE or an index out of range (hand-built ops name none). */
static struct tensor *tensor_at(struct oplist *ops, int32_t t)
{
	return t >= 0 && (size_t)t < ops->nt ? &ops->t[t] : NULL;
}

int place_ops(const struct arch *a, struct oplist *ops, struct err *e)
{
	int64_t eb = array_elem_bytes(a->array.dtype), cap = place_activation_bytes(a), live = 0;
	bool *held;
	if (!place_keeps(a) || !ops->nt)
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

int64_t place_spill_bytes(const struct arch *a, const struct op *o, const struct sched *s)
{
	int64_t eb = array_elem_bytes(a->array.dtype), bytes = 0;
	if (!o->spill || o->kind == OP_COLL)   /* a collective's bytes go over the links (plan.h) */
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

bool place_part_empty(const struct op *p)
{
	return p->kind == OP_VEC && p->lane_ops == 0 && p->in_elems == 0 && p->out_elems == 0;
}

int place_split(const struct arch *a, const struct op *o, int by, int df, struct op *part)
{
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
			p->c_elems = o->c_elems ? scaled(o->c_elems, share, o->m) : 0;
		} else {
			p->n = share;
			p->c_elems = o->c_elems ? scaled(o->c_elems, share, o->n) : 0;
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
		if (place_part_empty(&part[q]))
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

void place_array_sram(const struct arch *a, struct sram_params *out)
{
	int64_t apc = a->chip.arrays_per_core;
	*out = a->sram;
	for (int b = 0; b < SRAM_NBUF; b++) {
		int64_t kib = a->sram.buf[b].kib / apc;
		out->buf[b].kib = kib < 1 ? 1 : kib;
	}
}
