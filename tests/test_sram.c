/*
 * test_sram.c - models/sram: capacities, which operand lives where, the
 * pools of a unified scratchpad, the room and slots a plan's footprint leaves
 * (exactly full against one byte over, one tile of room against one byte
 * short), bank sizes, the array edge's port widths, what one fold moves
 * through each buffer in each dataflow, and the port's stream cycles.
 * Every expectation is worked out by hand in the comments.
 */
#include <string.h>

#include "sram.h"
#include "tests.h"

/* Buffers of w, i, o KiB with 4 banks each, auto ports; unified as given. */
static struct sram_params params(int64_t w, int64_t i, int64_t o, bool unified)
{
	struct sram_params p;
	memset(&p, 0, sizeof p);
	p.unified = unified;
	p.buf[SRAM_WEIGHTS].kib = w;
	p.buf[SRAM_INPUTS].kib = i;
	p.buf[SRAM_OUTPUTS].kib = o;
	for (int b = 0; b < SRAM_NBUF; b++)
		p.buf[b].banks = 4;
	return p;
}

START_TEST(capacity_in_bytes)
{
	struct sram_params p = params(1, 4096, 3, false);
	ck_assert_int_eq(sram_bytes(&p, SRAM_WEIGHTS), 1024);
	ck_assert_int_eq(sram_bytes(&p, SRAM_INPUTS), 4194304);     /* 4096 x 1024 */
	ck_assert_int_eq(sram_bytes(&p, SRAM_OUTPUTS), 3072);
	ck_assert_str_eq(sram_buf_names[SRAM_WEIGHTS], "weights");
	ck_assert_str_eq(sram_buf_names[SRAM_INPUTS], "inputs");
	ck_assert_str_eq(sram_buf_names[SRAM_OUTPUTS], "outputs");
	ck_assert_ptr_null(sram_buf_names[SRAM_NBUF]);
}
END_TEST

/* A in the inputs, B in the weights, C in the outputs, whatever the dataflow. */
START_TEST(operands_to_buffers)
{
	for (int df = DF_WS; df <= DF_IS; df++) {
		ck_assert_int_eq(sram_operand_buf(df, OPND_A), SRAM_INPUTS);
		ck_assert_int_eq(sram_operand_buf(df, OPND_B), SRAM_WEIGHTS);
		ck_assert_int_eq(sram_operand_buf(df, OPND_C), SRAM_OUTPUTS);
	}
}
END_TEST

START_TEST(pools_separate_and_unified)
{
	struct sram_params s = params(1024, 4096, 1024, false), u = params(1024, 4096, 1024, true);
	/* Apart: each buffer shares only with itself. */
	for (int a = 0; a < SRAM_NBUF; a++)
		for (int b = 0; b < SRAM_NBUF; b++)
			ck_assert_msg(sram_shares(&s, a, b) == (a == b), "separate %d %d", a, b);
	ck_assert_int_eq(sram_pool_bytes(&s, SRAM_WEIGHTS), 1048576);
	ck_assert_int_eq(sram_pool_bytes(&s, SRAM_INPUTS), 4194304);
	ck_assert_int_eq(sram_pool_bytes(&s, SRAM_OUTPUTS), 1048576);
	/* Unified: weights and inputs one pool of (1024 + 4096) KiB = 5242880 B; the accumulators apart. */
	ck_assert(sram_shares(&u, SRAM_WEIGHTS, SRAM_INPUTS));
	ck_assert(sram_shares(&u, SRAM_INPUTS, SRAM_WEIGHTS));
	ck_assert(!sram_shares(&u, SRAM_WEIGHTS, SRAM_OUTPUTS));
	ck_assert(!sram_shares(&u, SRAM_OUTPUTS, SRAM_INPUTS));
	ck_assert(sram_shares(&u, SRAM_OUTPUTS, SRAM_OUTPUTS));
	ck_assert_int_eq(sram_pool_bytes(&u, SRAM_WEIGHTS), 5242880);
	ck_assert_int_eq(sram_pool_bytes(&u, SRAM_INPUTS), 5242880);
	ck_assert_int_eq(sram_pool_bytes(&u, SRAM_OUTPUTS), 1048576);
	/* Banks: 1 MiB / 4 = 262144 B apart; unified 5 MiB over 4 + 4 banks = 655360 B. */
	ck_assert(sram_bank_bytes(&s, SRAM_WEIGHTS) == 262144.0);
	ck_assert(sram_bank_bytes(&s, SRAM_INPUTS) == 1048576.0);
	ck_assert(sram_bank_bytes(&u, SRAM_WEIGHTS) == 655360.0);
	ck_assert(sram_bank_bytes(&u, SRAM_INPUTS) == 655360.0);
	ck_assert(sram_bank_bytes(&u, SRAM_OUTPUTS) == 262144.0);
}
END_TEST

/* Exactly full leaves 0 bytes; one byte over, -1 (apart) or a negative share (unified). */
START_TEST(room_exactly_full_and_one_over)
{
	struct sram_params s = params(1, 1, 1, false), u = params(1, 1, 1, true);
	int64_t full[SRAM_NBUF] = { 1024, 1000, 1024 }, over[SRAM_NBUF] = { 1025, 1000, 1025 };
	ck_assert_int_eq(sram_stream_room(&s, SRAM_WEIGHTS, full), 0);
	ck_assert_int_eq(sram_stream_room(&s, SRAM_WEIGHTS, over), -1);
	ck_assert_int_eq(sram_stream_room(&s, SRAM_INPUTS, full), 24);
	ck_assert_int_eq(sram_stream_room(&s, SRAM_OUTPUTS, full), 0);
	ck_assert_int_eq(sram_stream_room(&s, SRAM_OUTPUTS, over), -1);
	/* Unified: 2048 B shared; weights 1000 + inputs 1048 fill it, 1049 is one byte over. */
	int64_t ufull[SRAM_NBUF] = { 1000, 1048, 0 }, uover[SRAM_NBUF] = { 1000, 1049, 0 };
	ck_assert_int_eq(sram_stream_room(&u, SRAM_WEIGHTS, ufull), 0);
	ck_assert_int_eq(sram_stream_room(&u, SRAM_INPUTS, ufull), 0);
	ck_assert_int_lt(sram_stream_room(&u, SRAM_WEIGHTS, uover), 0);
	ck_assert_int_lt(sram_stream_room(&u, SRAM_INPUTS, uover), 0);
	/* Half each of what is left: (2048 - 100 - 300) / 2 = 824; the outputs have their own 1024 - 24 = 1000. */
	int64_t some[SRAM_NBUF] = { 100, 300, 24 };
	ck_assert_int_eq(sram_stream_room(&u, SRAM_WEIGHTS, some), 824);
	ck_assert_int_eq(sram_stream_room(&u, SRAM_INPUTS, some), 824);
	ck_assert_int_eq(sram_stream_room(&u, SRAM_OUTPUTS, some), 1000);
}
END_TEST

/*
 * Slots: (2 tiles + room) / tile, in [2, SRAM_MAX_SLOTS]. Weights of 1 KiB,
 * tiles of 100 B: a footprint of 824 leaves 200, four slots; 825 leaves 199,
 * three. Full or over: two (the plan's own pair).
 */
START_TEST(slots_at_one_tile_of_room)
{
	struct sram_params s = params(1, 1, 1, false);
	int64_t four[SRAM_NBUF] = { 824, 0, 0 }, three[SRAM_NBUF] = { 825, 0, 0 };
	int64_t full[SRAM_NBUF] = { 1024, 0, 0 }, over[SRAM_NBUF] = { 2000, 0, 0 }, none[SRAM_NBUF] = { 0, 0, 0 };
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, four, 100), 4);
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, three, 100), 3);
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, full, 100), 2);
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, over, 100), 2);
	/* 1024 B of 1-byte tiles: 1026, capped at 64; no tile: the cap. */
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, none, 1), SRAM_MAX_SLOTS);
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, none, 0), SRAM_MAX_SLOTS);
	/* 1024 / 16 = 64 exactly with a footprint of 32 (2 x 16 back): (32 + 992) / 16 = 64; 33: 63. */
	int64_t cap[SRAM_NBUF] = { 32, 0, 0 }, below[SRAM_NBUF] = { 33, 0, 0 };
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, cap, 16), 64);
	ck_assert_int_eq(sram_stream_slots(&s, SRAM_WEIGHTS, below, 16), 63);
}
END_TEST

/* The edge's need: max(rows, cols) operands for weights and inputs, cols partial sums for outputs. */
START_TEST(edge_and_ports)
{
	struct sram_params p = params(1, 1, 1, false);
	ck_assert_int_eq(sram_edge_bytes(SRAM_WEIGHTS, 4, 8, 1, 4), 8);
	ck_assert_int_eq(sram_edge_bytes(SRAM_INPUTS, 8, 4, 1, 4), 8);
	ck_assert_int_eq(sram_edge_bytes(SRAM_OUTPUTS, 8, 4, 1, 4), 16);
	ck_assert_int_eq(sram_edge_bytes(SRAM_WEIGHTS, 128, 128, 2, 4), 256);
	ck_assert_int_eq(sram_edge_bytes(SRAM_OUTPUTS, 128, 128, 2, 4), 512);
	sram_fit_edge(&p, 256, 128, 1, 4);
	ck_assert_int_eq(p.edge_bytes[SRAM_WEIGHTS], 256);
	ck_assert_int_eq(p.edge_bytes[SRAM_INPUTS], 256);
	ck_assert_int_eq(p.edge_bytes[SRAM_OUTPUTS], 512);
	/* auto (0) resolves to the edge; a set width is kept. */
	ck_assert_int_eq(sram_port_bytes(&p, SRAM_WEIGHTS), 256);
	p.buf[SRAM_INPUTS].bytes_per_cycle = 16;
	ck_assert_int_eq(sram_port_bytes(&p, SRAM_INPUTS), 16);
	ck_assert_int_eq(sram_port_bytes(&p, SRAM_OUTPUTS), 512);
}
END_TEST

/* A fold of Sr 4 x Sc 3 streaming T 10: the tile 12, rows x T 40, cols x T 30. */
START_TEST(fold_counts)
{
	struct sram_fold f;
	for (int df = DF_WS; df <= DF_IS; df += 2) {   /* ws and is: the stationary tile each fold */
		f = sram_fold_of(df, 4, 3, 10, true);
		ck_assert(f.tile == 12 && f.rows_t == 40 && f.cols_t == 30 && f.acc_t == 0);
		f = sram_fold_of(df, 4, 3, 10, false);     /* later parts read back the partial sums */
		ck_assert(f.tile == 12 && f.rows_t == 40 && f.cols_t == 30 && f.acc_t == 30);
	}
	f = sram_fold_of(DF_OS, 4, 3, 10, true);           /* os: the outputs once per block, at its first part */
	ck_assert(f.tile == 12 && f.rows_t == 40 && f.cols_t == 30 && f.acc_t == 0);
	f = sram_fold_of(DF_OS, 4, 3, 10, false);
	ck_assert(f.tile == 0 && f.rows_t == 40 && f.cols_t == 30 && f.acc_t == 0);
}
END_TEST

/*
 * Bytes per buffer, 1-byte operands, 4-byte accumulators, the later fold above:
 *   ws: inputs read 40 (A across the rows), weights read 12 (the tile),
 *       outputs written 30 x 4 = 120 and read back 120
 *   is: weights read 40 (B across the rows), inputs read 12, outputs 120 / 120
 *   os (first part): inputs 40, weights 30 (B down the columns), outputs written 12 x 4 = 48
 */
START_TEST(fold_traffic_by_dataflow)
{
	static const struct {
		int df;
		bool first;
		int64_t rd[SRAM_NBUF], wr[SRAM_NBUF];   /* weights, inputs, outputs */
	} cases[] = {
		{ DF_WS, false, { 12, 40, 120 }, { 0, 0, 120 } },
		{ DF_WS, true, { 12, 40, 0 }, { 0, 0, 120 } },
		{ DF_IS, false, { 40, 12, 120 }, { 0, 0, 120 } },
		{ DF_OS, true, { 30, 40, 0 }, { 0, 0, 48 } },
		{ DF_OS, false, { 30, 40, 0 }, { 0, 0, 0 } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int64_t rd[SRAM_NBUF] = { 1, 2, 3 }, wr[SRAM_NBUF] = { 4, 5, 6 };   /* added to, not overwritten */
		struct sram_fold f = sram_fold_of(cases[i].df, 4, 3, 10, cases[i].first);
		sram_fold_traffic(cases[i].df, 1, 4, &f, rd, wr);
		for (int b = 0; b < SRAM_NBUF; b++) {
			ck_assert_msg(rd[b] == cases[i].rd[b] + 1 + b, "case %zu: %s read %lld", i, sram_buf_names[b],
				      (long long)rd[b]);
			ck_assert_msg(wr[b] == cases[i].wr[b] + 4 + b, "case %zu: %s written %lld", i, sram_buf_names[b],
				      (long long)wr[b]);
		}
	}
	/* Linear: two folds' traffic is the traffic of their summed counts (2-byte operands this time). */
	for (int df = DF_WS; df <= DF_IS; df++) {
		struct sram_fold a = sram_fold_of(df, 4, 3, 10, true), b = sram_fold_of(df, 2, 5, 7, false);
		struct sram_fold sum = { a.tile + b.tile, a.rows_t + b.rows_t, a.cols_t + b.cols_t, a.acc_t + b.acc_t };
		int64_t r1[SRAM_NBUF] = { 0 }, w1[SRAM_NBUF] = { 0 }, r2[SRAM_NBUF] = { 0 }, w2[SRAM_NBUF] = { 0 };
		sram_fold_traffic(df, 2, 4, &a, r1, w1);
		sram_fold_traffic(df, 2, 4, &b, r1, w1);
		sram_fold_traffic(df, 2, 4, &sum, r2, w2);
		ck_assert(!memcmp(r1, r2, sizeof r1) && !memcmp(w1, w2, sizeof w1));
	}
}
END_TEST

/* Counters, reset, and a port of 8 B/cycle: 80 bytes over 10 rows take 10 cycles, 81 take 11, 89 take 12. */
START_TEST(engine_side)
{
	struct sram_params p = params(1, 1, 1, false);
	p.buf[SRAM_INPUTS].bytes_per_cycle = 8;
	sram_fit_edge(&p, 4, 4, 1, 4);
	sram *s = sram_new(&p, false), *ideal = sram_new(&p, true);
	ck_assert(s && ideal);
	sram_read(s, SRAM_INPUTS, 100);
	sram_read(s, SRAM_INPUTS, 28);
	sram_write(s, SRAM_OUTPUTS, 7);
	ck_assert_int_eq(sram_reads(s, SRAM_INPUTS), 128);
	ck_assert_int_eq(sram_reads(s, SRAM_WEIGHTS), 0);
	ck_assert_int_eq(sram_writes(s, SRAM_OUTPUTS), 7);
	sram_reset(s);
	ck_assert_int_eq(sram_reads(s, SRAM_INPUTS), 0);
	ck_assert_int_eq(sram_writes(s, SRAM_OUTPUTS), 0);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_INPUTS, 10, 80), 10);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_INPUTS, 10, 81), 11);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_INPUTS, 10, 88), 11);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_INPUTS, 10, 89), 12);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_INPUTS, 10, 0), 10);
	/* The weights' auto port is the 4x4 edge's 4 B/cycle: 41 bytes over 10 rows, 11 cycles. */
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_WEIGHTS, 10, 40), 10);
	ck_assert_int_eq(sram_stream_cycles(s, SRAM_WEIGHTS, 10, 41), 11);
	ck_assert_int_eq(sram_stream_cycles(ideal, SRAM_INPUTS, 10, 1000000), 10);
	sram_free(s);
	sram_free(ideal);
	sram_free(NULL);
}
END_TEST

Suite *sram_suite(void)
{
	Suite *s = suite_create("sram");
	TCase *t = tcase_create("sram");
	tcase_add_test(t, capacity_in_bytes);
	tcase_add_test(t, operands_to_buffers);
	tcase_add_test(t, pools_separate_and_unified);
	tcase_add_test(t, room_exactly_full_and_one_over);
	tcase_add_test(t, slots_at_one_tile_of_room);
	tcase_add_test(t, edge_and_ports);
	tcase_add_test(t, fold_counts);
	tcase_add_test(t, fold_traffic_by_dataflow);
	tcase_add_test(t, engine_side);
	suite_add_tcase(s, t);
	return s;
}
