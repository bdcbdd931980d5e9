/*
 * engine.c - the tile program on SystemC threads (see engine.h).
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "memory.h"
#include "schedule.h"
#include "scw.h"
#include "sram.h"
#include "vector.h"
#include "xmath.h"

#define RING 16384           /* loads or blocks in flight between two threads: more than the longest
				drain (R + C - 2 < 8192 blocks at one a cycle) with ideal memory */
#define LOAD_WINDOW 16       /* loads the load queue may issue ahead of the matrix unit */
#define IDEAL_OSLOTS 8192    /* accumulator tiles with ideal memory: never the constraint */

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
		err_nomem(e, NULL);
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
		return err_nomem(e, NULL);
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

/* ---- GEMM ops ---- */

struct gemm_run {
	engine *en;
	const struct sched *s;       /* borrowed */
	int64_t t0;
	scw_sem *slots[2];           /* free streaming tiles of A and B */
	scw_sem *issued;             /* loads issued, not yet seen by the matrix unit */
	scw_sem *room;               /* free entries of done[] */
	scw_sem *finished;           /* output blocks the array has finished */
	scw_sem *stored;             /* output blocks whose store has been issued */
	int64_t oslots;              /* accumulator tiles */
	int64_t done[RING];          /* arrival cycle of load j, at j % RING */
	int64_t block_ready[RING];   /* cycle block b has left the array */
	int64_t store_done[RING];    /* cycle block b is in HBM */
	uint64_t store_addr[RING];   /* where block b goes, and its bytes: the program's store, */
	int64_t store_bytes[RING];   /* handed over by the matrix unit */
	int64_t nstores;             /* stores handed over so far */
	bool matrix_done;            /* no more stores will come */
	int64_t matrix_end, last_store;
	int64_t cat[CAT_N];
	int alive;                   /* threads not yet finished */
};

static bool kept(const struct gemm_run *g, int operand)
{
	return operand == g->s->s_opnd ? g->s->keep_s : g->s->keep_x;
}

static void load_thread(void *arg)
{
	struct gemm_run *g = arg;
	struct sched_iter it;
	struct tile_ins ins;
	int64_t j = 0;

	sched_iter_init(&it, g->s);
	while (sched_next(&it, &ins)) {
		if (ins.kind != TI_LOAD)
			continue;
		scw_sem_take(g->room, 1);
		if (!kept(g, ins.operand))
			scw_sem_take(g->slots[ins.operand], 1);
		g->done[j++ % RING] = transfer(g->en, ins.addr, ins.bytes, false);
		sram_write(g->en->sram, sram_operand_buf(g->s->df, ins.operand), ins.bytes);
		g->en->tr_loads++;
		scw_sem_give(g->issued, 1);
	}
	g->alive--;
}

static void store_thread(void *arg)
{
	struct gemm_run *g = arg;
	int64_t b = 0;

	/* The matrix unit hands over each store as its block finishes, then one last token. */
	for (;;) {
		scw_sem_take(g->finished, 1);
		if (b == g->nstores && g->matrix_done)
			break;
		scw_wait_until(g->block_ready[b % RING]);
		sram_read(g->en->sram, sram_operand_buf(g->s->df, OPND_C), g->store_bytes[b % RING]);
		g->store_done[b % RING] = transfer(g->en, g->store_addr[b % RING], g->store_bytes[b % RING], true);
		g->last_store = max64(g->last_store, g->store_done[b % RING]);
		b++;
		g->en->tr_stores++;
		scw_sem_give(g->stored, 1);
	}
	g->alive--;
}

/*
 * Charges the array's wait [from, to) (st->wait_*). Data that arrived late
 * shares it in proportion to the bytes this fold loaded of each operand (a
 * memory queue delays everything behind the bytes in it, whichever tile is
 * last out); with no late data, the wait that ended last takes it all.
 */
static void charge_stall(struct gemm_run *g, const struct array_step *st, const int64_t loaded[2])
{
	int64_t from = st->wait_from, to = st->wait_to, total = 0, left, share[3] = { 0 }, data = from, bytes[3];
	const int64_t *ready = st->wait_ready;
	int n = st->nwait, cats[3], best = 0;
	if (to <= from)
		return;
	for (int i = 0; i < n; i++) {
		bytes[i] = st->wait_opnd[i] == OPND_C ? 0 : loaded[st->wait_opnd[i]];
		cats[i] = array_wait_cat(st->wait_opnd[i]);
	}
	/* Entries with no bytes (the accumulator tile) wait on their own: past the last data, the stall is theirs. */
	for (int i = 0; i < n; i++)
		if (bytes[i] > 0 && ready[i] > data)
			data = ready[i];
	for (int i = 0; i < n; i++) {
		if (!bytes[i] && ready[i] > data && ready[i] >= ready[best]) {
			int64_t cut = min64(data, to);
			g->cat[cats[i]] += to - cut;
			to = cut;
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
		g->cat[cats[best]] += to - from;
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

/* Stream length: T, or longer when a buffer port cannot feed the array's edge; *slow_cat takes the excess. */
static int64_t stream_cycles(const struct gemm_run *g, const struct tile_ins *f, int *slow_cat)
{
	const struct sched *s = g->s;
	struct sram_fold sf = sram_fold_of(s->df, f->sr, f->sc, f->t, true);
	int left = array_left_operand(s->df), top = array_top_operand(s->df);
	int64_t t = f->t, best = t, x;
	*slow_cat = array_wait_cat(left);
	if ((x = sram_stream_cycles(g->en->sram, sram_operand_buf(s->df, left), t, sf.rows_t * s->eb)) > best)
		best = x, *slow_cat = array_wait_cat(left);
	if (s->df == DF_OS) {
		if ((x = sram_stream_cycles(g->en->sram, sram_operand_buf(s->df, top), t, sf.cols_t * s->eb)) > best)
			best = x, *slow_cat = array_wait_cat(top);
		return best;
	}
	/* Accumulating reads and writes Sc partial sums a cycle, on separate read and write ports. */
	if ((x = sram_stream_cycles(g->en->sram, sram_operand_buf(s->df, OPND_C), t, sf.cols_t * s->ab)) > best)
		best = x, *slow_cat = array_wait_cat(OPND_C);
	return best;
}

static void count_sram(struct gemm_run *g, const struct tile_ins *f)
{
	const struct sched *s = g->s;
	struct sram_fold sf = sram_fold_of(s->df, f->sr, f->sc, f->t, f->first);
	int64_t rd[SRAM_NBUF] = { 0 }, wr[SRAM_NBUF] = { 0 };
	sram_fold_traffic(s->df, s->eb, s->ab, &sf, rd, wr);
	for (int b = 0; b < SRAM_NBUF; b++) {
		sram_read(g->en->sram, b, rd[b]);
		sram_write(g->en->sram, b, wr[b]);
	}
}

static void matrix_thread(void *arg)
{
	struct gemm_run *g = arg;
	const struct sched *s = g->s;
	const struct array_params *ap = &g->en->cfg->arch.array;
	struct sched_iter it;
	struct tile_ins ins;
	struct array_timer tm;
	struct array_fold f;
	struct array_step st;
	int lops[2], nl = 0;
	int64_t lbytes[2] = { 0 };
	int64_t j = 0, blocks = 0, prev_end = g->t0;

	array_timer_init(&tm, ap, s->df, g->t0);
	sched_iter_init(&it, s);
	while (sched_next(&it, &ins)) {
		if (ins.kind == TI_LOAD) {
			SIM_ASSERT(nl < 2);
			lops[nl++] = ins.operand;
			lbytes[ins.operand] += ins.bytes;
			continue;
		}
		if (ins.kind == TI_STORE) {
			g->store_addr[g->nstores % RING] = ins.addr;
			g->store_bytes[g->nstores % RING] = ins.bytes;
			g->nstores++;
			scw_sem_give(g->finished, 1);
			continue;
		}
		/* A fold: its loads have been issued, and when they arrive is known. */
		f = (struct array_fold){ .sr = ins.sr, .sc = ins.sc, .t = ins.t, .cont = ins.cont, .last = ins.last,
					 .inst_last = ins.inst_last };
		f.ready[OPND_A] = f.ready[OPND_B] = f.ready[OPND_C] = g->t0;
		scw_sem_take(g->issued, nl);
		for (int i = 0; i < nl; i++, j++)
			f.ready[lops[i]] = max64(f.ready[lops[i]], g->done[j % RING]);
		scw_sem_give(g->room, nl);
		if (ins.first && blocks++ >= g->oslots) {
			scw_sem_take(g->stored, 1);
			f.ready[OPND_C] = g->store_done[(blocks - 1 - g->oslots) % RING];
		}
		/* Here: the stationary buffer's port can stretch the shift, any port the stream. */
		f.shift = sram_stream_cycles(g->en->sram, s->s_buf, ins.sr, ins.sr * ins.sc * s->eb);
		f.stream = stream_cycles(g, &ins, &f.stream_cat);
		array_timer_fold(&tm, &f, &st);
		for (int c = 0; c < CAT_N; c++)
			g->cat[c] += st.cat[c];
		charge_stall(g, &st, lbytes);
		lbytes[0] = lbytes[1] = 0;
		count_sram(g, &ins);
		if (g->en->tracing) {
			/* For the trace: the array waits from the end of the last stream until this one starts. */
			g->en->tr_stall = st.start > prev_end;
			scw_wait_until(st.start);
			g->en->tr_stall = 0;
		}
		scw_wait_until(st.end);
		prev_end = st.end;
		g->en->tr_folds++;
		for (int i = 0; i < nl; i++)
			if (!kept(g, lops[i]))
				scw_sem_give(g->slots[lops[i]], 1);
		nl = 0;
		if (ins.last)
			g->block_ready[(blocks - 1) % RING] = st.out;
	}
	g->matrix_done = true;
	scw_sem_give(g->finished, 1);
	g->matrix_end = array_timer_end(&tm, g->cat);
	scw_wait_until(g->matrix_end);
	g->alive--;
}

/* Streaming tiles an operand's buffer holds beside what the plan keeps there. */
static int64_t slots_for(const struct gemm_run *g, int operand, int64_t tile)
{
	const struct sched *s = g->s;
	if (g->en->ideal || s->compat || kept(g, operand))
		return SRAM_MAX_SLOTS;
	return sram_stream_slots(&g->en->cfg->arch.sram, sram_operand_buf(s->df, operand), s->footprint, tile);
}

static int gemm_op(engine *en, const struct op *o, const struct sched *s, struct result *r, struct err *e)
{
	struct gemm_run *g = calloc(1, sizeof *g);
	int64_t acc_tile;
	int rc = -1;

	if (!g)
		return err_nomem(e, NULL);
	g->s = s;
	g->en = en;
	g->t0 = scw_kernel_now(en->kernel);
	if (s->df == DF_OS) {
		int64_t rr = min64(s->R, o->m), cc = min64(s->C, o->n);
		g->slots[OPND_A] = scw_sem_new(slots_for(g, OPND_A, rr * s->kpart * s->eb));
		g->slots[OPND_B] = scw_sem_new(slots_for(g, OPND_B, s->kpart * cc * s->eb));
		acc_tile = en->ideal ? 0 : rr * cc * s->ab;
	} else {
		int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
		g->slots[s->s_opnd] = scw_sem_new(slots_for(g, s->s_opnd, rr * cc * s->eb));
		g->slots[s->x_opnd] = scw_sem_new(slots_for(g, s->x_opnd, rr * s->chunk * s->eb));
		acc_tile = en->ideal || s->compat ? 0 : s->chunk * cc * s->ab;
	}
	g->oslots = acc_tile ? sram_stream_slots(&en->cfg->arch.sram, SRAM_OUTPUTS, s->footprint, acc_tile) : IDEAL_OSLOTS;
	g->issued = scw_sem_new(0);
	g->room = scw_sem_new(LOAD_WINDOW);
	g->finished = scw_sem_new(0);
	g->stored = scw_sem_new(0);
	if (!g->slots[0] || !g->slots[1] || !g->issued || !g->room || !g->finished || !g->stored) {
		err_nomem(e, NULL);
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
		char name[OP_NAME_MAX];
		err_sim(e, "cycle %lld: engine: %s stopped with %d threads still waiting (a deadlock in the tile program)",
			(long long)scw_now(), op_name(o, name, sizeof name), g->alive);
		goto out;
	}
	int64_t end = max64(g->matrix_end, g->last_store);
	if (end > g->matrix_end)
		g->cat[CAT_OUTPUTS] += end - g->matrix_end;
	memset(r, 0, sizeof *r);
	r->macs = op_macs(o);
	r->cycles = end - g->t0;
	memcpy(r->cat, g->cat, sizeof r->cat);
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
	int64_t eb = array_elem_bytes(a->array.dtype), chunk_ops = a->vector.lanes * ENGINE_VEC_CHUNK_ROWS;
	int64_t n = engine_op_folds(v->en->cfg, o, NULL), next_load = 0, last_store = v->t0;
	uint64_t in_addr = sched_base(OPND_A), out_addr = sched_base(OPND_C);
	sram *sr = v->en->sram;

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
	if (!v.finished) {
		char name[OP_NAME_MAX];
		return err_sim(e, "cycle %lld: engine: vector unit stopped before finishing %s", (long long)scw_now(),
			       op_name(o, name, sizeof name));
	}
	memset(r, 0, sizeof *r);
	r->cycles = v.end - v.t0;
	memcpy(r->cat, v.cat, sizeof r->cat);
	r->vector_ops = 1;
	return 0;
}

int64_t engine_op_folds(const struct config *cfg, const struct op *o, const struct sched *s)
{
	int64_t chunk_ops = cfg->arch.vector.lanes * ENGINE_VEC_CHUNK_ROWS;
	if (o->kind == OP_GEMM)
		return sched_fold_ins(s);
	return o->lane_ops <= chunk_ops ? 1 : o->lane_ops / chunk_ops + (o->lane_ops % chunk_ops != 0);
}

/*
 * One kernel serves the whole run: its clock counts to SCW_LAST_CYCLE, past
 * the 2^62 cycles a run may take (run.h), so ops follow one another on it.
 */
int engine_op(engine *en, const struct op *o, const struct sched *s, struct result *r, struct err *e)
{
	const struct arch *a = &en->cfg->arch;
	en->tr_op++;
	int rc = o->kind == OP_GEMM ? gemm_op(en, o, s, r, e) : vector_op(en, o, r, e);
	if (rc < 0)
		return -1;
	r->hbm_read_bytes = mem_read_bytes(en->mem);
	r->hbm_write_bytes = mem_written_bytes(en->mem);
	for (int b = 0; b < SRAM_NBUF; b++) {
		r->sram_read_bytes[b] = sram_reads(en->sram, b);
		r->sram_write_bytes[b] = sram_writes(en->sram, b);
	}
	if (!en->ideal)
		r->memory_cycles = arch_memory_cycles(a, r->hbm_read_bytes + r->hbm_write_bytes);
	return 0;
}
