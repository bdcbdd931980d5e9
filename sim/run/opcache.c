/*
 * opcache.c - an open-addressing table of op results (see opcache.h).
 */
#include "opcache.h"

#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "fsx.h"

struct entry {
	bool used;
	struct opkey k;
	struct result r;
};

struct opcache {
	struct entry *v;
	size_t cap;                     /* a power of two; at most half used */
	size_t n;
	struct opcache_stats st;
};

struct opcache *opcache_new(void)
{
	return calloc(1, sizeof(struct opcache));
}

void opcache_free(struct opcache *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

uint64_t opcache_config_hash(const struct config *cfg)
{
	const struct cfg_schema *s = config_schema();
	uint64_t h = FSX_FNV_INIT;
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->e[i].name;
		char val[128];
		if (!strcmp(name, "name") || !strncmp(name, "energy.", 7) || !strncmp(name, "area.", 5) ||
		    !strncmp(name, "sim.", 4) || !strcmp(name, "hbm.capacity_gib"))
			continue;
		cfg_format(s, (int)i, &cfg->arch, val, sizeof val);
		h = fsx_fnv(h, name, strlen(name) + 1);
		h = fsx_fnv(h, val, strlen(val) + 1);
	}
	return h;
}

void opcache_key(struct opkey *k, uint64_t cfg_hash, int model, int dataflow, bool ideal, const struct op *op)
{
	memset(k, 0, sizeof *k);        /* padding too: keys are compared and hashed as bytes */
	k->cfg = cfg_hash;
	k->model = model;
	k->dataflow = dataflow;
	k->ideal = ideal;
	k->kind = (int32_t)op->kind;
	k->a_weight = op->a_weight;
	k->b_weight = op->b_weight;
	k->onchip = op->onchip;
	k->spill = op->spill;
	if (op->kind == OP_GEMM) {
		k->m = op->m;
		k->k = op->k;
		k->n = op->n;
		k->repeat = op->repeat;
		k->a_elems = op->a_elems;
		k->c_elems = op->c_elems;
	} else {
		k->vec = op->vec;
		k->coll = op->coll;
		k->coll_elems = op->coll_elems;
		k->grp = op->grp;
		k->identity = op->identity;
		k->coll_eb = op->coll_eb;
		k->in_elems = op->in_elems;
		k->out_elems = op->out_elems;
		k->lane_ops = op->lane_ops;
		k->onchip_elems = op->onchip_elems;
		k->spill_elems = op->spill_elems;
	}
}

static size_t slot(const struct opcache *c, const struct opkey *k)
{
	uint64_t h = FSX_FNV_INIT;
	h = fsx_fnv(h, k, sizeof *k);
	size_t i = (size_t)h & (c->cap - 1);
	while (c->v[i].used && memcmp(&c->v[i].k, k, sizeof *k))
		i = (i + 1) & (c->cap - 1);
	return i;
}

const struct result *opcache_get(struct opcache *c, const struct opkey *k)
{
	if (c->cap) {
		size_t i = slot(c, k);
		if (c->v[i].used) {
			c->st.hits++;
			return &c->v[i].r;
		}
	}
	c->st.misses++;
	return NULL;
}

/* Doubles the table (from 256 slots); false when memory ran out. */
static bool grow(struct opcache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 256;
	struct entry *old = c->v, *v = calloc(cap, sizeof *v);
	size_t ocap = c->cap;
	if (!v)
		return false;
	c->v = v;
	c->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			c->v[slot(c, &old[i].k)] = old[i];
	free(old);
	return true;
}

int opcache_put(struct opcache *c, const struct opkey *k, const struct result *r)
{
	if (c->n >= OPCACHE_MAX) {
		memset(c->v, 0, c->cap * sizeof *c->v);
		c->st.forgotten += (int64_t)c->n;
		c->n = 0;
	}
	if (2 * (c->n + 1) > c->cap && !grow(c))
		return -1;
	size_t i = slot(c, k);
	if (!c->v[i].used) {
		c->v[i].used = true;
		c->v[i].k = *k;
		c->n++;
	}
	c->v[i].r = *r;
	return 0;
}

struct opcache_stats opcache_stats(const struct opcache *c)
{
	return c->st;
}
