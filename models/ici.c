/*
 * ici.c - a pod slice's links and collectives (see ici.h).
 */
#include "ici.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"

const char *const ici_axis_names[] = { "x", "y", "z", "dcn", NULL };
const char *const coll_names[] = { "all_gather", "reduce_scatter", "all_reduce", "all_to_all", "send_recv", NULL };
static const char *const wrap_names[] = { "auto", "true", "false", NULL };

#define F(x) offsetof(struct ici_params, x)
const struct cfg_key ici_keys[] = {
	{ "x", CFG_INT, F(dim[0]), "chips", "1", 1, POD_MAX_DIM, NULL, "chips along the torus's x axis" },
	{ "y", CFG_INT, F(dim[1]), "chips", "1", 1, POD_MAX_DIM, NULL, "chips along the torus's y axis" },
	{ "z", CFG_INT, F(dim[2]), "chips", "1", 1, POD_MAX_DIM, NULL, "chips along the torus's z axis" },
	{ "wrap_x", CFG_ENUM, F(wrap[0]), "", "auto", 0, 0, wrap_names,
	  "whether x's last chip links to its first (a ring, else a line); auto: pod.wrap_min and pod.wrap_step" },
	{ "wrap_y", CFG_ENUM, F(wrap[1]), "", "auto", 0, 0, wrap_names, "as pod.wrap_x, for y" },
	{ "wrap_z", CFG_ENUM, F(wrap[2]), "", "auto", 0, 0, wrap_names, "as pod.wrap_x, for z" },
	{ "wrap_min", CFG_INT, F(wrap_min), "chips", "0", 0, POD_MAX_DIM, NULL,
	  "auto wraparound: an axis of at least this many chips wraps (0: none does)" },
	{ "wrap_step", CFG_INT, F(wrap_step), "chips", "1", 1, POD_MAX_DIM, NULL,
	  "auto wraparound: and only when its chips are a multiple of this" },
	{ "link_gbps", CFG_DOUBLE, F(link_gbps), "GB/s", "45", 1e-3, 1e6, NULL,
	  "one ICI link's bandwidth in one direction (links are full duplex)" },
	{ "hop_ns", CFG_DOUBLE, F(hop_ns), "ns", "1000", 0, 1e9, NULL, "the latency of one hop over a link, beside its bytes" },
	{ "slices", CFG_INT, F(slices), "", "1", 1, POD_MAX_SLICES, NULL,
	  "slices of x * y * z chips, linked by the data-centre network (the dcn axis)" },
	{ "dcn_gbps", CFG_DOUBLE, F(dcn_gbps), "GB/s", "12.5", 1e-3, 1e6, NULL,
	  "each chip's DCN bandwidth between slices, one direction" },
	{ "dcn_us", CFG_DOUBLE, F(dcn_us), "us", "10", 0, 1e6, NULL, "the latency of one transfer over the DCN" },
	CFG_END
};
#undef F

int64_t ici_axis_size(const struct ici_params *p, int axis)
{
	return axis == ICI_DCN ? p->slices : p->dim[axis];
}

bool ici_axis_wraps(const struct ici_params *p, int axis)
{
	if (axis == ICI_DCN)
		return true;
	if (p->wrap[axis] != WRAP_AUTO)
		return p->wrap[axis] == WRAP_TRUE;
	int64_t n = p->dim[axis];
	return p->wrap_min > 0 && n >= p->wrap_min && n % p->wrap_step == 0;
}

int64_t ici_chips(const struct ici_params *p)
{
	return p->dim[0] * p->dim[1] * p->dim[2] * p->slices;
}

void ici_group_of(const struct ici_params *p, unsigned axes, struct ici_group *g)
{
	for (int a = 0; a < ICI_NAXES; a++)
		g->n[a] = (int16_t)(axes >> a & 1 ? ici_axis_size(p, a) : 1);
}

int64_t ici_group_chips(const struct ici_group *g)
{
	int64_t n = 1;
	for (int a = 0; a < ICI_NAXES; a++)
		n *= g->n[a];
	return n;
}

bool ici_group_wraps(const struct ici_params *p, const struct ici_group *g, int axis)
{
	return g->n[axis] == ici_axis_size(p, axis) && ici_axis_wraps(p, axis);
}

const char *ici_group_name(const struct ici_params *p, const struct ici_group *g, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int a = 0; a < ICI_NAXES; a++)
		if (g->n[a] > 1) {
			int w = g->n[a] == ici_axis_size(p, a) ?
					snprintf(buf + k, size - k, "%s%s", k ? "+" : "", ici_axis_names[a]) :
					snprintf(buf + k, size - k, "%s%s(%d of %lld)", k ? "+" : "", ici_axis_names[a], g->n[a],
						 (long long)ici_axis_size(p, a));
			k = w < 0 || (size_t)w >= size - k ? size - 1 : k + (size_t)w;
		}
	if (!k)
		snprintf(buf, size, "none");
	return buf;
}

/* One direction of one axis: its bandwidth in B/s and its latency in s. */
double ici_axis_bytes_per_s(const struct ici_params *p, int axis)
{
	return (axis == ICI_DCN ? p->dcn_gbps : p->link_gbps) * 1e9;
}

static double axis_bw(const struct ici_params *p, int axis)
{
	return ici_axis_bytes_per_s(p, axis);
}

static double axis_alpha(const struct ici_params *p, int axis)
{
	return axis == ICI_DCN ? p->dcn_us * 1e-6 : p->hop_ns * 1e-9;
}

/*
 * A gather (or a scatter) of shards of d bytes over one axis of n chips:
 * the steps, and in f the shards the busiest link carries a direction. A
 * ring sends each shard both ways; the DCN, one NIC a chip, one way.
 */
static int64_t gather_steps(const struct ici_params *p, const struct ici_group *g, int axis, double *f)
{
	int64_t n = g->n[axis];
	if (axis != ICI_DCN && ici_group_wraps(p, g, axis)) {
		*f = (double)(n - 1) / 2;
		return n / 2;
	}
	*f = (double)(n - 1);
	return n - 1;
}

/*
 * An all-to-all over one axis of n chips, a chip sending one chunk to each
 * of the others: the steps, and in f the chunks the busiest link carries a
 * direction. A ring's chunks
 * take the shorter way (a half-way chunk half each way): N^2/8 a link
 * direction, (N^2 - 1)/8 when N is odd; a line's middle link carries
 * floor(N/2) ceil(N/2); the DCN sends each chunk straight to its slice.
 */
static int64_t a2a_steps(const struct ici_params *p, const struct ici_group *g, int axis, double *f)
{
	int64_t n = g->n[axis];
	if (axis == ICI_DCN) {
		*f = (double)(n - 1);
		return 1;
	}
	if (ici_group_wraps(p, g, axis)) {
		*f = n % 2 ? ((double)n * (double)n - 1) / 8 : (double)n * (double)n / 8;
		return n / 2;
	}
	*f = (double)(n / 2) * (double)((n + 1) / 2);
	return n - 1;
}

/* The axes of the group with more than one chip, in order, into ax; returns how many. */
static int live_axes(const struct ici_group *g, int ax[ICI_NAXES])
{
	int k = 0;
	for (int a = 0; a < ICI_NAXES; a++)
		if (g->n[a] > 1)
			ax[k++] = a;
	return k;
}

int ici_axis_dirs(int axis)
{
	return axis == ICI_DCN ? 1 : 2;
}

void ici_cost_link_bytes(const struct ici_cost *c, int64_t bytes[ICI_NAXES])
{
	for (int a = 0; a < ICI_NAXES; a++)
		bytes[a] = (int64_t)ceil(c->link_both[a]);
}

/*
 * The stages of a gather (reduce false) or a reduce-scatter of bytes over
 * the group's k axes ax[], as k chains (chain c starts at axis c and goes
 * round), in ch[]. A gather's shard grows by each axis's chips; a
 * scatter's shrinks.
 */
static void gather_chains(const struct ici_params *p, const struct ici_group *g, bool reduce, double bytes,
			  const int ax[], int k, struct ici_chain ch[])
{
	int64_t n = ici_group_chips(g);
	for (int c = 0; c < k; c++) {
		double d = bytes / k / (double)n;      /* a gather's shard at its first stage */
		struct ici_chain *h = &ch[c];
		int base = h->nstages;
		for (int j = 0; j < k; j++) {
			int a = ax[(c + j) % k];
			double f;
			struct ici_stage *s = &h->st[base + j];
			s->axis = a;
			s->steps = gather_steps(p, g, a, &f);
			s->bytes[0] = f * d;
			s->bytes[1] = ici_axis_dirs(a) == 2 ? f * d : 0;
			d *= (double)g->n[a];
		}
		if (reduce)     /* a scatter is the gather run backwards */
			for (int j = 0; j < k / 2; j++) {
				struct ici_stage t = h->st[base + j];
				h->st[base + j] = h->st[base + k - 1 - j];
				h->st[base + k - 1 - j] = t;
			}
		h->nstages = base + k;
	}
}

int ici_chains(const struct ici_params *p, int coll, double bytes, const struct ici_group *g,
	       struct ici_chain ch[ICI_NAXES])
{
	int ax[ICI_NAXES], k = live_axes(g, ax);
	memset(ch, 0, sizeof *ch * ICI_NAXES);
	if (!k || bytes <= 0)
		return 0;
	switch (coll) {
	case COLL_ALL_GATHER:
		gather_chains(p, g, false, bytes, ax, k, ch);
		return k;
	case COLL_REDUCE_SCATTER:
		gather_chains(p, g, true, bytes, ax, k, ch);
		return k;
	case COLL_ALL_REDUCE:
		gather_chains(p, g, true, bytes, ax, k, ch);
		gather_chains(p, g, false, bytes, ax, k, ch);
		return k;
	case COLL_ALL_TO_ALL: {
		int64_t n = ici_group_chips(g);
		for (int j = 0; j < k; j++) {
			double f, chunk = bytes / (double)n / (double)g->n[ax[j]];
			struct ici_stage *s = &ch[0].st[j];
			s->axis = ax[j];
			s->steps = a2a_steps(p, g, ax[j], &f);
			s->bytes[0] = f * chunk;
			s->bytes[1] = ici_axis_dirs(ax[j]) == 2 ? f * chunk : 0;
		}
		ch[0].nstages = k;
		return 1;
	}
	default:        /* COLL_SEND_RECV: one step to the next chip along the first axis */
		ch[0].nstages = 1;
		ch[0].st[0] = (struct ici_stage){ .axis = ax[0], .steps = 1, .bytes = { bytes, 0 } };
		return 1;
	}
}

void ici_cost(const struct ici_params *p, int coll, double bytes, const struct ici_group *g, struct ici_cost *c)
{
	int ax[ICI_NAXES], k = live_axes(g, ax);
	memset(c, 0, sizeof *c);
	if (!k || bytes <= 0)
		return;
	int64_t n = ici_group_chips(g);
	double f, worst = 0;
	switch (coll) {
	case COLL_ALL_GATHER:
	case COLL_REDUCE_SCATTER:
	case COLL_ALL_REDUCE: {
		/*
		 * Chain c (bytes / k) gathers axis after axis from ax[c]: at its
		 * j-th axis each chip holds the product of the earlier axes'
		 * chips times the first shard, bytes / (k N).
		 */
		int twice = coll == COLL_ALL_REDUCE ? 2 : 1;
		for (int ci = 0; ci < k; ci++) {
			double d = bytes / k / (double)n;
			for (int j = 0; j < k; j++) {
				int a = ax[(ci + j) % k];
				gather_steps(p, g, a, &f);
				c->link_bytes[a] += twice * f * d;
				/* A ring's links carry f shards each way; a line's end link f one way and one back. */
				c->link_both[a] += twice * (a == ICI_DCN ? f : ici_group_wraps(p, g, a) ? 2 * f : f + 1) * d;
				d *= (double)g->n[a];
			}
		}
		for (int j = 0; j < k; j++) {
			int a = ax[j];
			int64_t h = gather_steps(p, g, a, &f);
			c->hops += twice * h;
			c->latency_s += twice * (double)h * axis_alpha(p, a);
			worst = fmax(worst, c->link_bytes[a] / axis_bw(p, a));
		}
		c->seconds = c->latency_s + worst;
		break;
	}
	case COLL_ALL_TO_ALL:
		/* One axis after another, each an all-to-all of what a chip holds among that axis's chips. */
		for (int j = 0; j < k; j++) {
			int a = ax[j];
			int64_t h = a2a_steps(p, g, a, &f);
			c->link_bytes[a] = f * bytes / (double)n / (double)g->n[a];
			c->link_both[a] = c->link_bytes[a] * ici_axis_dirs(a);
			c->hops += h;
			c->latency_s += (double)h * axis_alpha(p, a);
			c->seconds += (double)h * axis_alpha(p, a) + c->link_bytes[a] / axis_bw(p, a);
		}
		break;
	default:        /* COLL_SEND_RECV */
		c->link_bytes[ax[0]] = c->link_both[ax[0]] = bytes;
		c->hops = 1;
		c->latency_s = axis_alpha(p, ax[0]);
		c->seconds = c->latency_s + bytes / axis_bw(p, ax[0]);
		return;
	}
}

/* ---- the links ---- */

struct ici {
	double bytes_per_cycle[ICI_NAXES];
	double alpha_cycles[ICI_NAXES];
	double free_at[ICI_NAXES][2];   /* when each link of the representative chip is next free */
};

ici *ici_new(const struct ici_params *p, double clock_ghz)
{
	ici *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	for (int a = 0; a < ICI_NAXES; a++) {
		n->bytes_per_cycle[a] = axis_bw(p, a) / (clock_ghz * 1e9);
		n->alpha_cycles[a] = axis_alpha(p, a) * clock_ghz * 1e9;
	}
	return n;
}

void ici_free(ici *n)
{
	free(n);
}

void ici_reset(ici *n)
{
	memset(n->free_at, 0, sizeof n->free_at);
}

int64_t ici_send(ici *n, int axis, int dir, double bytes, int64_t now)
{
	double start = fmax((double)now, n->free_at[axis][dir]), hold = bytes / n->bytes_per_cycle[axis];
	n->free_at[axis][dir] = start + hold;
	return (int64_t)ceil(start + hold + n->alpha_cycles[axis]);
}
