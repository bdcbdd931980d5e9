/*
 * test_config.c - config keys: presets, overrides, and the --dump round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

static const char *const presets[] = { "tpu_v1", "tpu_v4_mxu", "gemmini", "edge_32x32", "lab_4x4" };

/* Dumping a preset and loading the dump gives the identical config, and the same dump again. */
START_TEST(dump_round_trips)
{
	struct config a, b;
	struct err e = { 0 };
	char *dump1 = NULL, *dump2 = NULL, *dir = th_tmpdir(), *path;
	size_t n1, n2;
	FILE *f;

	th_config(&a, presets[_i], NULL);
	f = open_memstream(&dump1, &n1);
	config_dump(&a, f);
	fclose(f);
	path = th_write(dir, "dump.yaml", dump1);
	ck_assert_msg(config_load(&b, path, &e) == 0, "%s", e.msg);
	ck_assert(cfg_equal(config_schema(), &a.arch, &b.arch));
	f = open_memstream(&dump2, &n2);
	config_dump(&b, f);
	fclose(f);
	/* Identical after the first line, which names the file. */
	ck_assert_str_eq(strchr(dump1, '\n'), strchr(dump2, '\n'));
	free(dump1);
	free(dump2);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* A changed value does not compare equal: the round trip test can fail. */
START_TEST(equal_sees_one_change)
{
	struct config a, b;
	const char *sets[] = { "hbm.latency_ns=101", NULL };
	th_config(&a, "tpu_v1", NULL);
	th_config(&b, "tpu_v1", sets);
	ck_assert(!cfg_equal(config_schema(), &a.arch, &b.arch));
	ck_assert(b.arch.hbm.latency_ns == 101);
}
END_TEST

/* Preset values as published (TPU v1: Jouppi et al., ISCA 2017). */
START_TEST(tpu_v1_values)
{
	struct config c;
	th_config(&c, "tpu_v1", NULL);
	ck_assert_int_eq(c.arch.array.rows, 256);
	ck_assert_int_eq(c.arch.array.cols, 256);
	ck_assert_int_eq(c.arch.array.dataflow, DF_WS);
	ck_assert_int_eq(c.arch.array.dtype, DT_INT8);
	ck_assert(c.arch.clock_ghz == 0.7);
	ck_assert(c.arch.hbm.gbps == 34);
	ck_assert_int_eq(sram_bytes(&c.arch.sram, SRAM_INPUTS), 24 << 20);
	ck_assert_int_eq(sram_bytes(&c.arch.sram, SRAM_OUTPUTS), 4 << 20);
	ck_assert_int_eq(sram_bytes(&c.arch.sram, SRAM_WEIGHTS), 4 * 65536);
	/* 65,536 MACs x 2 ops x 0.7 GHz = 91.75 TOPS */
	ck_assert(2 * arch_peak_macs_per_s(&c.arch) == 2.0 * 65536 * 0.7e9);
}
END_TEST

/* Every key has a default: an empty-ish config file gives config_init's values. */
START_TEST(defaults_fill_unset_keys)
{
	struct config a, b;
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "c.yaml", "array:\n  rows: 8\n");
	ck_assert_msg(config_load(&a, path, &e) == 0, "%s", e.msg);
	config_init(&b);
	ck_assert_int_eq(a.arch.array.rows, 8);
	ck_assert_int_eq(b.arch.array.rows, 128);
	b.arch.array.rows = 8;
	ck_assert(cfg_equal(config_schema(), &a.arch, &b.arch));
	/* The origin of a key from the file is its line and column; of a default, the file. */
	ck_assert_int_eq(config_origin(&a, "array.rows").line, 2);
	ck_assert_int_eq(config_origin(&a, "array.rows").col, 9);
	ck_assert_int_eq(config_origin(&a, "array.cols").line, 0);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(set_overrides_and_checks)
{
	struct config c;
	struct err e = { 0 };
	th_config(&c, "tpu_v1", NULL);
	ck_assert_int_eq(config_set(&c, "array.rows=64", &e), 0);
	ck_assert_int_eq(c.arch.array.rows, 64);
	ck_assert_int_eq(config_set(&c, "array.dataflow=os", &e), 0);
	ck_assert_int_eq(c.arch.array.dataflow, DF_OS);
	ck_assert_int_eq(config_set(&c, "sram.unified=true", &e), 0);
	ck_assert(c.arch.sram.unified);
	ck_assert_int_eq(config_set(&c, "array.rows=4097", &e), -1);
	ck_assert_str_eq(e.msg, "--set:1:12: array.rows: expected an integer in [1, 4096], found \"4097\"");
	ck_assert_int_eq(c.arch.array.rows, 64);
	ck_assert_int_eq(config_set(&c, "hbm.gbs=3", &e), -1);
	ck_assert_str_eq(e.msg, "--set:1:1: hbm.gbs: expected a known key, found an unknown key (did you mean hbm.gbps?)");
}
END_TEST

/* A memory preset laid over an accelerator replaces its hbm keys and nothing else. */
START_TEST(memory_overlay)
{
	struct config base, c;
	struct err e = { 0 };
	th_config(&base, "tpu_v4_mxu", NULL);
	th_config(&c, "tpu_v4_mxu", NULL);
	ck_assert_msg(config_merge(&c, "configs/memory/hbm3.yaml", &e) == 0, "%s", e.msg);
	ck_assert(c.arch.hbm.gbps == 819);            /* JESD238: 1024 pins x 6.4 Gb/s / 8 */
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	ck_assert_int_eq(c.arch.hbm.type, HBM_HBM3);
	ck_assert_int_eq(c.arch.array.rows, 128);
	ck_assert_int_eq(c.arch.array.dtype, DT_BF16);
	ck_assert_str_eq(config_origin(&c, "hbm.gbps").file, "configs/memory/hbm3.yaml");
	ck_assert_str_eq(config_origin(&c, "array.rows").file, "configs/tpu_v4_mxu.yaml");
	c.arch.hbm = base.arch.hbm;
	ck_assert(cfg_equal(config_schema(), &c.arch, &base.arch));
	/* DDR3 as on the TPU v1 */
	ck_assert_msg(config_merge(&c, "configs/memory/ddr3.yaml", &e) == 0, "%s", e.msg);
	ck_assert(c.arch.hbm.gbps == 34);
}
END_TEST

/* Gemmini shares one scratchpad between weights and inputs: 128 + 128 KiB. */
START_TEST(gemmini_unified)
{
	struct config c;
	th_config(&c, "gemmini", NULL);
	ck_assert(c.arch.sram.unified);
	ck_assert_int_eq(sram_bytes(&c.arch.sram, SRAM_WEIGHTS) + sram_bytes(&c.arch.sram, SRAM_INPUTS), 256 * 1024);
	ck_assert_int_eq(c.arch.array.rows, 16);
}
END_TEST

Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *t = tcase_create("config");
	tcase_add_loop_test(t, dump_round_trips, 0, (int)(sizeof presets / sizeof *presets));
	tcase_add_test(t, equal_sees_one_change);
	tcase_add_test(t, tpu_v1_values);
	tcase_add_test(t, defaults_fill_unset_keys);
	tcase_add_test(t, set_overrides_and_checks);
	tcase_add_test(t, gemmini_unified);
	tcase_add_test(t, memory_overlay);
	suite_add_tcase(s, t);
	return s;
}
