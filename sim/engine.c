/*
 * engine.c - the tile program on SystemC threads (see engine.h).
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "analytic.h"
#include "array.h"
#include "memory.h"
#include "schedule.h"
#include "scw.h"
#include "sram.h"
#include "vector.h"

#define RING 16384           /* loads or blocks in flight between two threads: more than the longest
				drain (R + C - 2 < 8192 blocks at one a cycle) with ideal memory */
#define LOAD_WINDOW 16       /* loads the load queue may issue ahead of the matrix unit */
#define MAX_SLOTS 64         /* most tiles of one operand in flight (LOAD_WINDOW bounds all loads) */
#define IDEAL_OSLOTS 8192    /* accumulator tiles with ideal memory: never the constraint */
#define VEC_CHUNK_ROWS 1024  /* vector unit: lane-rows per chunk */

struct engine {
	const struct config *cfg;   /* borrowed */
	bool ideal;
	mem *mem;                   /* off-chip memory */
	sram *sram;
	scw_kernel *kernel;         /* owned: this engine's simulation */
	/* What engine_trace shows in a VCD: running counts over the whole run. */
	bool tracing;
	int64_t tr_op, tr_loads, tr_folds, tr_stores, tr_stall;
};

int engine_trace(engine *en, const char *path, struct err *e)
{
	if (scw_trace_open(en->kernel, path, e) < 0)
		return -1;
	en->tracing = true;
	scw_trace_i64(en->kernel, &en->tr_op, "op");
	scw_trace_i64(en->kernel, &en->tr_loads, "loads_issued");
	scw_trace_i64(en->kernel, &en->tr_folds, "folds_done");
	scw_trace_i64(en->kernel, &en->tr_stores, "stores_issued");
	scw_trace_i64(en->kernel, &en->tr_stall, "array_waiting");
	return 0;
}

engine *engine_new(const struct config *cfg, bool ideal, struct err *e)
{
	engine *en = calloc(1, sizeof *en);
	if (!en || !(en->mem = mem_new(&cfg->arch.hbm, cfg->arch.clock_ghz, ideal)) ||
	    !(en->sram = sram_new(&cfg->arch.sram, ideal))) {
		engine_free(en);
		err_input(e, "out of memory");
		return NULL;
	}
	if (!(en->kernel = scw_kernel_new(e))) {
		engine_free(en);
		return NULL;
	}
	en->cfg = cfg;
	en->ideal = ideal;
	return en;
}

int engine_instant_memory(engine *en, struct err *e)
{
	mem *h = mem_new(&en->cfg->arch.hbm, en->cfg->arch.clock_ghz, true);
	sram *s = sram_new(&en->cfg->arch.sram, true);
	if (!h || !s) {
		mem_free(h);
		sram_free(s);
		return err_input(e, "out of memory");
	}
	mem_free(en->mem);
	sram_free(en->sram);
	en->mem = h;
	en->sram = s;
	return 0;
}

void engine_use_memory(engine *en, mem *m)
{
	mem_free(en->mem);
	en->mem = m;
}

void engine_free(engine *en)
{
	if (!en)
		return;
	mem_free(en->mem);
	sram_free(en->sram);
	scw_kernel_free(en->kernel);
	free(en);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Moves bytes at addr through off-chip memory, from a thread: while the
 * memory refuses the request, waits until the cycle it names and issues it
 * again. Returns the cycle the request completes; if the memory cannot say
 * yet, waits until it can.
 */
static int64_t transfer(engine *en, uint64_t addr, int64_t bytes, bool write)
{
	uint64_t ticket;
	int64_t at, done;
	while (!mem_issue(en->mem, scw_now(), addr, bytes, write, &ticket, &at))
		scw_wait_until(at);
	while ((done = mem_done(en->mem, ticket, scw_now(), &at)) == MEM_NOT_YET)
		scw_wait_until(at);
	return done;
}

static const enum sram_buf opnd_buf[2] = { SRAM_INPUTS, SRAM_WEIGHTS };   /* A, B */
static const int opnd_cat[2] = { CAT_INPUTS, CAT_WEIGHTS };

/* ---- GEMM ops ---- */

struct gemm_run {
	engine *en;
	struct sched s;
	int64_t t0;
	int s_opnd;                  /* the operand whose keep flag is keep_s */
	scw_sem *slots[2];           /* free streaming tiles of A and B */
	scw_sem *issued;             /* loads issued, not yet seen by the matrix unit */
	scw_sem *room;               /* free entries of done[] */
	scw_sem *finished;           /* output blocks the array has finished */
	scw_sem *stored;             /* output blocks whose store has been issued */
	int64_t oslots;              /* accumulator tiles */
	int64_t done[RING];          /* arrival cycle of load j, at j % RING */
	int64_t block_ready[RING];   /* cycle block b has left the array */
	int64_t store_done[RING];    /* cycle block b is in HBM */
	int64_t matrix_end, last_store;
	int64_t cat[CAT_N];
	int alive;                   /* threads not yet finished */
};

static bool kept(const struct gemm_run *g, int operand)
{
	return operand == g->s_opnd ? g->s.keep_s : g->s.keep_x;
}

static void load_thread(void *arg)
{
	struct gemm_run *g = arg;
	struct sched_iter it;
	struct tile_ins ins;
	uint64_t addr[2] = { 0, UINT64_C(1) << 40 };
	int64_t j = 0;

	sched_iter_init(&it, &g->s);
	while (sched_next(&it, &ins)) {
		if (ins.kind != TI_LOAD)
			continue;
		scw_sem_take(g->room, 1);
		if (!kept(g, ins.operand))
			scw_sem_take(g->slots[ins.operand], 1);
		g->done[j++ % RING] = transfer(g->en, addr[ins.operand], ins.bytes, false);
		addr[ins.operand] += (uint64_t)ins.bytes;
		sram_write(g->en->sram, opnd_buf[ins.operand], ins.bytes);
		g->en->tr_loads++;
		scw_sem_give(g->issued, 1);
	}
	g->alive--;
}

static void store_thread(void *arg)
{
	struct gemm_run *g = arg;
	struct sched_iter it;
	struct tile_ins ins;
	uint64_t addr = UINT64_C(2) << 40;
	int64_t b = 0;

	sched_iter_init(&it, &g->s);
	while (sched_next(&it, &ins)) {
		if (ins.kind != TI_STORE)
			continue;
		scw_sem_take(g->finished, 1);
		scw_wait_until(g->block_ready[b % RING]);
		sram_read(g->en->sram, SRAM_OUTPUTS, ins.bytes);
		g->store_done[b % RING] = transfer(g->en, addr, ins.bytes, true);
		g->last_store = max64(g->last_store, g->store_done[b % RING]);
		addr += (uint64_t)ins.bytes;
		b++;
		g->en->tr_stores++;
		scw_sem_give(g->stored, 1);
	}
	g->alive--;
}

/* Charges [from, to) to category c. */
static void charge(struct gemm_run *g, int c, int64_t from, int64_t to)
{
	if (to > from)
		g->cat[c] += to - from;
}

/*
 * Charges a stall [from, to). Data that arrived late shares it in proportion
 * to the bytes this fold loaded of each operand (a memory queue delays
 * everything behind the bytes in it, whichever tile is last out); with no
 * late data, the wait that ended last takes it all.
 */
static void charge_stall(struct gemm_run *g, int64_t from, int64_t to, const int64_t *ready, const int *cats,
			 const int64_t *bytes, int n)
{
	int64_t total = 0, left, share[3] = { 0 }, data = from;
	int best = 0;
	if (to <= from)
		return;
	/* Entries with no bytes (the accumulator tile) wait on their own: past the last data, the stall is theirs. */
	for (int i = 0; i < n; i++)
		if (bytes[i] > 0 && ready[i] > data)
			data = ready[i];
	for (int i = 0; i < n; i++) {
		if (!bytes[i] && ready[i] > data && ready[i] >= ready[best]) {
			charge(g, cats[i], data < to ? data : to, to);
			to = data < to ? data : to;
		}
	}
	if (to <= from)
		return;
	left = to - from;
	for (int i = 0; i < n; i++) {
		if (ready[i] > ready[best])
			best = i;
		if (ready[i] > from)
			total += bytes[i];
	}
	if (total == 0) {
		charge(g, cats[best], from, to);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (ready[i] > from) {
			share[i] = (int64_t)((__int128)(to - from) * bytes[i] / total);
			left -= share[i];
		}
	}
	share[best] += left;
	for (int i = 0; i < n; i++)
		g->cat[cats[i]] += share[i];
}

/* What the matrix unit knows about the fold at hand. */
struct fold_in {
	struct tile_ins f;
	int64_t ready[2];            /* arrival of this fold's A and B tiles */
	int64_t bytes[2];            /* bytes it loaded of A and B */
	int64_t ready_o;             /* its accumulator tile is free */
	bool first_in_block;
};

struct matrix_state {
	int64_t s_prev, e_prev;      /* stream start of the previous fold, stream end of the previous fold or part */
	int64_t start;               /* stream start of the fold or part just timed */
	int64_t folds;               /* folds started (parts not counted) */
	int64_t pending_tail;        /* serial os: the drain still owed by the previous fold */
	int64_t last_sc, last_sr;
	int64_t block_end;           /* when the current output block leaves the array */
	int64_t drained;             /* the latest any block has left the array */
};

/* Stream length: T, or longer when a buffer port cannot feed the array's edge. */
static int64_t stream_cycles(struct gemm_run *g, const struct fold_in *in, int *slow_cat)
{
	const struct sched *s = &g->s;
	const struct tile_ins *f = &in->f;
	sram *sr = g->en->sram;
	int64_t t = f->t, best = t, x;
	*slow_cat = CAT_INPUTS;
	if (s->df == DF_OS) {
		if ((x = sram_stream_cycles(sr, SRAM_INPUTS, t, f->sr * t * s->eb)) > best)
			best = x, *slow_cat = CAT_INPUTS;
		if ((x = sram_stream_cycles(sr, SRAM_WEIGHTS, t, f->sc * t * s->eb)) > best)
			best = x, *slow_cat = CAT_WEIGHTS;
		return best;
	}
	if ((x = sram_stream_cycles(sr, s->x_buf, t, f->sr * t * s->eb)) > best)
		best = x, *slow_cat = s->x_buf == SRAM_INPUTS ? CAT_INPUTS : CAT_WEIGHTS;
	/* Accumulating reads and writes Sc partial sums a cycle, on separate read and write ports. */
	if ((x = sram_stream_cycles(sr, SRAM_OUTPUTS, t, f->sc * t * s->ab)) > best)
		best = x, *slow_cat = CAT_OUTPUTS;
	return best;
}

static void count_sram(struct gemm_run *g, const struct fold_in *in)
{
	const struct sched *s = &g->s;
	const struct tile_ins *f = &in->f;
	sram *sr = g->en->sram;
	if (s->df == DF_OS) {
		sram_read(sr, SRAM_INPUTS, f->sr * f->t * s->eb);
		sram_read(sr, SRAM_WEIGHTS, f->sc * f->t * s->eb);
		if (!f->operand)
			sram_write(sr, SRAM_OUTPUTS, f->sr * f->sc * s->ab);
		return;
	}
	sram_read(sr, s->s_buf, f->sr * f->sc * s->eb);
	sram_read(sr, s->x_buf, f->sr * f->t * s->eb);
	sram_write(sr, SRAM_OUTPUTS, f->sc * f->t * s->ab);
	if (!in->first_in_block)
		sram_read(sr, SRAM_OUTPUTS, f->sc * f->t * s->ab);
}

/*
 * Times one fold (or os part) and charges every cycle from the end of the
 * previous stream to the end of this one. Returns the end of its stream.
 */
static int64_t run_fold(struct gemm_run *g, struct matrix_state *m, const struct fold_in *in, bool last_of_instance)
{
	const struct sched *s = &g->s;
	const struct tile_ins *f = &in->f;
	int64_t R = s->R, C = s->C, base, start, tp;
	int slow;
	bool cont = f->operand;
	int xo = s->df == DF_WS ? OPND_A : OPND_B;       /* ws/is: the streamed operand */

	if (s->compat || !s->dbuf) {
		/* Serial: each fold loads (or preloads), streams, then fills and drains on its own. */
		int64_t pre = s->df == DF_OS ? 0 : s->compat ? R : f->sr;
		int64_t post = s->compat ? R + C - 2 : s->df == DF_OS ? f->sr + f->sc - 2 + R : R + f->sc - 2;
		if (s->compat && last_of_instance && pre + post > 0) {
			/* SCALE-Sim counts one cycle less per layer (see analytic_gemm_cycles). */
			if (post > 0)
				post--;
			else
				pre--;
		}
		if (!cont && m->pending_tail) {
			charge(g, CAT_FILL_DRAIN, m->e_prev, m->e_prev + m->pending_tail);
			m->e_prev += m->pending_tail;
			m->pending_tail = 0;
		}
		int64_t rdy[3] = { in->ready[OPND_A], in->ready[OPND_B], in->ready_o };
		static const int cats[3] = { CAT_INPUTS, CAT_WEIGHTS, CAT_OUTPUTS };
		int64_t go = max64(m->e_prev, max64(max64(rdy[0], rdy[1]), rdy[2]));
		int64_t by[3] = { in->bytes[OPND_A], in->bytes[OPND_B], 0 };
		charge_stall(g, m->e_prev, go, rdy, cats, by, 3);
		/* A preload that the stationary buffer's port stretches waits on that operand. */
		int64_t port = s->df == DF_OS || s->compat ? pre :
			       sram_stream_cycles(g->en->sram, s->s_buf, pre, f->sr * f->sc * s->eb);
		charge(g, CAT_FILL_DRAIN, go, go + pre);
		charge(g, opnd_cat[g->s_opnd], go + pre, go + port);
		start = go + port;
		tp = stream_cycles(g, in, &slow);
		charge(g, CAT_COMPUTE, start, start + f->t);
		charge(g, slow, start + f->t, start + tp);
		m->e_prev = start + tp;
		if (s->df == DF_OS) {
			m->pending_tail = post;          /* owed once the fold's last part has streamed */
			m->block_end = m->e_prev + post;
		} else {
			charge(g, CAT_FILL_DRAIN, m->e_prev, m->e_prev + post);
			m->e_prev += post;
			m->block_end = m->e_prev;
		}
		if (!cont)
			m->folds++;
		m->last_sr = f->sr, m->last_sc = f->sc;
		m->start = start;
		return start + tp;
	}

	if (s->df == DF_OS) {
		int64_t rdy[3] = { in->ready[OPND_A], in->ready[OPND_B], in->ready_o };
		static const int cats[3] = { CAT_INPUTS, CAT_WEIGHTS, CAT_OUTPUTS };
		/* A fold after the second waits for the drain of the fold two back, R cycles after the last start. */
		base = cont ? m->e_prev : m->folds >= 2 ? max64(m->e_prev, m->s_prev + R) : m->e_prev;
		if (m->folds == 0 && !cont)
			base = g->t0;
		start = max64(base, max64(max64(rdy[0], rdy[1]), cont ? 0 : rdy[2]));
		charge(g, CAT_FILL_DRAIN, m->e_prev, base);
		int64_t by[3] = { in->bytes[OPND_A], in->bytes[OPND_B], 0 };
		charge_stall(g, base, start, rdy, cats, by, cont ? 2 : 3);
	} else {
		/*
		 * The next tile shifts into the shadow once the previous fold has
		 * started streaming: Sr cycles, or longer when the stationary
		 * buffer's port cannot deliver Sr x Sc elements in that time.
		 */
		int so = g->s_opnd;
		int64_t shadow = m->folds ? m->s_prev : g->t0;
		int64_t shift = sram_stream_cycles(g->en->sram, s->s_buf, f->sr, f->sr * f->sc * s->eb);
		int64_t shift_done = max64(shadow, in->ready[so]) + shift;
		int64_t rdy[3] = { shift_done, in->ready[xo], in->ready_o };
		int cats[3] = { opnd_cat[so], opnd_cat[xo], CAT_OUTPUTS };
		base = max64(m->e_prev, shadow + f->sr);
		start = max64(base, max64(max64(rdy[0], rdy[1]), rdy[2]));
		charge(g, CAT_FILL_DRAIN, m->e_prev, base);
		int64_t by[3] = { in->bytes[so], in->bytes[xo], 0 };
		charge_stall(g, base, start, rdy, cats, by, 3);
	}
	tp = stream_cycles(g, in, &slow);
	charge(g, CAT_COMPUTE, start, start + f->t);
	charge(g, slow, start + f->t, start + tp);
	if (!cont) {
		m->s_prev = start;
		m->folds++;
	}
	m->e_prev = start + tp;
	m->last_sr = f->sr, m->last_sc = f->sc;
	/* os: a fold's outputs drain from the shadow registers once the next fold is under way. */
	m->block_end = s->df == DF_OS ? (m->folds >= 2 ? max64(m->e_prev, m->s_prev + R) : m->e_prev) + f->sr + f->sc - 2 + R
				      : m->e_prev + R + f->sc - 2;
	m->start = start;
	return start + tp;
}

/* The array after its last fold: the final drain. */
static int64_t matrix_finish(struct gemm_run *g, struct matrix_state *m)
{
	const struct sched *s = &g->s;
	int64_t end = m->e_prev;
	if (s->compat || !s->dbuf) {
		end += m->pending_tail;
	} else if (s->df == DF_OS) {
		end = (m->folds >= 2 ? max64(m->e_prev, m->s_prev + s->R) : m->e_prev) + m->last_sr + m->last_sc - 2 + s->R;
	} else {
		end = m->e_prev + s->R + m->last_sc - 2;
	}
	/* An earlier, wider block may still be draining. */
	end = max64(end, m->drained);
	charge(g, CAT_FILL_DRAIN, m->e_prev, end);
	return end;
}

static void matrix_thread(void *arg)
{
	struct gemm_run *g = arg;
	const struct sched *s = &g->s;
	struct sched_iter it;
	struct tile_ins ins;
	struct matrix_state m = { 0 };
	struct fold_in in;
	int lops[2], nl = 0;
	int64_t lbytes[2] = { 0 };
	int64_t j = 0, blocks = 0, per_inst = s->folds / s->op->repeat, nfold = 0;
	bool block_open = false;

	m.e_prev = m.s_prev = g->t0;
	memset(&in, 0, sizeof in);
	sched_iter_init(&it, s);
	while (sched_next(&it, &ins)) {
		if (ins.kind == TI_LOAD) {
			SIM_ASSERT(nl < 2);
			lops[nl++] = ins.operand;
			lbytes[ins.operand] += ins.bytes;
			continue;
		}
		if (ins.kind == TI_STORE) {
			g->block_ready[(blocks - 1) % RING] = m.block_end;
			m.drained = max64(m.drained, m.block_end);
			block_open = false;
			scw_sem_give(g->finished, 1);
			continue;
		}
		/* A fold: its loads have been issued, and when they arrive is known. */
		in.f = ins;
		in.ready[0] = in.ready[1] = g->t0;
		in.bytes[0] = lbytes[0], in.bytes[1] = lbytes[1];
		lbytes[0] = lbytes[1] = 0;
		scw_sem_take(g->issued, nl);
		for (int i = 0; i < nl; i++, j++)
			in.ready[lops[i]] = max64(in.ready[lops[i]], g->done[j % RING]);
		scw_sem_give(g->room, nl);
		in.first_in_block = !block_open;
		in.ready_o = g->t0;
		if (!block_open) {
			if (blocks >= g->oslots) {
				scw_sem_take(g->stored, 1);
				in.ready_o = g->store_done[(blocks - g->oslots) % RING];
			}
			blocks++;
			block_open = true;
		}
		if (!ins.operand)
			nfold++;
		int64_t before = m.e_prev;
		int64_t end = run_fold(g, &m, &in, nfold % per_inst == 0 && (s->df != DF_OS || it.i3 == 0));
		count_sram(g, &in);
		if (g->en->tracing) {
			/* For the trace: the array waits from the end of the last stream until this one starts. */
			g->en->tr_stall = m.start > before;
			scw_wait_until(m.start);
			g->en->tr_stall = 0;
		}
		scw_wait_until(end);
		g->en->tr_folds++;
		for (int i = 0; i < nl; i++)
			if (!kept(g, lops[i]))
				scw_sem_give(g->slots[lops[i]], 1);
		nl = 0;
	}
	g->matrix_end = matrix_finish(g, &m);
	scw_wait_until(g->matrix_end);
	g->alive--;
}

/* Streaming tiles an operand's buffer holds beside what the plan keeps there. */
static int64_t slots_for(const struct gemm_run *g, int operand, int64_t tile)
{
	const struct sched *s = &g->s;
	const struct sram_params *sp = &g->en->cfg->arch.sram;
	int64_t cap, other = s->footprint[opnd_buf[!operand]];
	if (g->en->ideal || s->compat)
		return MAX_SLOTS;
	if (kept(g, operand) || tile <= 0)
		return MAX_SLOTS;
	if (sp->unified) {
		/* Both streams share what the plan leaves free in the pool: half of it each, beyond their two tiles. */
		int64_t free = sram_bytes(sp, SRAM_WEIGHTS) + sram_bytes(sp, SRAM_INPUTS) - other -
			       s->footprint[opnd_buf[operand]];
		cap = 2 * tile + (free > 0 ? free / 2 : 0);
	} else {
		cap = sram_bytes(sp, opnd_buf[operand]);
	}
	return max64(2, min64(MAX_SLOTS, cap / tile));
}

static int gemm_op(engine *en, const struct op *o, int df, struct result *r, struct err *e)
{
	struct gemm_run *g = calloc(1, sizeof *g);
	const struct sched *s;
	int rc = -1;

	if (!g)
		return err_input(e, "out of memory");
	if (sched_plan(&g->s, o, en->cfg, df, en->ideal, e) < 0)
		goto out;
	s = &g->s;
	g->en = en;
	g->t0 = scw_kernel_now(en->kernel);
	g->s_opnd = df == DF_WS ? OPND_B : OPND_A;
	if (df == DF_OS) {
		int64_t rr = min64(s->R, o->m), cc = min64(s->C, o->n);
		g->slots[OPND_A] = scw_sem_new(slots_for(g, OPND_A, rr * s->kpart * s->eb));
		g->slots[OPND_B] = scw_sem_new(slots_for(g, OPND_B, s->kpart * cc * s->eb));
		g->oslots = en->ideal ? IDEAL_OSLOTS : max64(2, min64(MAX_SLOTS, sram_bytes(&en->cfg->arch.sram, SRAM_OUTPUTS) /
									 (rr * cc * s->ab)));
	} else {
		int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
		int xo = df == DF_WS ? OPND_A : OPND_B;
		g->slots[g->s_opnd] = scw_sem_new(slots_for(g, g->s_opnd, rr * cc * s->eb));
		g->slots[xo] = scw_sem_new(slots_for(g, xo, rr * s->chunk * s->eb));
		g->oslots = en->ideal || s->compat ? IDEAL_OSLOTS :
			    max64(2, min64(MAX_SLOTS, sram_bytes(&en->cfg->arch.sram, SRAM_OUTPUTS) / (s->chunk * cc * s->ab)));
	}
	g->issued = scw_sem_new(0);
	g->room = scw_sem_new(LOAD_WINDOW);
	g->finished = scw_sem_new(0);
	g->stored = scw_sem_new(0);
	if (!g->slots[0] || !g->slots[1] || !g->issued || !g->room || !g->finished || !g->stored) {
		err_input(e, "out of memory");
		goto out;
	}
	mem_reset(en->mem);
	sram_reset(en->sram);
	g->alive = 3;
	scw_spawn(en->kernel, "load", load_thread, g);
	scw_spawn(en->kernel, "matrix", matrix_thread, g);
	scw_spawn(en->kernel, "store", store_thread, g);
	if (scw_run(en->kernel, e) < 0)
		goto out;
	if (g->alive) {
		err_sim(e, "cycle %lld: engine: %s stopped with %d threads still waiting (a deadlock in the tile program)",
			(long long)scw_now(), o->name, g->alive);
		goto out;
	}
	int64_t end = max64(g->matrix_end, g->last_store);
	charge(g, CAT_OUTPUTS, g->matrix_end, end);
	memset(r, 0, sizeof *r);
	r->macs = op_macs(o);
	r->cycles = end - g->t0;
	memcpy(r->cat, g->cat, sizeof r->cat);
	r->compute_cycles = analytic_gemm_cycles(s);
	r->folds = s->folds;
	r->gemm_ops = 1;
	rc = 0;
out:
	for (int i = 0; i < 2; i++)
		scw_sem_free(g->slots[i]);
	scw_sem_free(g->issued);
	scw_sem_free(g->room);
	scw_sem_free(g->finished);
	scw_sem_free(g->stored);
	free(g);
	return rc;
}

/* ---- vector ops ---- */

struct vec_run {
	engine *en;
	const struct op *o;
	int64_t t0, end;
	int64_t cat[CAT_N];
	bool finished;
};

/* The share of total in chunk i of n, rounded so the shares add up to total. */
static int64_t share(int64_t total, int64_t i, int64_t n)
{
	return (int64_t)(((__int128)total * (i + 1)) / n - ((__int128)total * i) / n);
}

static void vector_thread(void *arg)
{
	struct vec_run *v = arg;
	const struct arch *a = &v->en->cfg->arch;
	const struct op *o = v->o;
	int64_t eb = array_elem_bytes(a->array.dtype), chunk_ops = a->vector.lanes * VEC_CHUNK_ROWS;
	int64_t n = o->lane_ops / chunk_ops + (o->lane_ops % chunk_ops != 0), next_load = 0, last_store = v->t0;
	uint64_t in_addr = 0, out_addr = UINT64_C(3) << 40;
	sram *sr = v->en->sram;

	if (n == 0)
		n = 1;
	int64_t arrive[2] = { 0 };
	for (int64_t i = 0; i < n; i++) {
		/* Keep one chunk's load in flight ahead of the one being computed. */
		while (next_load <= i + 1 && next_load < n) {
			int64_t bytes = share(o->in_elems, next_load, n) * eb;
			int64_t issued = scw_now();      /* a memory that pushes back stalls the inputs */
			arrive[next_load % 2] = transfer(v->en, in_addr, bytes, false);
			v->cat[CAT_INPUTS] += scw_now() - issued;
			in_addr += (uint64_t)bytes;
			sram_write(sr, SRAM_INPUTS, bytes);
			next_load++;
		}
		int64_t now = scw_now(), ready = arrive[i % 2];
		if (ready > now) {
			v->cat[CAT_INPUTS] += ready - now;
			scw_wait_until(ready);
		}
		int64_t ops = i < n - 1 ? chunk_ops : o->lane_ops - (n - 1) * chunk_ops;
		int64_t cyc = vector_cycles(&a->vector, ops);
		sram_read(sr, SRAM_INPUTS, share(o->in_elems, i, n) * eb);
		v->cat[CAT_VECTOR] += cyc;
		scw_wait(cyc);
		int64_t out = share(o->out_elems, i, n) * eb;
		sram_write(sr, SRAM_OUTPUTS, out);
		sram_read(sr, SRAM_OUTPUTS, out);
		int64_t issued = scw_now();              /* and the outputs */
		last_store = max64(last_store, transfer(v->en, out_addr, out, true));
		v->cat[CAT_OUTPUTS] += scw_now() - issued;
		out_addr += (uint64_t)out;
	}
	v->end = max64(scw_now(), last_store);
	v->cat[CAT_OUTPUTS] += v->end - scw_now();
	scw_wait_until(v->end);
	v->finished = true;
}

static int vector_op(engine *en, const struct op *o, struct result *r, struct err *e)
{
	struct vec_run v = { en, o, scw_kernel_now(en->kernel), 0, { 0 }, false };
	mem_reset(en->mem);
	sram_reset(en->sram);
	scw_spawn(en->kernel, "vector", vector_thread, &v);
	if (scw_run(en->kernel, e) < 0)
		return -1;
	if (!v.finished)
		return err_sim(e, "cycle %lld: engine: vector unit stopped before finishing %s", (long long)scw_now(), o->name);
	memset(r, 0, sizeof *r);
	r->cycles = v.end - v.t0;
	memcpy(r->cat, v.cat, sizeof r->cat);
	r->compute_cycles = vector_cycles(&en->cfg->arch.vector, o->lane_ops);
	r->vector_ops = 1;
	return 0;
}

int engine_op(engine *en, const struct op *o, int df, struct result *r, struct err *e)
{
	const struct arch *a = &en->cfg->arch;
	en->tr_op++;
	struct result bound;
	/* The closed form checks the op first: its plan, and that its time fits the kernel's clock. */
	if (analytic_op(en->cfg, o, df, en->ideal, &bound, e) < 0)
		return -1;
	int rc = o->kind == OP_GEMM ? gemm_op(en, o, df, r, e) : vector_op(en, o, r, e);
	if (rc < 0)
		return -1;
	r->hbm_read_bytes = mem_read_bytes(en->mem);
	r->hbm_write_bytes = mem_written_bytes(en->mem);
	for (int b = 0; b < SRAM_NBUF; b++) {
		r->sram_read_bytes[b] = sram_reads(en->sram, b);
		r->sram_write_bytes[b] = sram_writes(en->sram, b);
	}
	if (!en->ideal) {
		double bpc = hbm_bytes_per_cycle(&a->hbm, a->clock_ghz), bytes = (double)(r->hbm_read_bytes + r->hbm_write_bytes);
		r->memory_cycles = (int64_t)(bytes / bpc) + ((double)(int64_t)(bytes / bpc) < bytes / bpc);
	}
	return 0;
}
