/*
 * test_opkey.c - the reuse cache's key (sim/run/opcache.h) against struct op
 * (sim/lower/lower.h), field by field. Every field of an op is listed below with
 * what it means for a result: a field that can change the result of a GEMM
 * (or of a vector op) must change that op's key when it changes, or the
 * cache would hand back another op's result; a field that only names or
 * places the op in the workload (name, layer index, position, tensors) must
 * leave the key alone, or identical layers would never be reused. The run
 * parameters in the key (config hash, model, dataflow, ideal memory) are
 * perturbed too.
 *
 * New fields: the list must cover struct op. The test knows its size and the
 * bytes its fields take (OP_SIZE, OP_FIELD_BYTES below) and fails with a
 * message naming this file when either moves. A field small enough to sit
 * in one of today's padding holes (after block, kind, b_weight, vec, spill)
 * moves neither: C cannot list a struct's members, and the size is the one
 * check it allows.
 */
#include <stddef.h>
#include <string.h>

#include "opcache.h"
#include "run.h"
#include "tests.h"
#include "vector.h"

/* struct op as of this list: 176 bytes on x86-64, 156 of them fields (20 of padding). */
#define OP_SIZE 216
#define OP_FIELD_BYTES 192

enum field_role {
	F_NAMES,        /* names or places the op: never in the key */
	F_GEMM,         /* changes a GEMM's result; a vector op ignores it */
	F_VEC,          /* changes a vector op's (or a collective's) result; a GEMM ignores it */
	F_BOTH,         /* changes either's result */
	F_ROLE,         /* operand roles: a GEMM's result; a vector op's key may hold them too */
};

static const struct field {
	const char *name;
	size_t off, size;
	enum field_role role;
	bool is_bool;
} fields[] = {
#define F(f, r) { #f, offsetof(struct op, f), sizeof(((struct op *)0)->f), r, false }
#define FB(f, r) { #f, offsetof(struct op, f), sizeof(((struct op *)0)->f), r, true }
	F(layer_name, F_NAMES),
	F(suffix, F_NAMES),
	F(block, F_NAMES),
	F(layer, F_NAMES),
	F(pos.file, F_NAMES),
	F(pos.line, F_NAMES),
	F(pos.col, F_NAMES),
	F(kind, F_BOTH),
	F(phase, F_NAMES),
	F(grad, F_NAMES),
	F(row, F_NAMES),
	F(m, F_GEMM),
	F(k, F_GEMM),
	F(n, F_GEMM),
	F(repeat, F_GEMM),
	FB(a_weight, F_ROLE),
	FB(b_weight, F_ROLE),
	F(a_elems, F_GEMM),
	F(c_elems, F_GEMM),
	F(vec, F_VEC),
	F(in_elems, F_VEC),
	F(out_elems, F_VEC),
	F(lane_ops, F_VEC),
	F(in[0], F_NAMES),
	F(in[1], F_NAMES),
	F(out, F_NAMES),
	F(onchip, F_BOTH),
	F(spill, F_BOTH),
	F(onchip_elems, F_VEC),
	F(spill_elems, F_VEC),
	F(coll, F_VEC),
	F(grp, F_VEC),
	F(coll_eb, F_VEC),
	F(coll_elems, F_VEC),
	FB(identity, F_VEC),
#undef F
#undef FB
};
#define NFIELDS (int)(sizeof fields / sizeof *fields)

/* A GEMM (10 x 6 x 5, B the weight) or a vector op (a ReLU of 50 elements), with every field set. */
static struct op base(bool gemm)
{
	struct op o = th_gemm(10, 6, 5, 2);
	o.suffix = "";
	o.layer = 3;
	o.pos = (struct pos){ "w.yaml", 4, 5 };
	o.in[0] = 1, o.in[1] = 2, o.out = 3;
	o.a_elems = 40;
	o.c_elems = 45;
	o.vec = VEC_RELU;
	o.in_elems = 50, o.out_elems = 50, o.lane_ops = 50;
	o.onchip = OC_A, o.spill = 0;
	o.onchip_elems = 20, o.spill_elems = 5;
	if (!gemm)
		o.kind = OP_VEC;
	return o;
}

/* Changes field f of o: a bool flipped, a number one more (its low byte, whatever its width), the kind swapped. */
static void perturb(struct op *o, const struct field *f)
{
	unsigned char *p = (unsigned char *)o + f->off;
	if (f->off == offsetof(struct op, kind))
		o->kind = o->kind == OP_GEMM ? OP_VEC : OP_GEMM;
	else if (f->is_bool)
		*p ^= 1;
	else if (f->off == offsetof(struct op, layer_name))
		o->layer_name = "another";
	else if (f->off == offsetof(struct op, suffix))
		o->suffix = "qk";
	else if (f->off == offsetof(struct op, pos.file))
		o->pos.file = "other.yaml";
	else
		p[0] ^= 1;      /* little-endian: the value changes by one in its low bit, in any width */
}

static bool same_key(const struct op *a, const struct op *b)
{
	struct opkey ka, kb;
	opcache_key(&ka, 0x1234, MODEL_CYCLE, DF_WS, false, a);
	opcache_key(&kb, 0x1234, MODEL_CYCLE, DF_WS, false, b);
	return !memcmp(&ka, &kb, sizeof ka);
}

/* The list covers struct op: its size, its bytes, no two fields on one byte, each inside the struct. */
START_TEST(fields_cover_the_op)
{
	unsigned char seen[sizeof(struct op)] = { 0 };
	size_t bytes = 0;
	for (int i = 0; i < NFIELDS; i++) {
		ck_assert_msg(fields[i].off + fields[i].size <= sizeof(struct op), "%s outside struct op", fields[i].name);
		for (size_t b = fields[i].off; b < fields[i].off + fields[i].size; b++) {
			ck_assert_msg(!seen[b], "%s overlaps another field", fields[i].name);
			seen[b] = 1;
		}
		bytes += fields[i].size;
	}
	ck_assert_msg(sizeof(struct op) == OP_SIZE && bytes == OP_FIELD_BYTES,
		      "struct op is %zu bytes, the fields listed take %zu (this test knows %d and %d): a field was added "
		      "or changed; list it in fields[] of tests/test_opkey.c with whether it changes a result, put it "
		      "in opcache_key (sim/run/opcache.c) if it does, then update OP_SIZE and OP_FIELD_BYTES",
		      sizeof(struct op), bytes, OP_SIZE, OP_FIELD_BYTES);
}
END_TEST

/* Field _i, on a GEMM and on a vector op: the key moves exactly when the result can. */
START_TEST(each_field_moves_the_key_or_not)
{
	const struct field *f = &fields[_i];
	for (int g = 0; g < 2; g++) {
		bool gemm = g == 0;
		struct op a = base(gemm), b = a;
		perturb(&b, f);
		ck_assert_msg(memcmp(&a, &b, sizeof a), "%s: the perturbation changed nothing", f->name);
		bool must_differ = f->role == F_BOTH || (gemm && (f->role == F_GEMM || f->role == F_ROLE)) ||
				   (!gemm && f->role == F_VEC);
		bool must_equal = f->role == F_NAMES || (gemm && f->role == F_VEC) || (!gemm && f->role == F_GEMM);
		bool same = same_key(&a, &b);
		if (must_differ)
			ck_assert_msg(!same, "%s of a %s: changed, and the reuse key did not (a cache hit would return "
				      "another op's result)", f->name, gemm ? "GEMM" : "vector op");
		if (must_equal)
			ck_assert_msg(same, "%s of a %s: changed, and the reuse key did too (it cannot change the result; "
				      "identical ops would miss the cache)", f->name, gemm ? "GEMM" : "vector op");
	}
}
END_TEST

/* The run's side of the key: the config's hash, the model, the dataflow, ideal memory. */
START_TEST(run_parameters_move_the_key)
{
	struct op o = base(true);
	struct opkey k0, k;
	opcache_key(&k0, 0x1234, MODEL_CYCLE, DF_WS, false, &o);
	opcache_key(&k, 0x1235, MODEL_CYCLE, DF_WS, false, &o);
	ck_assert(memcmp(&k0, &k, sizeof k));
	opcache_key(&k, 0x1234, MODEL_ANALYTIC, DF_WS, false, &o);
	ck_assert(memcmp(&k0, &k, sizeof k));
	opcache_key(&k, 0x1234, MODEL_CYCLE, DF_OS, false, &o);
	ck_assert(memcmp(&k0, &k, sizeof k));
	opcache_key(&k, 0x1234, MODEL_CYCLE, DF_WS, true, &o);
	ck_assert(memcmp(&k0, &k, sizeof k));
	opcache_key(&k, 0x1234, MODEL_CYCLE, DF_WS, false, &o);
	ck_assert(!memcmp(&k0, &k, sizeof k));
}
END_TEST

/*
 * Through the cache itself: a result stored for the base GEMM is found for
 * an op that differs only in its name, and not for one with another K.
 */
START_TEST(cache_hits_and_misses)
{
	struct opcache *c = opcache_new();
	struct op a = base(true), named = a, other = a;
	struct opkey ka, kn, ko;
	struct result r;
	ck_assert_ptr_nonnull(c);
	memset(&r, 0, sizeof r);
	r.cycles = 47;
	named.layer_name = "elsewhere";
	named.layer = 9;
	other.k = 7;
	opcache_key(&ka, 1, MODEL_CYCLE, DF_WS, false, &a);
	opcache_key(&kn, 1, MODEL_CYCLE, DF_WS, false, &named);
	opcache_key(&ko, 1, MODEL_CYCLE, DF_WS, false, &other);
	opcache_put(c, &ka, &r);
	const struct result *hit = opcache_get(c, &kn);
	ck_assert_ptr_nonnull(hit);
	ck_assert_int_eq(hit->cycles, 47);
	ck_assert_ptr_null(opcache_get(c, &ko));
	ck_assert_int_eq(opcache_stats(c).hits, 1);
	ck_assert_int_eq(opcache_stats(c).misses, 1);
	opcache_free(c);
}
END_TEST

Suite *opkey_suite(void)
{
	Suite *s = suite_create("opkey");
	TCase *t = tcase_create("opkey");
	tcase_add_test(t, fields_cover_the_op);
	tcase_add_loop_test(t, each_field_moves_the_key_or_not, 0, NFIELDS);
	tcase_add_test(t, run_parameters_move_the_key);
	tcase_add_test(t, cache_hits_and_misses);
	suite_add_tcase(s, t);
	return s;
}
