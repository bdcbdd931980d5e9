/*
 * engine.c - the tile program on SystemC threads (see engine.h); what the
 * threads tell the timeline is engine_report.c (engine_int.h: what the two share).
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "limit.h"
#include "place.h"
#include "plan.h"
#include "stop.h"
#include "vector.h"
#include "xmath.h"

#define LOAD_WINDOW 16       /* loads the load queue may issue ahead of the matrix unit */
#define IDEAL_OSLOTS 8192    /* accumulator tiles with ideal memory: never the constraint */

const struct config *engine_config(const engine *en)
{
	return en->cfg;
}

engine *engine_new(const struct config *cfg, bool ideal, struct err *e)
{
	engine *en = calloc(1, sizeof *en);
	if (!en || !(en->mem = mem_new(&cfg->arch.hbm, cfg->arch.clock_ghz, ideal)) ||
	    !(en->sram = sram_new(&cfg->arch.sram, ideal)) || !(en->ici = ici_new(&cfg->arch.pod, cfg->arch.clock_ghz))) {
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
	place_array_sram(&cfg->arch, &en->asram);
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
	ici_free(en->ici);
	scw_kernel_free(en->kernel);
	if (en->tr_failed) {
		etrace_abandon(en->tr);
	} else if (en->tr) {
		/* Every pass has flushed the file and checked it (etrace_pass_end): only closing is left. */
		struct err e;
		etrace_close(en->tr, &e);
	}
	free(en);
}

/* ---- a pass: ops on the load, matrix and store threads ---- */

/*
 * Moves bytes at addr through off-chip memory for op os, from a thread:
 * while the memory refuses the request, waits until the cycle it names and
 * issues it again; once accepted, its bytes take their place on the bus.
 * Returns the cycle the request completes; if the memory cannot say yet,
 * waits until it can.
 */
static int64_t transfer(struct pass *p, struct opstate *os, uint64_t addr, int64_t bytes, bool write)
{
	engine *en = p->en;
	uint64_t ticket;
	int64_t at, done, t0 = en->mem_t0;
	int64_t before[MEM_MAX_COUNTERS], after[MEM_MAX_COUNTERS];
	/* No other thread runs between a count and an issue: the difference is this request's. */
	for (mem_counts(en->mem, before); !mem_issue(en->mem, scw_now() - t0, addr, bytes, write, &ticket, &at);
	     mem_counts(en->mem, before))
		scw_wait_until(at + t0);
	bus_accept(&p->sync->bus, scw_now(), bytes);
	/* The memory's counters move only for the accepted request: its share is this op's. */
	mem_counts(en->mem, after);
	for (int i = 0; i < MEM_MAX_COUNTERS; i++)
		os->r->mem_counts[i] += after[i] - before[i];
	while ((done = mem_done(en->mem, ticket, scw_now() - t0, &at)) == MEM_NOT_YET)
		scw_wait_until(at + t0);
	done = done > INT64_MAX - t0 ? INT64_MAX : done + t0;
	if (write)
		os->r->hbm_write_bytes += bytes;
	else
		os->r->hbm_read_bytes += bytes;
	return done;
}

/* (engine_int.h) */
void en_made_available(struct pass *p, size_t k, int64_t at)
{
	struct sync *y = p->sync;
	y->avail[k] = max64(y->avail[k], at);
	y->avail_left[k]--;
	scw_event_notify(y->ev);
}

static bool kept(const struct opstate *os, int operand)
{
	return operand == os->s->s_opnd ? os->s->keep_s : os->s->keep_x;
}

/* chip: takes (gives) bytes of buffer buf's pool; never more than the pool holds, so a take always ends. */
static void pool_take(struct pass *p, int buf, int64_t bytes)
{
	scw_sem_take(p->pool[buf], min64(bytes, p->pool_cap[buf]));
}

static void pool_give(struct pass *p, int buf, int64_t bytes)
{
	scw_sem_give(p->pool[buf], min64(bytes, p->pool_cap[buf]));
}

/* (engine_int.h) */
int64_t en_wait_tensor(struct pass *p, int32_t t, size_t self, bool coll)
{
	const struct oplist *l = p->ops;
	int64_t from = scw_now();
	if (!p->chip || t < 0 || (size_t)t >= l->nt || l->t[t].kind != TK_ACT)
		return 0;
	int32_t w = l->t[t].ready;
	if (w < 0 || (size_t)w < p->i0 || (size_t)w >= p->i0 + p->n || (size_t)w - p->i0 == self)
		return 0;
	if (coll && l->v[w].kind != OP_COLL)
		return 0;
	size_t k = (size_t)w - p->i0;
	while (p->sync->avail_left[k] > 0)
		scw_event_wait(p->sync->ev);
	scw_wait_until(p->sync->avail[k]);
	return scw_now() - from;
}

/*
 * chip: waits until input j (0, 1) of op os, when an activation that an
 * earlier op of this pass writes to HBM, is there. Returns the cycles waited.
 */
static int64_t wait_input(struct pass *p, const struct opstate *os, int j)
{
	if (os->o->onchip & (j ? OC_B : OC_A))
		return 0;
	return en_wait_tensor(p, os->o->in[j], (size_t)(os - p->st), false);
}

static void load_thread(void *arg)
{
	struct pass *p = arg;
	struct sched_iter it;
	struct tile_ins ins;
	int64_t j = 0;

	for (size_t k = 0; k < p->n; k++) {
		struct opstate *os = &p->st[k];
		bool took[2] = { false, false };
		int64_t n = 0;
		if (!os->o || !os->s)
			continue;
		sched_iter_init(&it, os->s);
		while (sched_next(&it, &ins)) {
			int opnd = ins.operand, buf;
			if (ins.kind != TI_LOAD)
				continue;
			buf = sram_operand_buf(os->s->df, opnd);
			scw_sem_take(p->room, 1);
			if (os->s->onchip[opnd]) {
				er_load(p, os, n, &ins, true, scw_now(), scw_now());
				p->done[j++ % RING] = scw_now();     /* already in on-chip storage */
			} else {
				wait_input(p, os, opnd);
				if (!kept(os, opnd))
					p->chip ? pool_take(p, buf, ins.bytes) : scw_sem_take(os->slots[opnd], 1);
				else if (p->chip && !took[opnd])
					pool_take(p, buf, os->s->kept_bytes[opnd]);
				took[opnd] = true;
				/* Its issue is reported with its arrival: until then no trace is written past it. */
				int64_t issued = scw_now(), *xm = &p->sync->xmark[2 * p->lane];
				*xm = issued;
				p->done[j % RING] = transfer(p, os, ins.addr, ins.bytes, false);
				er_load(p, os, n, &ins, false, issued, p->done[j % RING]);
				*xm = INT64_MAX;
				j++;
				os->r->sram_write_bytes[buf] += ins.bytes;
			}
			er_trace(p, ET_LOADED, p->done[(j - 1) % RING], os, opnd, n++, NULL);
			scw_sem_give(p->issued, 1);
		}
	}
	p->alive--;
}

static void store_thread(void *arg)
{
	struct pass *p = arg;
	int64_t b = 0;

	/* The matrix unit hands over each store as its block finishes, then one last token. */
	for (;;) {
		scw_sem_take(p->finished, 1);
		if (b == p->nstores && p->matrix_done)
			break;
		int i = (int)(b % RING);
		struct opstate *os = &p->st[p->store_op[i]];
		scw_wait_until(p->block_ready[i]);
		/* Its issue is reported with its completion: until then no trace is written past it. */
		int64_t issued = scw_now();
		p->sync->xmark[2 * p->lane + 1] = issued;
		os->r->sram_read_bytes[sram_operand_buf(os->s->df, OPND_C)] += p->store_bytes[i];
		if (os->s->onchip[OPND_C]) {
			/* Kept on chip: the results go to the activation storage. */
			p->store_done[i] = scw_now();
			os->r->sram_write_bytes[SRAM_INPUTS] += p->store_bytes[i];
		} else {
			p->store_done[i] = transfer(p, os, p->store_addr[i], p->store_bytes[i], true);
		}
		er_store(p, i, issued);
		p->sync->xmark[2 * p->lane + 1] = INT64_MAX;
		os->last_store = max64(os->last_store, p->store_done[i]);
		p->last_store = max64(p->last_store, p->store_done[i]);
		if (p->store_last[i])
			en_made_available(p, (size_t)p->store_op[i], os->last_store);
		er_trace(p, ET_STORED, p->store_done[i], os, 0, p->store_tile ? p->store_tile[i].idx : 0, NULL);
		b++;
		p->nstored++;
		scw_event_notify(p->sync->ev);
	}
	p->alive--;
}

/*
 * Charges the array's wait [from, to) (st->wait_*) to cat. Data that arrived
 * late shares it in proportion to the bytes this fold loaded of each operand
 * (a memory queue delays everything behind the bytes in it, whichever tile is
 * last out); with no late data, the wait that ended last takes it all. The
 * shares, in time order (the data's, then the waits past the last data), go
 * to pc[]; returns how many (at most 6).
 */
static int charge_stall(int64_t cat[CAT_N], const struct array_step *st, const int64_t loaded[2], struct piece pc[6])
{
	int64_t from = st->wait_from, to = st->wait_to, total = 0, left, share[3] = { 0 }, data = from, bytes[3];
	const int64_t *ready = st->wait_ready;
	int n = st->nwait, cats[3], best = 0, np = 0, ncut = 0;
	struct piece cut[3];
	if (to <= from)
		return 0;
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
			int64_t c = min64(data, to);
			cat[cats[i]] += to - c;
			if (to > c)
				cut[ncut++] = (struct piece){ cats[i], st->wait_opnd[i], to - c };
			to = c;
		}
	}
	if (to <= from)
		goto done;
	left = to - from;
	for (int i = 0; i < n; i++) {
		if (ready[i] > ready[best])
			best = i;
		if (ready[i] > from)
			total += bytes[i];
	}
	if (total == 0) {
		cat[cats[best]] += to - from;
		pc[np++] = (struct piece){ cats[best], st->wait_opnd[best], to - from };
		goto done;
	}
	for (int i = 0; i < n; i++) {
		if (ready[i] > from) {
			share[i] = (int64_t)((__int128)(to - from) * bytes[i] / total);
			left -= share[i];
		}
	}
	share[best] += left;
	for (int i = 0; i < n; i++) {
		cat[cats[i]] += share[i];
		if (share[i] > 0)
			pc[np++] = (struct piece){ cats[i], st->wait_opnd[i], share[i] };
	}
done:
	/* The cuts took the latest cycles first. */
	while (ncut)
		pc[np++] = cut[--ncut];
	return np;
}

/* Stream length: T, or longer when a buffer port cannot feed the array's edge; *slow_cat takes the excess. */
/* The stream of fold f, t cycles at the array (sched_fold_view), stretched by any port that cannot feed it. */
static int64_t stream_cycles(const engine *en, const struct sched *s, const struct tile_ins *f, int64_t t, int *slow_cat)
{
	struct sram_fold sf = sram_fold_of(s->df, f->sr, f->sc, f->t, true);
	int left = array_left_operand(s->df), top = array_top_operand(s->df);
	int64_t best = t, x;
	*slow_cat = array_wait_cat(left);
	if ((x = sram_stream_cycles(en->sram, sram_operand_buf(s->df, left), t, sf.rows_t * s->eb)) > best)
		best = x, *slow_cat = array_wait_cat(left);
	if (s->df == DF_OS) {
		if ((x = sram_stream_cycles(en->sram, sram_operand_buf(s->df, top), t, sf.cols_t * s->eb)) > best)
			best = x, *slow_cat = array_wait_cat(top);
		return best;
	}
	/* Accumulating reads and writes Sc partial sums a cycle, on separate read and write ports. */
	if ((x = sram_stream_cycles(en->sram, sram_operand_buf(s->df, OPND_C), t, sf.cols_t * s->ab)) > best)
		best = x, *slow_cat = array_wait_cat(OPND_C);
	return best;
}

static void count_sram(struct opstate *os, const struct tile_ins *f)
{
	const struct sched *s = os->s;
	struct sram_fold sf = sram_fold_of(s->df, f->sr, f->sc, f->t, f->first);
	int64_t rd[SRAM_NBUF] = { 0 }, wr[SRAM_NBUF] = { 0 };
	sram_fold_traffic(s->df, s->eb, s->ab, &sf, rd, wr);
	for (int b = 0; b < SRAM_NBUF; b++) {
		os->r->sram_read_bytes[b] += rd[b];
		os->r->sram_write_bytes[b] += wr[b];
	}
}

/*
 * Between folds and chunks: a stop asked for (stop.h) ends the kernel's run
 * at the end of this delta cycle (once: SystemC warns of a second sc_stop);
 * run_lanes then fails the pass.
 */
void en_stop_point(engine *en)
{
	if (!en->stopping && stop_requested()) {
		en->stopping = true;
		scw_stop(en->kernel);
	}
}

/* The folds of GEMM op os, from now; returns when its last results have left the array. */
static void gemm_body(struct pass *p, struct opstate *os)
{
	const struct sched *s = os->s;
	engine *en = p->en;
	struct sched_iter it;
	struct tile_ins ins;
	struct array_timer tm;
	struct array_fold f;
	struct array_step st;
	struct piece pc[6];
	int lops[2], nl = 0, np;
	int64_t lbytes[2] = { 0 }, t0 = scw_now(), prev_end = t0, *cat = os->r->cat, nfold = 0, nstore = 0;
	int64_t tm_end = t0;            /* the trace's charges so far reach here (the timer's last end) */
	array_timer_init(&tm, &en->cfg->arch.array, s->df, t0);
	er_mark(p, t0);
	sched_iter_init(&it, s);
	while (sched_next(&it, &ins)) {
		if (ins.kind == TI_LOAD) {
			SIM_ASSERT(nl < 2);
			lops[nl++] = ins.operand;
			lbytes[ins.operand] += ins.bytes;
			continue;
		}
		if (ins.kind == TI_STORE) {
			int i = (int)(p->nstores % RING);
			p->store_addr[i] = ins.addr;
			p->store_bytes[i] = ins.bytes;
			p->store_op[i] = (int32_t)(os - p->st);
			p->store_last[i] = ins.inst_last && ins.rep == os->o->repeat - 1;
			er_store_tile(p, os, i, nstore, &ins);
			nstore++;
			p->nstores++;
			scw_sem_give(p->finished, 1);
			continue;
		}
		/* A fold: its loads have been issued, and when they arrive is known. */
		f = (struct array_fold){ .sc = ins.sc, .cont = ins.cont, .last = ins.last, .inst_last = ins.inst_last };
		sched_fold_view(s, &ins, &f.sr, &f.t);
		f.ready[OPND_A] = f.ready[OPND_B] = f.ready[OPND_C] = t0;
		scw_sem_take(p->issued, nl);
		for (int i = 0; i < nl; i++, p->seen++)
			f.ready[lops[i]] = max64(f.ready[lops[i]], p->done[p->seen % RING]);
		scw_sem_give(p->room, nl);
		/* A new block needs an accumulator tile: the one of the block oslots before it, once stored. */
		if (ins.first && p->blocks++ >= os->oslots) {
			int64_t need = p->blocks - 1 - os->oslots;
			while (p->nstored <= need)
				scw_event_wait(p->sync->ev);
			f.ready[OPND_C] = max64(f.ready[OPND_C], p->store_done[need % RING]);
		}
		/* Here: the stationary buffer's port can stretch the shift, any port the stream. */
		f.shift = sram_stream_cycles(en->sram, s->s_buf, f.sr, ins.sr * ins.sc * s->eb);
		f.stream = stream_cycles(en, s, &ins, f.t, &f.stream_cat);
		array_timer_fold(&tm, &f, &st);
		for (int c = 0; c < CAT_N; c++)
			cat[c] += st.cat[c];
		np = charge_stall(cat, &st, lbytes, pc);
		count_sram(os, &ins);
		if (en->want)
			er_fold(p, os, nfold, &ins, prev_end, &st, &f, pc, np, &tm_end);
		nfold++;
		en_stop_point(en);
		if (en->ticks && p->lane == 0 && !(nfold & (ENGINE_FOLDS_TICK - 1)))
			etrace_folds(en->tr, p->i0 + (size_t)(os - p->st), nfold);
		scw_wait_until(st.end);
		prev_end = st.end;
		er_mark(p, prev_end);
		for (int i = 0; i < nl; i++) {
			if (kept(os, lops[i]))
				continue;
			if (p->chip)
				pool_give(p, sram_operand_buf(s->df, lops[i]), lbytes[lops[i]]);
			else
				scw_sem_give(os->slots[lops[i]], 1);
		}
		lbytes[0] = lbytes[1] = 0;
		nl = 0;
		if (ins.last)
			p->block_ready[(p->blocks - 1) % RING] = st.out;
	}
	int64_t end = array_timer_end(&tm, cat);
	er_stall(p, CAT_FILL_DRAIN, prev_end, end);
	er_charge(p, os, CAT_FILL_DRAIN, TC_DRAIN, tm_end, end);
	scw_wait_until(end);
	if (p->chip) {
		for (int opnd = 0; opnd < 2; opnd++)
			if (kept(os, opnd) && !s->onchip[opnd])
				pool_give(p, sram_operand_buf(s->df, opnd), s->kept_bytes[opnd]);
	}
}

/* The share of total in chunk i of n, rounded so the shares add up to total. */
static int64_t share(int64_t total, int64_t i, int64_t n)
{
	return (int64_t)(((__int128)total * (i + 1)) / n - ((__int128)total * i) / n);
}

/*
 * Vector op os, from now, in chunks: load, compute, store, overlapped. Its
 * inputs held on chip are read there, the rest from HBM; a result kept on
 * chip goes to the activation storage. Layer by layer it returns once its
 * stores are in HBM; in a chip pass, once it has computed (readers of a
 * result in HBM wait for the stores: os->avail).
 */
static void vector_body(struct pass *p, struct opstate *os)
{
	engine *en = p->en;
	const struct arch *a = &en->cfg->arch;
	const struct op *o = os->o;
	int64_t *cat = os->r->cat;
	int64_t eb = array_elem_bytes(a->array.dtype), chunk_ops = a->vector.lanes * ENGINE_VEC_CHUNK_ROWS;
	int64_t n = engine_op_folds(en->cfg, o, NULL), next_load = 0, last_store = scw_now();
	int64_t hbm_in = o->in_elems - o->onchip_elems;
	bool out_on = o->onchip & OC_C;
	uint64_t in_addr = sched_base(OPND_A), out_addr = sched_base(OPND_C);
	int64_t arrive[2] = { 0 }, from = scw_now();

	er_mark(p, from);
	cat[CAT_INPUTS] += wait_input(p, os, 0);
	cat[CAT_INPUTS] += wait_input(p, os, 1);
	er_stall(p, CAT_INPUTS, from, scw_now());
	er_charge(p, os, CAT_INPUTS, TC_DEP, from, scw_now());
	for (int64_t i = 0; i < n; i++) {
		/* Keep one chunk's load in flight ahead of the one being computed. */
		while (next_load <= i + 1 && next_load < n) {
			int64_t bytes = share(hbm_in, next_load, n) * eb;
			int64_t issued = scw_now();      /* a memory that pushes back stalls the inputs */
			er_mark(p, issued);
			if (hbm_in) {
				arrive[next_load % 2] = transfer(p, os, in_addr, bytes, false);
				er_vxfer(p, os, ET_VLOAD, issued, arrive[next_load % 2], next_load, in_addr, bytes);
			} else {
				arrive[next_load % 2] = issued;
			}
			cat[CAT_INPUTS] += scw_now() - issued;
			er_stall(p, CAT_INPUTS, issued, scw_now());
			er_charge(p, os, CAT_INPUTS, TC_MEMORY, issued, scw_now());
			in_addr += (uint64_t)bytes;
			os->r->sram_write_bytes[SRAM_INPUTS] += bytes;
			next_load++;
		}
		int64_t now = scw_now(), ready = arrive[i % 2];
		if (ready > now) {
			cat[CAT_INPUTS] += ready - now;
			er_stall(p, CAT_INPUTS, now, ready);
			er_charge(p, os, CAT_INPUTS, TC_WAIT_A, now, ready);
			scw_wait_until(ready);
		}
		int64_t ops = i < n - 1 ? chunk_ops : o->lane_ops - (n - 1) * chunk_ops;
		int64_t cyc = vector_cycles(&a->vector, ops);
		os->r->sram_read_bytes[SRAM_INPUTS] += share(o->in_elems, i, n) * eb;
		cat[CAT_VECTOR] += cyc;
		er_vec(p, os, i, n, cyc);
		en_stop_point(en);
		scw_wait(cyc);
		er_trace(p, ET_VEC_END, scw_now(), os, 0, i, NULL);
		int64_t out = share(o->out_elems, i, n) * eb;
		os->r->sram_write_bytes[SRAM_OUTPUTS] += out;
		os->r->sram_read_bytes[SRAM_OUTPUTS] += out;
		if (out_on) {
			os->r->sram_write_bytes[SRAM_INPUTS] += out;
			continue;
		}
		int64_t issued = scw_now(), stored;     /* and the outputs */
		er_mark(p, issued);
		stored = transfer(p, os, out_addr, out, true);
		er_vxfer(p, os, ET_VSTORE, issued, stored, i, out_addr, out);
		last_store = max64(last_store, stored);
		cat[CAT_OUTPUTS] += scw_now() - issued;
		er_stall(p, CAT_OUTPUTS, issued, scw_now());
		er_charge(p, os, CAT_OUTPUTS, TC_MEMORY, issued, scw_now());
		out_addr += (uint64_t)out;
	}
	os->last_store = last_store;
	p->last_store = max64(p->last_store, last_store);
	int64_t avail = max64(scw_now(), last_store);
	en_made_available(p, (size_t)(os - p->st), avail);
	if (!p->chip) {
		cat[CAT_OUTPUTS] += avail - scw_now();
		er_stall(p, CAT_OUTPUTS, scw_now(), avail);
		er_charge(p, os, CAT_OUTPUTS, TC_STORES, scw_now(), avail);
		scw_wait_until(avail);
	}
}

static void matrix_thread(void *arg)
{
	struct pass *p = arg;
	struct sync *y = p->sync;
	for (size_t k = 0; k < p->n; k++) {
		struct opstate *os = &p->st[k];
		/* Every array starts op k when all are done with op k - 1. */
		if (k > 0) {
			while (y->fin_left[k - 1] > 0)
				scw_event_wait(y->ev);
			scw_wait_until(y->finish[k - 1]);
		}
		int64_t t0 = scw_now(), fixed = os->o ? arch_op_fixed_cycles(&p->en->cfg->arch) : 0;
		er_mark(p, t0);
		er_op(p, os, k, t0);
		if (os->o) {
			/* The results of collectives it reads: what is still on the links is exposed. */
			for (int j = 0; j < 2; j++)
				os->r->cat[CAT_EXPOSED_COMM] += en_wait_tensor(p, os->o->in[j], k, true);
			er_stall(p, CAT_EXPOSED_COMM, t0, scw_now());
			er_charge(p, os, CAT_EXPOSED_COMM, TC_DEP, t0, scw_now());
		}
		if (fixed > 0) {
			/* The op's fixed time: the array waits it out; the loads run on. */
			os->r->cat[CAT_OP_FIXED] += fixed;
			er_stall(p, CAT_OP_FIXED, t0, t0 + fixed);
			er_charge(p, os, CAT_OP_FIXED, TC_FIXED, t0, t0 + fixed);
			scw_wait(fixed);
		}
		if (os->o && os->s)
			gemm_body(p, os);
		else if (os->o)
			vector_body(p, os);
		if (k + 1 == p->n && y->coll_end) {
			/* The pass ends when its collectives do: what is still on the links after the last op is exposed. */
			int64_t from = scw_now();
			for (size_t c = 0; c < p->n; c++)
				if (p->ops->v[p->i0 + c].kind == OP_COLL) {
					while (y->avail_left[c] > 0)
						scw_event_wait(y->ev);
					scw_wait_until(y->avail[c]);
				}
			os->r->cat[CAT_EXPOSED_COMM] += scw_now() - from;
			er_stall(p, CAT_EXPOSED_COMM, from, scw_now());
			er_charge(p, os, CAT_EXPOSED_COMM, TC_DEP, from, scw_now());
		}
		os->r->cycles = scw_now() - t0;
		er_trace(p, ET_OPEND, scw_now(), os, 0, (int64_t)(p->i0 + k), NULL);
		y->finish[k] = max64(y->finish[k], scw_now());
		/* The last array done with op k closes its window, but the last op's, which ends with the stores. */
		if (--y->fin_left[k] == 0 && k + 1 < p->n)
			y->bus_bytes[k] = bus_close(&y->bus, scw_now());
		scw_event_notify(y->ev);
	}
	p->matrix_end = scw_now();
	er_mark(p, p->matrix_end);
	p->matrix_done = true;
	scw_sem_give(p->finished, 1);
	p->alive--;
}

/* Streaming tiles an operand's buffer holds beside what the plan keeps there (one op a pass). */
static int64_t slots_for(const engine *en, const struct opstate *os, int operand, int64_t tile)
{
	const struct sched *s = os->s;
	if (en->ideal || s->compat || kept(os, operand))
		return SRAM_MAX_SLOTS;
	return sram_stream_slots(&en->asram, sram_operand_buf(s->df, operand), s->footprint, tile);
}

/* Sets up op os of a pass: its accumulator tiles, and (one op a pass) its streaming slots. */
static int op_setup(struct pass *p, struct opstate *os, struct err *e)
{
	const engine *en = p->en;
	const struct sched *s = os->s;
	const struct op *o = os->o;
	int64_t acc_tile;
	if (!o || !s)
		return 0;
	if (s->df == DF_OS) {
		int64_t rr = min64(s->R, o->m), cc = min64(s->C, o->n);
		if (!p->chip) {
			os->slots[OPND_A] = scw_sem_new(slots_for(en, os, OPND_A, rr * s->kpart * s->eb));
			os->slots[OPND_B] = scw_sem_new(slots_for(en, os, OPND_B, s->kpart * cc * s->eb));
		}
		acc_tile = en->ideal ? 0 : rr * cc * s->ab;
	} else {
		int64_t rr = min64(s->R, s->rows), cc = min64(s->C, s->cols);
		if (!p->chip) {
			os->slots[s->s_opnd] = scw_sem_new(slots_for(en, os, s->s_opnd, rr * cc * s->eb));
			os->slots[s->x_opnd] = scw_sem_new(slots_for(en, os, s->x_opnd, rr * s->chunk * s->eb));
		}
		acc_tile = en->ideal || s->compat ? 0 : s->chunk * cc * s->ab;
	}
	os->oslots = acc_tile ? sram_stream_slots(&en->asram, SRAM_OUTPUTS, s->footprint, acc_tile)
			      : IDEAL_OSLOTS;
	if (!p->chip && (!os->slots[0] || !os->slots[1]))
		return err_nomem(e, NULL);
	return 0;
}

static void pass_free(struct pass *p, bool own_pools)
{
	if (!p)
		return;
	for (size_t k = 0; p->st && k < p->n; k++)
		for (int i = 0; i < 2; i++)
			scw_sem_free(p->st[k].slots[i]);
	for (int b = 0; own_pools && b < SRAM_NBUF; b++) {
		bool first = true;
		for (int a = 0; a < b; a++)
			if (p->pool[a] == p->pool[b])
				first = false;
		if (first)
			scw_sem_free(p->pool[b]);
	}
	scw_sem_free(p->issued);
	scw_sem_free(p->room);
	scw_sem_free(p->finished);
	free(p->store_tile);
	free(p->st);
	free(p);
}

/*
 * chip: this array's pools in its core's buffers (buffers that share a pool
 * share one semaphore), bounded unless ideal: each array of a core has its
 * share, as it plans with (plan.h). Shared dynamically, one
 * array's loads running ahead could take the room another still needs for
 * the op that all must finish first.
 */
static int make_pools(struct pass *p)
{
	const struct sram_params *sp = &p->en->asram;
	for (int b = 0; b < SRAM_NBUF; b++) {
		for (int a = 0; a < b && !p->pool[b]; a++)
			if (sram_shares(sp, a, b))
				p->pool[b] = p->pool[a], p->pool_cap[b] = p->pool_cap[a];
		if (!p->pool[b]) {
			p->pool_cap[b] = p->en->ideal ? INT64_MAX / 4 : sram_pool_bytes(sp, b);
			if (!(p->pool[b] = scw_sem_new(p->pool_cap[b])))
				return -1;
		}
	}
	return 0;
}

/* A lane: one array's pass over its parts of ops i0 .. i0 + n - 1, results into res[0 .. n). */
static struct pass *lane_new(engine *en, struct sync *y, int lane, const struct oplist *ops, size_t i0, size_t n,
			     const struct chip_part *parts, int lanes, bool chip, struct result *res, struct err *e)
{
	struct pass *p = calloc(1, sizeof *p);
	if (!p || !(p->st = calloc(n ? n : 1, sizeof *p->st))) {
		free(p);
		err_nomem(e, NULL);
		return NULL;
	}
	p->en = en;
	p->sync = y;
	p->lane = lane;
	p->ops = ops;
	p->i0 = i0;
	p->n = n;
	p->chip = chip;
	p->last_store = scw_kernel_now(en->kernel);
	for (size_t k = 0; k < n; k++) {
		struct opstate *os = &p->st[k];
		const struct chip_part *pt = &parts[k * (size_t)lanes + (size_t)lane];
		os->o = pt->op;
		os->s = pt->op && pt->op->kind == OP_GEMM ? pt->s : NULL;
		os->r = &res[k];
		memset(os->r, 0, sizeof *os->r);
		if (op_setup(p, os, e) < 0) {
			pass_free(p, false);
			return NULL;
		}
	}
	p->issued = scw_sem_new(0);
	p->room = scw_sem_new(LOAD_WINDOW);
	p->finished = scw_sem_new(0);
	if (!p->issued || !p->room || !p->finished ||
	    (en->want && !(p->store_tile = malloc(RING * sizeof *p->store_tile)))) {
		pass_free(p, false);
		err_nomem(e, NULL);
		return NULL;
	}
	return p;
}

static void sync_free(struct sync *y)
{
	if (!y)
		return;
	scw_event_free(y->ev);
	free(y->finish);
	free(y->fin_left);
	free(y->avail);
	free(y->avail_left);
	free(y->mark);
	free(y->xmark);
	free(y->bus_bytes);
	free(y->chains);
	free(y->nchains);
	free(y->chains_left);
	free(y->coll_end);
	free(y->ici_runs);
	free(y);
}

static struct sync *sync_new(int lanes, size_t n, const struct chip_part *parts)
{
	struct sync *y = calloc(1, sizeof *y);
	size_t m = n ? n : 1;
	if (!y || !(y->finish = calloc(m, sizeof *y->finish)) || !(y->fin_left = calloc(m, sizeof *y->fin_left)) ||
	    !(y->avail = calloc(m, sizeof *y->avail)) || !(y->avail_left = calloc(m, sizeof *y->avail_left)) ||
	    !(y->mark = calloc((size_t)lanes, sizeof *y->mark)) || !(y->xmark = malloc(2 * (size_t)lanes * sizeof *y->xmark)) ||
	    !(y->bus_bytes = calloc(m, sizeof *y->bus_bytes)) || !(y->ev = scw_event_new())) {
		sync_free(y);
		return NULL;
	}
	y->lanes = lanes;
	for (int q = 0; q < 2 * lanes; q++)
		y->xmark[q] = INT64_MAX;
	for (size_t k = 0; k < n; k++) {
		y->fin_left[k] = lanes;
		for (int q = 0; q < lanes; q++)
			y->avail_left[k] += parts[k * (size_t)lanes + (size_t)q].op != NULL;
	}
	return y;
}

/*
 * Adds lane results lr[q][k] up into res[k]: counts summed; the cycles and
 * their categories those of the array that took longest (they all started
 * the op together, so its time is the op's).
 */
static void merge(int lanes, size_t n, struct result **lr, struct result *res)
{
	for (size_t k = 0; k < n; k++) {
		int slow = 0;
		memset(&res[k], 0, sizeof res[k]);
		for (int q = 0; q < lanes; q++) {
			if (lr[q][k].cycles > lr[slow][k].cycles)
				slow = q;
			result_add(&res[k], &lr[q][k]);
		}
		res[k].cycles = lr[slow][k].cycles;
		memcpy(res[k].cat, lr[slow][k].cat, sizeof res[k].cat);
	}
}

/*
 * Runs ops i0 .. i0 + n - 1 of ops, op k's part on array q being
 * parts[k * lanes + q], as one kernel run, results into res[0 .. n). chip:
 * several ops share the buffers and overlap; else n is 1 and the op runs
 * alone on a quiet machine.
 */
static int run_lanes(engine *en, const struct oplist *ops, size_t i0, size_t n, int lanes,
		     const struct chip_part *parts, bool chip, struct result *res, struct err *e)
{
	struct pass **lane = calloc((size_t)lanes, sizeof *lane);
	struct result **lr = calloc((size_t)lanes, sizeof *lr);
	struct sync *y = sync_new(lanes, n, parts);
	int rc = -1, alive = 0;
	int64_t t0 = scw_kernel_now(en->kernel), matrix_end = t0, last_store = t0, moved = 0;

	if (!lane || !lr || !y)
		goto nomem;
	for (int q = 0; q < lanes; q++) {
		if (!(lr[q] = calloc(n ? n : 1, sizeof *lr[q])))
			goto nomem;
		if (!(lane[q] = lane_new(en, y, q, ops, i0, n, parts, lanes, chip, lr[q], e)))
			goto out;
		if (chip && make_pools(lane[q]) < 0)
			goto nomem;
	}
	/*
	 * Layer by layer, each pass starts from a quiet machine, and the memory
	 * counts from the pass's start: an op's result is then the same wherever
	 * it runs (run.c reuses it for identical ops). A chip's passes go on from
	 * one another on the kernel's clock.
	 */
	en->mem_t0 = chip ? 0 : t0;
	if (!chip) {
		mem_reset(en->mem);
		sram_reset(en->sram);
		ici_reset(en->ici);
	}
	moved = mem_read_bytes(en->mem) + mem_written_bytes(en->mem);
	bus_init(&y->bus, mem_bytes_per_cycle(en->mem), t0);
	if (en->tr)
		etrace_pass(en->tr, t0, i0, n);
	for (int q = 0; q < lanes; q++) {
		struct pass *p = lane[q];
		p->alive = 3;
		scw_spawn(en->kernel, "load", load_thread, p);
		/* The thread that runs the ops: named for the unit of a pass's first op, as errors quote it. */
		scw_spawn(en->kernel, n && ops->v[i0].kind == OP_VEC ? "vector" : "matrix", matrix_thread, p);
		scw_spawn(en->kernel, "store", store_thread, p);
	}
	if (en_ici_start(en, y, lane[0]) < 0)
		goto nomem;
	if (scw_run(en->kernel, e) < 0 || stop_check(e) < 0)
		goto out;
	alive = y->ici_alive;
	for (int q = 0; q < lanes; q++) {
		alive += lane[q]->alive;
		matrix_end = max64(matrix_end, lane[q]->matrix_end);
		last_store = max64(last_store, lane[q]->last_store);
	}

	if (alive) {
		char name[OP_NAME_MAX];
		err_sim(e, "cycle %lld: engine: %s stopped with %d threads still waiting (a deadlock in the tile program)",
			(long long)scw_now(), op_name(&ops->v[i0], name, sizeof name), alive);
		goto out;
	}
	merge(lanes, n, lr, res);
	/*
	 * Each op's window bytes, as the shift from its own HBM bytes. The
	 * windows hold every byte the memory accepted in the pass, by the
	 * memory's own count: nothing lost, nothing twice.
	 */
	if (n)
		y->bus_bytes[n - 1] = bus_close_last(&y->bus);
	moved = mem_read_bytes(en->mem) + mem_written_bytes(en->mem) - moved;
	for (size_t k = 0; k < n; k++) {
		res[k].bus_shift_bytes = y->bus_bytes[k] - (res[k].hbm_read_bytes + res[k].hbm_write_bytes);
		moved -= y->bus_bytes[k];
	}
	SIM_ASSERT(moved == 0);
	/* The stores still going when the arrays are done end the run: the last op waits for them. */
	if (n) {
		int64_t tail = max64(matrix_end, last_store) - matrix_end;
		res[n - 1].cycles += tail;
		res[n - 1].cat[CAT_OUTPUTS] += tail;
	}
	if (en->tr) {
		int64_t cycles = 0;
		for (int q = 0; q < lanes; q++)
			er_stall(lane[q], CAT_OUTPUTS, lane[q]->matrix_end, lane[q]->last_store);
		for (size_t k = 0; k < n; k++)
			cycles += res[k].cycles;
		if (etrace_pass_end(en->tr, cycles, e) < 0)
			goto out;
	}
	for (size_t k = 0; k < n; k++) {
		const struct op *o = &ops->v[i0 + k];
		struct result *r = &res[k];
		r->macs = 0;
		r->folds = 0;
		for (int q = 0; q < lanes; q++) {
			const struct chip_part *pt = &parts[k * (size_t)lanes + (size_t)q];
			if (pt->op && o->kind == OP_GEMM) {
				r->macs += op_macs(pt->op);
				r->folds += pt->s->folds;
			}
		}
		r->gemm_ops = o->kind == OP_GEMM;
		r->vector_ops = o->kind == OP_VEC;
		if (o->kind == OP_COLL)
			plan_coll_counts(&en->cfg->arch, o, en->ideal, r);        /* however long it queued */
		if (!en->ideal)
			r->memory_cycles = arch_memory_cycles(&en->cfg->arch, r->hbm_read_bytes + r->hbm_write_bytes);
	}
	rc = 0;
	goto out;
nomem:
	err_nomem(e, NULL);
out:
	/*
	 * A failed pass fails the run, and so does a run whose cycles pass
	 * RUN_MAX_CYCLES (run.c refuses it once the pass is added): either way
	 * the trace is of a failed run, and goes when the engine is freed.
	 */
	if (en->tr && (rc < 0 || etrace_cycles(en->tr) > RUN_MAX_CYCLES))
		en->tr_failed = true;
	for (int q = 0; lane && q < lanes; q++) {
		pass_free(lane[q], chip);
		if (lr)
			free(lr[q]);
	}
	free(lane);
	free(lr);
	sync_free(y);
	return rc;
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
 * the 2^62 cycles a run may take (run.h), so passes follow one another on it.
 */
int engine_op(engine *en, const struct op *o, const struct sched *s, struct result *r, struct err *e)
{
	struct oplist one = { .v = (struct op *)o, .n = 1, .cap = 1 };
	struct chip_part part = { o, s };
	return run_lanes(en, &one, 0, 1, 1, &part, false, r, e);
}

int engine_run(engine *en, const struct oplist *ops, size_t i0, size_t n, const struct chip_part *parts, bool chip,
	       struct result *res, struct err *e)
{
	return run_lanes(en, ops, i0, n, (int)arch_arrays(&en->cfg->arch), parts, chip, res, e);
}
