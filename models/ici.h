/*
 * ici.h - chip-to-chip links: a pod slice's torus, its collectives in closed
 * form, and its links as a resource the engine's collectives share.
 *
 * A slice is a torus of up to three axes, x, y and z, of pod.x x pod.y x
 * pod.z chips. Every chip has a link to each neighbour along each axis of
 * more than one chip, pod.link_gbps in each direction (full duplex), and a
 * hop costs pod.hop_ns besides its bytes. An axis wraps around (its last
 * chip linked to its first, a ring) or not (a line): pod.wrap_<axis>, where
 * auto is the generation's rule, pod.wrap_min and pod.wrap_step (TPU v4 and
 * v5p: a multiple of 4; v5e and v6e: only a full axis of 16). Slices
 * (pod.slices) talk over the data-centre network (DCN): the fourth axis,
 * `dcn`, a ring over the slices at pod.dcn_gbps per chip each way and
 * pod.dcn_us a transfer.
 *
 * Collectives (V the logical array's bytes; N the chips of the axes):
 *   all_gather      each chip holds V/N and ends with all V
 *   reduce_scatter  each chip holds V (partial sums) and ends with its V/N, summed
 *   all_reduce      each chip holds V and ends with the sum: reduce-scatter, then all-gather
 *   all_to_all      each chip holds V/N and sends V/N^2 to every other
 *   send_recv       each chip sends V to its neighbour along one axis (a pipeline's send)
 *
 * Time follows the alpha-beta model (R. W. Hockney, "The communication
 * challenge for MPP", Parallel Computing 20(3), 1994): a step costs a hop's
 * latency plus its bytes over the link. On a ring of N the shards go both
 * ways: floor(N/2) steps carry (N-1)/2 shards a direction, so an all-gather
 * takes V (N-1)/N / (2 W) plus floor(N/2) hops; a line has no second path
 * round, N-1 steps of a whole shard, about twice (J. Austin et al., "How to
 * Scale Your Model", 2025, part 3 "Sharded matrices": AllGather cost, the
 * v5e {X: 8, Y: 4} example). Over k axes the array is cut in k parts, each
 * gathered axis after axis starting at a different one (so every axis's
 * links work at once: about k times the bandwidth, as that book gives); the
 * closed form is the busiest axis's bytes over its links plus every axis's
 * hops. An all-to-all moves each chunk its distance: a ring's busiest link
 * carries N^2/8 chunks a direction (a quarter of an all-gather's bytes), a
 * line's middle link floor(N/2) ceil(N/2); over several axes one axis after
 * another. The reduction's arithmetic is not timed (the vector unit keeps up
 * with a link), and a step's bytes do not wait for the HBM.
 *
 * The engine runs the same steps as events (ici_chains, ici_send): each
 * chain a sequence of stages, a stage steps on one axis, both directions at
 * once; a send holds its link for its bytes, then the hop's latency passes.
 * Uncontended, that is the closed form on one axis; two collectives that
 * share an axis queue for its links.
 *
 * Chips that do the same work are alike: the model is one representative
 * chip's links, each of its neighbours doing the same at the same time.
 */
#ifndef TPUSIM_ICI_H
#define TPUSIM_ICI_H

#include <stdbool.h>
#include <stdint.h>

#include "cfgkey.h"

enum ici_axis { ICI_X, ICI_Y, ICI_Z, ICI_DCN, ICI_NAXES };
extern const char *const ici_axis_names[];     /* "x", "y", "z", "dcn" */

enum ici_wrap { WRAP_AUTO, WRAP_TRUE, WRAP_FALSE };

struct ici_params {
	int64_t dim[3];                 /* chips along x, y, z */
	int wrap[3];                    /* enum ici_wrap, per axis */
	int64_t wrap_min, wrap_step;    /* auto: an axis wraps when it has at least wrap_min chips, a multiple of wrap_step */
	double link_gbps;               /* one link, one direction, GB/s */
	double hop_ns;                  /* a hop's latency */
	int64_t slices;                 /* slices over the DCN */
	double dcn_gbps;                /* each chip's DCN bandwidth, one direction, GB/s */
	double dcn_us;                  /* a DCN transfer's latency */
};

extern const struct cfg_key ici_keys[];

enum coll_kind { COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALL_REDUCE, COLL_ALL_TO_ALL, COLL_SEND_RECV, COLL_N };
extern const char *const coll_names[];         /* "all_gather", ..., "send_recv" */

/* Chips along axis (the dcn axis: slices), and whether it wraps round (the dcn axis does). */
int64_t ici_axis_size(const struct ici_params *p, int axis);
bool ici_axis_wraps(const struct ici_params *p, int axis);

/* Chips of the pod: every slice's. */
int64_t ici_chips(const struct ici_params *p);

/*
 * The chips a collective runs among: n[a] of axis a's (1: the axis is not
 * in it). A whole axis wraps as the axis does; a part of one (sharding
 * cuts an axis among mesh axes) is a line of neighbouring chips.
 */
struct ici_group {
	int16_t n[ICI_NAXES];
};

/* The group of the whole axes in the bit set axes (1 << enum ici_axis). */
void ici_group_of(const struct ici_params *p, unsigned axes, struct ici_group *g);

/* The group's chips, and whether its part of axis wraps round (the whole axis, and the axis wraps). */
int64_t ici_group_chips(const struct ici_group *g);
bool ici_group_wraps(const struct ici_params *p, const struct ici_group *g, int axis);

/* The group's axes in buf, "y", "x+y" or "x(8 of 16)+z"; "none" for no axis. Returns buf. */
const char *ici_group_name(const struct ici_params *p, const struct ici_group *g, char *buf, size_t size);

/* The closed form of one collective. */
struct ici_cost {
	double seconds;                 /* the whole collective, alone on its links */
	double latency_s;               /* of which the hops' latency */
	int64_t hops;                   /* hops one after another */
	double link_bytes[ICI_NAXES];   /* what the busiest link of each axis carries in its busier direction */
	double link_both[ICI_NAXES];    /* and in both directions: a ring twice that, a line's a shard more */
};

/* A chip's links of axis that a collective uses at once: 2 (both neighbours) on a torus axis, 1 (its NIC) on the dcn. */
int ici_axis_dirs(int axis);

/* One link of axis (the dcn: a chip's NIC), one direction, in B/s: pod.link_gbps or pod.dcn_gbps. */
double ici_axis_bytes_per_s(const struct ici_params *p, int axis);

/* c->link_both rounded up, into bytes[ICI_NAXES]. */
void ici_cost_link_bytes(const struct ici_cost *c, int64_t bytes[ICI_NAXES]);

/*
 * The closed form of collective coll (enum coll_kind) of an array of bytes
 * (V above) among group g; axes of one chip cost nothing. send_recv takes
 * one axis: the lowest of the group.
 */
void ici_cost(const struct ici_params *p, int coll, double bytes, const struct ici_group *g, struct ici_cost *c);

/* ---- as steps over links (the engine) ---- */

#define ICI_MAX_STAGES 8

/* Steps on one axis, both directions at once: bytes[d] in all a direction, in equal steps. */
struct ici_stage {
	int axis;
	int64_t steps;
	double bytes[2];                /* [0] the + direction, [1] the - direction */
};

/* Stages one after another. */
struct ici_chain {
	int nstages;
	struct ici_stage st[ICI_MAX_STAGES];
};

/*
 * The chains of collective coll (as ici_cost), which run at once, into
 * ch[0 .. ICI_NAXES); returns how many (0: nothing to move).
 */
int ici_chains(const struct ici_params *p, int coll, double bytes, const struct ici_group *g,
	       struct ici_chain ch[ICI_NAXES]);

/* The links of one representative chip, at clock_ghz cycles. */
typedef struct ici ici;

ici *ici_new(const struct ici_params *p, double clock_ghz);
void ici_free(ici *n);

/* Every link idle. */
void ici_reset(ici *n);

/*
 * bytes over axis's link in direction dir (0: +, 1: -), offered at cycle
 * now: it waits for the link, holds it for its bytes, and arrives a hop's
 * latency later. Returns the arrival cycle.
 */
int64_t ici_send(ici *n, int axis, int dir, double bytes, int64_t now);

#endif
