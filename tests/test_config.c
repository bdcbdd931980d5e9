/*
 * test_config.c - config keys: presets, overrides, and the --dump round trip.
 */
#include <dirent.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "tests.h"

static const char *const presets[] = {
	"tpu_v1", "tpu_v4_mxu", "gemmini", "edge_32x32", "lab_4x4", "tpu_v4", "tpu_v4i", "tpu_v5e",
};

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

/*
 * Every TPU preset's peak at each dtype it runs, within 1% of the published
 * figure (FLOP/s or op/s: 2 x MACs): Google Cloud TPU documentation, the
 * pages of each chip and the TPU7x page's table ([Cloud]); v5p int8 from J.
 * Austin et al., "How to Scale Your Model" (2025), part 2; v1 from Jouppi et
 * al., ISCA 2017, Table 2; v4i from Jouppi et al., ISCA 2021. The dtypes a
 * chip does not run refuse a run (none); HBM: [Cloud].
 */
START_TEST(tpu_peaks_as_published)
{
	static const struct {
		const char *preset, *dtype;
		double flops;
	} peaks[] = {
		{ "tpu_v1", "int8", 92e12 },
		{ "tpu_v4", "bf16", 275e12 }, { "tpu_v4", "int8", 275e12 },
		{ "tpu_v4i", "bf16", 138e12 }, { "tpu_v4i", "int8", 138e12 },
		{ "tpu_v5e", "bf16", 197e12 }, { "tpu_v5e", "int8", 393e12 },
		{ "tpu_v5p", "bf16", 459e12 }, { "tpu_v5p", "int8", 918e12 }, { "tpu_v5p", "fp8", 459e12 },
		{ "tpu_v6e", "bf16", 918e12 }, { "tpu_v6e", "int8", 1836e12 }, { "tpu_v6e", "fp8", 918e12 },
		{ "tpu_v7", "bf16", 2307e12 }, { "tpu_v7", "fp8", 4614e12 },
	};
	static const struct {
		const char *preset;
		double gbps, gib;
	} hbm[] = { { "tpu_v5p", 2765, 95 }, { "tpu_v6e", 1640, 32 }, { "tpu_v7", 7380, 192 } };
	for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
		char set[64];
		const char *sets[] = { set, NULL };
		struct config c;
		snprintf(set, sizeof set, "array.dtype=%s", peaks[i].dtype);
		th_config(&c, peaks[i].preset, sets);
		double got = 2 * arch_peak_macs_per_s(&c.arch);
		ck_assert_msg(fabs(got / peaks[i].flops - 1) < 0.01, "%s %s: %.4g, published %.4g", peaks[i].preset,
			      peaks[i].dtype, got, peaks[i].flops);
		struct err e = { 0 };
		ck_assert_int_eq(config_check_rate(&c, NULL, &e), 0);
	}
	for (size_t i = 0; i < sizeof hbm / sizeof hbm[0]; i++) {
		struct config c;
		th_config(&c, hbm[i].preset, NULL);
		ck_assert(c.arch.hbm.gbps == hbm[i].gbps && c.arch.hbm.capacity_gib == hbm[i].gib);
	}
	/* fp32 takes six bf16 passes: a sixth of bf16's peak. */
	struct config c;
	const char *fp32[] = { "array.dtype=fp32", NULL };
	th_config(&c, "tpu_v5p", fp32);
	ck_assert(fabs(2 * arch_peak_macs_per_s(&c.arch) / (459e12 / 6) - 1) < 0.01);
	/* The per-op fixed time: 1 us at 1.05 GHz on tpu_v4, 1,050 cycles; none in SCALE-Sim's compute model. */
	const char *compat[] = { "array.scalesim_compat=true", NULL };
	th_config(&c, "tpu_v4", NULL);
	ck_assert_int_eq(arch_op_fixed_cycles(&c.arch), 1050);
	th_config(&c, "tpu_v4", compat);
	ck_assert_int_eq(arch_op_fixed_cycles(&c.arch), 0);
}
END_TEST

/*
 * A dtype the array does not run is refused at its rate key; a packed rate
 * is refused where PEs do one MAC a cycle (SCALE-Sim's model, the
 * functional model).
 */
START_TEST(rate_refusals)
{
	struct config c;
	struct err e = { 0 };
	const char *bf16[] = { "array.dtype=bf16", NULL };
	th_config(&c, "tpu_v1", bf16);
	ck_assert_int_eq(config_check_rate(&c, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "tpu_v1.yaml:") && strstr(e.msg, ": array.rate_bf16: expected a rate for array.dtype "
				    "bf16, found none (the array does not run bf16)"), "%s", e.msg);
	const char *packed[] = { "array.dtype=int8", NULL };
	th_config(&c, "tpu_v5e", packed);
	ck_assert_int_eq(config_check_rate(&c, NULL, &e), 0);
	ck_assert_int_eq(config_check_rate(&c, "--model functional", &e), -1);
	ck_assert_msg(strstr(e.msg, "tpu_v5e.yaml:") && strstr(e.msg, ": array.rate_int8: expected 1 for --model "
				    "functional (its PEs do one MAC a cycle), found 2"), "%s", e.msg);
	const char *compat[] = { "array.dtype=int8", "array.scalesim_compat=true", NULL };
	th_config(&c, "tpu_v5e", compat);
	ck_assert_int_eq(config_check_rate(&c, NULL, &e), -1);
	ck_assert_msg(strstr(e.msg, "expected 1 for array.scalesim_compat"), "%s", e.msg);
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
	/* HBM3 brings its PHY area, as it brings its pJ per bit */
	ck_assert(c.arch.area.phy_mm2_per_gbps == 0.0098);
	c.arch.hbm = base.arch.hbm;
	c.arch.area.phy_mm2_per_gbps = base.arch.area.phy_mm2_per_gbps;
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

/* Loads YAML text as a config file (and then the overlays, in order). */
static void load_text(struct config *c, const char *text, const char *const *overlays)
{
	char *dir = th_tmpdir(), *path = th_write(dir, "c.yaml", text);
	struct err e = { 0 };
	ck_assert_msg(config_load(c, path, &e) == 0, "%s", e.msg);
	for (int i = 0; overlays && overlays[i]; i++) {
		char name[32], *o;
		snprintf(name, sizeof name, "o%d.yaml", i);
		o = th_write(dir, name, overlays[i]);
		ck_assert_msg(config_merge(c, o, &e) == 0, "%s", e.msg);
		free(o);
	}
	free(path);
	th_rmdir(dir);
	free(dir);
}

/* Dumps c, loads the dump, and checks that it is the same config. */
static void check_round_trip(const struct config *c)
{
	struct config b;
	char *dump = NULL;
	size_t n;
	FILE *f = open_memstream(&dump, &n);
	config_dump(c, f);
	fclose(f);
	load_text(&b, dump, NULL);
	ck_assert_msg(cfg_equal(config_schema(), &c->arch, &b.arch), "%s", dump);
	for (int i = 0; i < SRAM_NBUF; i++)
		ck_assert_int_eq(sram_port_bytes(&b.arch.sram, i), sram_port_bytes(&c->arch.sram, i));
	free(dump);
}

/* hbm.type alone brings the type's values: JESD238 HBM3, 819 GB/s, 32 pseudo-channels of BL8 x 32 bit. */
START_TEST(memory_type_brings_defaults)
{
	struct config c;
	load_text(&c, "hbm: {type: hbm3}\n", NULL);
	ck_assert_int_eq(c.arch.hbm.type, HBM_HBM3);
	ck_assert(c.arch.hbm.gbps == 819);
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	ck_assert_int_eq(c.arch.hbm.burst_bytes, 32);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 3.97);
	/* Not 20 pJ/bit (DDR3's): 2,000 bytes cost 16,000 bits x 3.97 pJ. */
	ck_assert(c.arch.energy.hbm_pj_per_bit * 16000 < 64000);
	ck_assert_int_eq(config_origin(&c, "hbm.gbps").line, 0);
	check_round_trip(&c);
	/* With no file at all, the default type (hbm2) brings JESD235A's 16 pseudo-channels. */
	config_init(&c);
	ck_assert_int_eq(c.arch.hbm.type, HBM_HBM2);
	ck_assert_int_eq(c.arch.hbm.channels, 16);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 3.97);
	/* custom keeps the keys' own defaults: 8 channels, 20 pJ/bit. */
	load_text(&c, "hbm: {type: custom}\n", NULL);
	ck_assert_int_eq(c.arch.hbm.channels, 8);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 20);
}
END_TEST

/* hbm.type: X alone is the same memory as the overlay configs/memory/X.yaml, which sets every key. */
START_TEST(memory_type_matches_overlay)
{
	static const char *const types[] = { "ddr3", "hbm2", "hbm2e", "hbm3" };
	struct config a, b;
	struct err e = { 0 };
	char text[64], path[64];
	snprintf(text, sizeof text, "hbm: {type: %s}\n", types[_i]);
	snprintf(path, sizeof path, "configs/memory/%s.yaml", types[_i]);
	load_text(&a, text, NULL);
	ck_assert_msg(config_load(&b, path, &e) == 0, "%s", e.msg);
	ck_assert(cfg_equal(config_schema(), &a.arch, &b.arch));
}
END_TEST

/* A key given in the file wins over the type's default, before or after hbm.type. */
START_TEST(memory_type_given_key_wins)
{
	struct config c;
	load_text(&c, "hbm: {type: hbm3}\nenergy: {hbm_pj_per_bit: 7}\n", NULL);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 7);
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	load_text(&c, "energy: {hbm_pj_per_bit: 7}\nhbm: {type: hbm3, channels: 5}\n", NULL);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 7);
	ck_assert_int_eq(c.arch.hbm.channels, 5);
	ck_assert(c.arch.hbm.gbps == 819);
	ck_assert_int_eq(config_origin(&c, "energy.hbm_pj_per_bit").line, 1);
	check_round_trip(&c);
}
END_TEST

/*
 * Overlays: a file that sets hbm.type brings the type's values for every
 * memory key that file does not set, over what earlier files gave; a later
 * file that does not change the type keeps what it does not set.
 */
START_TEST(memory_type_overlay_order)
{
	struct config c;
	const char *to_ddr3[] = { "hbm: {type: ddr3}\n", NULL };
	const char *channels[] = { "hbm: {channels: 3}\n", NULL };
	const char *to_custom[] = { "hbm: {type: ddr3}\n", "hbm: {type: custom}\n", NULL };
	const char *ddr3_gbps[] = { "hbm: {type: ddr3, gbps: 50}\n", NULL };
	load_text(&c, "hbm: {type: hbm3, gbps: 100}\n", to_ddr3);
	ck_assert_int_eq(c.arch.hbm.type, HBM_DDR3);
	ck_assert(c.arch.hbm.gbps == 34);                   /* DDR3's 34 GB/s [ISCA 2017], not the first file's 100 */
	ck_assert_int_eq(c.arch.hbm.channels, 2);           /* DDR3's, not HBM3's 32 */
	ck_assert_int_eq(c.arch.hbm.burst_bytes, 64);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 20);
	ck_assert_int_eq(config_origin(&c, "hbm.gbps").line, 0);   /* brought by the type, not the first file's */
	check_round_trip(&c);
	load_text(&c, "hbm: {type: hbm3, gbps: 100}\n", ddr3_gbps);
	ck_assert(c.arch.hbm.gbps == 50);                   /* the same file gives it */
	ck_assert_int_eq(c.arch.hbm.channels, 2);
	load_text(&c, "hbm: {type: ddr3}\n", channels);
	ck_assert_int_eq(c.arch.hbm.type, HBM_DDR3);
	ck_assert_int_eq(c.arch.hbm.channels, 3);           /* a later file, no type: its key stays */
	ck_assert(c.arch.hbm.gbps == 34);
	load_text(&c, "hbm: {type: hbm3, latency_ns: 80}\n", to_custom);
	ck_assert(c.arch.hbm.gbps == 256);                  /* the key's own default */
	ck_assert_int_eq(c.arch.hbm.channels, 8);
	ck_assert(c.arch.hbm.latency_ns == 100);            /* the first file's 80 is an earlier source's */
	ck_assert(c.arch.energy.hbm_pj_per_bit == 20);
}
END_TEST

/*
 * --set hbm.type brings the type's values over the files' (the overrides are
 * one source, later than every file); a key that any --set gives wins, before
 * or after the type.
 */
START_TEST(memory_type_set)
{
	struct config c;
	struct err e = { 0 };
	load_text(&c, "hbm: {type: hbm3}\n", NULL);
	ck_assert_int_eq(config_set(&c, "hbm.type=ddr3", &e), 0);
	ck_assert(c.arch.hbm.gbps == 34);
	ck_assert_int_eq(c.arch.hbm.channels, 2);
	ck_assert_int_eq(c.arch.hbm.burst_bytes, 64);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 20);
	ck_assert_int_eq(config_set(&c, "energy.hbm_pj_per_bit=9", &e), 0);
	ck_assert_int_eq(config_set(&c, "hbm.type=hbm2e", &e), 0);
	ck_assert(c.arch.hbm.gbps == 410);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 9);
	check_round_trip(&c);
}
END_TEST

/*
 * A preset that sets every memory key (tpu_v1: DDR3) with --set hbm.type=hbm3
 * is an HBM3 memory: JESD238's 1024 pins x 6.4 Gb/s / 8 = 819 GB/s, 32
 * pseudo-channels, BL8 x 32 bit = 32 B bursts, HBM's 256 B interleaving, and
 * 3.97 pJ/bit; a --set of a memory key keeps its value, in either order.
 */
START_TEST(memory_type_set_over_preset)
{
	struct config c;
	th_config(&c, "tpu_v1", (const char *const[]){ "hbm.type=hbm3", NULL });
	ck_assert_int_eq(c.arch.hbm.type, HBM_HBM3);
	ck_assert(c.arch.hbm.gbps == 819);
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	ck_assert_int_eq(c.arch.hbm.burst_bytes, 32);
	ck_assert_int_eq(c.arch.hbm.interleave_bytes, 256);
	ck_assert(c.arch.hbm.latency_ns == 100);
	ck_assert(c.arch.energy.hbm_pj_per_bit == 3.97);
	ck_assert_int_eq(c.arch.array.rows, 256);           /* nothing else moves */
	ck_assert_str_eq(config_origin(&c, "hbm.type").file, "--set");
	ck_assert_int_eq(config_origin(&c, "hbm.gbps").line, 0);
	check_round_trip(&c);
	th_config(&c, "tpu_v1", (const char *const[]){ "hbm.type=hbm3", "hbm.gbps=100", NULL });
	ck_assert(c.arch.hbm.gbps == 100);
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	th_config(&c, "tpu_v1", (const char *const[]){ "hbm.gbps=100", "hbm.type=hbm3", NULL });
	ck_assert(c.arch.hbm.gbps == 100);
	ck_assert_int_eq(c.arch.hbm.channels, 32);
	/* The preset's own type again changes nothing: DDR3 as the paper gives it. */
	th_config(&c, "tpu_v1", (const char *const[]){ "hbm.type=ddr3", NULL });
	ck_assert(c.arch.hbm.gbps == 34);
	ck_assert_int_eq(c.arch.hbm.channels, 2);
}
END_TEST

/*
 * Every preset and model cites its sources where a clone can follow them
 * (papers, tables, datasheets), never a file outside the repository: no line
 * of configs/, models/, sim/, scripts/, docs/ or the README names shared/ or
 * HARDWARE.md.
 */
static bool cited_kind(const char *name)
{
	static const char *const ext[] = { ".yaml", ".c", ".h", ".cpp", ".py", ".md", ".html", NULL };
	size_t len = strlen(name);
	for (int i = 0; ext[i]; i++) {
		size_t n = strlen(ext[i]);
		if (len > n && !strcmp(name + len - n, ext[i]))
			return true;
	}
	return false;
}

static int preset_files(const char *dir, char paths[][PATH_MAX], int n, int max)
{
	struct dirent **v;
	int k = scandir(dir, &v, NULL, alphasort);
	ck_assert_int_ge(k, 0);
	for (int i = 0; i < k; i++) {
		const char *name = v[i]->d_name;
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			n = preset_files(path, paths, n, max);
		else if (cited_kind(name) && n < max)
			snprintf(paths[n++], PATH_MAX, "%s", path);
		free(v[i]);
	}
	free(v);
	return n;
}

START_TEST(presets_cite_no_outside_file)
{
	static const char *const dirs[] = { "configs", "models", "sim", "scripts", "docs", NULL };
	static char paths[1024][PATH_MAX];
	int n = 0;
	for (int d = 0; dirs[d]; d++)
		n = preset_files(dirs[d], paths, n, 1023);
	snprintf(paths[n++], PATH_MAX, "README.md");
	ck_assert_int_gt(n, 100);
	ck_assert_int_lt(n, 1023);
	for (int i = 0; i < n; i++) {
		char *text = th_slurp(paths[i]), *line = text;
		for (int no = 1; line && *line; no++) {
			char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);
			char buf[1024];
			snprintf(buf, sizeof buf, "%.*s", (int)len, line);
			ck_assert_msg(!strstr(buf, "shared/") && !strstr(buf, "HARDWARE.md"), "%s:%d: %s", paths[i], no, buf);
			line = end ? end + 1 : NULL;
		}
		free(text);
	}
}
END_TEST

/* auto ports: weights and inputs max(rows, cols) elements, outputs cols accumulators (4 B). */
START_TEST(auto_port_widths)
{
	struct config c;
	th_config(&c, "tpu_v4_mxu", NULL);                   /* 128 x 128 bf16 */
	ck_assert_int_eq(c.arch.sram.buf[SRAM_INPUTS].bytes_per_cycle, 0);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_WEIGHTS), 128 * 2);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_INPUTS), 128 * 2);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_OUTPUTS), 128 * 4);
	th_config(&c, "tpu_v1", NULL);                       /* 256 x 256 int8; cited 256 B ports kept */
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_WEIGHTS), 256);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_OUTPUTS), 256 * 4);
	/* Non-square, fp32, changed by --set after the file: the widths follow. */
	th_config(&c, "lab_4x4", (const char *const[]){ "array.rows=64", "array.cols=32", "array.dtype=fp32", NULL });
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_WEIGHTS), 64 * 4);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_INPUTS), 64 * 4);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_OUTPUTS), 32 * 4);
	check_round_trip(&c);
	/* A number replaces auto, and auto comes back by --set. */
	th_config(&c, "lab_4x4", (const char *const[]){ "sram.inputs.bytes_per_cycle=3", NULL });
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_INPUTS), 3);
	struct err e = { 0 };
	ck_assert_int_eq(config_set(&c, "sram.inputs.bytes_per_cycle=auto", &e), 0);
	ck_assert_int_eq(sram_port_bytes(&c.arch.sram, SRAM_INPUTS), 4);
	ck_assert_int_eq(config_set(&c, "sram.inputs.bytes_per_cycle=0", &e), -1);
	ck_assert_str_eq(e.msg, "--set:1:29: sram.inputs.bytes_per_cycle: expected an integer in [1, 1048576] or auto, "
			 "found \"0\"");
}
END_TEST

/* A port narrower than the edge is named once, at the place that set it; auto and wide ports are not. */
START_TEST(port_warnings)
{
	struct config c;
	struct err e = { 0 };
	char lines[4][CONFIG_WARNING_MAX];
	char *dir = th_tmpdir(), *path = th_write(dir, "x.yaml",
		"array: {rows: 128, cols: 128, dtype: int8}\n"
		"sram:\n"
		"  inputs:\n"
		"    bytes_per_cycle: 64\n"
		"  outputs: {bytes_per_cycle: 512}\n");
	char want[600];
	ck_assert_msg(config_load(&c, path, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(config_warnings(&c, true, true, lines, 4), 1);
	snprintf(want, sizeof want, "%s:4:22: sram.inputs.bytes_per_cycle: 64 B/cycle cannot feed the array's "
		 "128-row edge (needs 128); streams will stretch", path);
	ck_assert_str_eq(lines[0], want);
	/* 128 accumulators of 4 B need 512: exactly enough is no warning; 511 is one. */
	ck_assert_int_eq(config_set(&c, "sram.outputs.bytes_per_cycle=511", &e), 0);
	ck_assert_int_eq(config_set(&c, "sram.weights.bytes_per_cycle=127", &e), 0);
	ck_assert_int_eq(config_warnings(&c, true, true, lines, 4), 3);
	ck_assert_str_eq(lines[0], "--set:1:30: sram.weights.bytes_per_cycle: 127 B/cycle cannot feed the array's "
			 "128-column edge (needs 128); streams will stretch");
	ck_assert_str_eq(lines[2], "--set:1:30: sram.outputs.bytes_per_cycle: 511 B/cycle cannot feed the array's "
			 "128-column edge (needs 512); streams will stretch");
	ck_assert_int_eq(config_warnings(&c, true, true, lines, 1), 1);  /* at most max lines */
	ck_assert_int_eq(config_set(&c, "sram.inputs.bytes_per_cycle=auto", &e), 0);
	ck_assert_int_eq(config_set(&c, "sram.weights.bytes_per_cycle=128", &e), 0);
	ck_assert_int_eq(config_set(&c, "sram.outputs.bytes_per_cycle=512", &e), 0);
	ck_assert_int_eq(config_warnings(&c, true, true, lines, 4), 0);
	/* Every preset feeds its edge. */
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
		th_config(&c, presets[i], NULL);
		ck_assert_int_eq(config_warnings(&c, true, true, lines, 4), 0);
	}
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* Loads text as c.yaml and expects "c.yaml" + want. */
static void expect_config_error(const char *text, const char *want)
{
	struct config c;
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "c.yaml", text), full[1024];
	ck_assert_int_eq(config_load(&c, path, &e), -1);
	ck_assert_int_eq(err_status(&e), ERR_INPUT);
	snprintf(full, sizeof full, "%s%s", path, want);
	ck_assert_str_eq(e.msg, full);
	free(path);
	th_rmdir(dir);
	free(dir);
}

/* One key in two forms in one file is an error at the second, naming the first; across files it overrides. */
START_TEST(key_twice_in_two_forms)
{
	struct config c;
	struct err e = { 0 };
	const char *later[] = { "array.rows: 16\n", NULL };
	expect_config_error("array: {rows: 8}\narray.rows: 16\n",
			    ":2:1: array.rows: expected each key once, found it again (first at line 1, column 9)");
	expect_config_error("array.rows: 16\narray:\n  rows: 8\n",
			    ":3:3: array.rows: expected each key once, found it again (first at line 1, column 1)");
	expect_config_error("sram.inputs: {kib: 4}\nsram:\n  inputs.kib: 8\n",
			    ":3:3: sram.inputs.kib: expected each key once, found it again (first at line 1, column 15)");
	expect_config_error("sram: {inputs: {kib: 4}}\nsram.inputs.kib: 8\n",
			    ":2:1: sram.inputs.kib: expected each key once, found it again (first at line 1, column 17)");
	/* Different keys of one section may be split between forms. */
	load_text(&c, "array: {rows: 8}\narray.cols: 16\n", later);
	ck_assert_int_eq(c.arch.array.rows, 16);
	ck_assert_int_eq(c.arch.array.cols, 16);
	ck_assert_int_eq(config_set(&c, "array.rows=32", &e), 0);
	ck_assert_int_eq(c.arch.array.rows, 32);
}
END_TEST

/* Tags never change what a value means: on a scalar, a map or a sequence, core or local or verbatim. */
START_TEST(tags_rejected)
{
	expect_config_error("array:\n  rows: !!str 8\n",
			    ":2:9: array.rows: expected a plain value, found a tag \"!!str\" (tags are not supported)");
	expect_config_error("array: !!map {rows: 8}\n",
			    ":1:8: array: expected a plain value, found a tag \"!!map\" (tags are not supported)");
	expect_config_error("array: !!seq [1]\n",
			    ":1:8: array: expected a plain value, found a tag \"!!seq\" (tags are not supported)");
	expect_config_error("array: {rows: !foo 8}\n",
			    ":1:15: array.rows: expected a plain value, found a tag \"!foo\" (tags are not supported)");
	expect_config_error("array: {rows: !<tag:x.org,2000:y> 8}\n", ":1:15: array.rows: expected a plain value, "
			    "found a tag \"tag:x.org,2000:y\" (tags are not supported)");
	expect_config_error("--- !!map\narray: {rows: 8}\n",
			    ":1:5: expected a plain value, found a tag \"!!map\" (tags are not supported)");
}
END_TEST

/* Numbers: one grammar for integers and reals, from a file and from --set. */
START_TEST(number_grammar)
{
	static const char *const bad_real[] = { "0x1p3", "inf", "nan", "-inf", ".inf", "1e5x", "+1", "1_0", "01.5",
						"1e", "e5", ".", "-", "0x10", "1e999", NULL };
	static const char *const bad_int[] = { "0x10", "010", "1e3", "1.0", "+4", "8 ", " 8", "-", "4k", "inf", NULL };
	struct config c;
	struct err e = { 0 };
	char set[64], want[256];
	config_init(&c);
	for (int i = 0; bad_real[i]; i++) {
		snprintf(set, sizeof set, "clock_ghz=%s", bad_real[i]);
		ck_assert_int_eq(config_set(&c, set, &e), -1);
		snprintf(want, sizeof want, "--set:1:11: clock_ghz: expected a number in [0.001, 100], found \"%s\"",
			 bad_real[i]);
		ck_assert_str_eq(e.msg, want);
	}
	for (int i = 0; bad_int[i]; i++) {
		snprintf(set, sizeof set, "array.rows=%s", bad_int[i]);
		ck_assert_int_eq(config_set(&c, set, &e), -1);
		snprintf(want, sizeof want, "--set:1:12: array.rows: expected an integer in [1, 4096], found \"%s\"",
			 bad_int[i]);
		ck_assert_str_eq(e.msg, want);
	}
	/* What is a number: fractions either side of the point, exponents, zero itself. */
	ck_assert_int_eq(config_set(&c, "clock_ghz=.5", &e), 0);
	ck_assert(c.arch.clock_ghz == 0.5);
	ck_assert_int_eq(config_set(&c, "clock_ghz=2.", &e), 0);
	ck_assert(c.arch.clock_ghz == 2);
	ck_assert_int_eq(config_set(&c, "clock_ghz=15e-1", &e), 0);
	ck_assert(c.arch.clock_ghz == 1.5);
	ck_assert_int_eq(config_set(&c, "hbm.gbps=1E+5", &e), 0);
	ck_assert(c.arch.hbm.gbps == 100000);
	ck_assert_int_eq(config_set(&c, "clock_ghz=0.25", &e), 0);
	ck_assert(c.arch.clock_ghz == 0.25);
	ck_assert_int_eq(config_set(&c, "array.rows=4096", &e), 0);
	ck_assert_int_eq(c.arch.array.rows, 4096);
	/* The same grammar in a file. */
	expect_config_error("clock_ghz: 0x1p3\n", ":1:12: clock_ghz: expected a number in [0.001, 100], found \"0x1p3\"");
	expect_config_error("array: {rows: 010}\n", ":1:15: array.rows: expected an integer in [1, 4096], found \"010\"");
}
END_TEST

/* At most CONFIG_MAX_FILES files merge; the ninth is named in the error. */
START_TEST(config_file_limit)
{
	struct config c;
	struct err e = { 0 };
	char *dir = th_tmpdir(), *path = th_write(dir, "c.yaml", "array: {rows: 8}\n"), want[600];
	ck_assert_msg(config_load(&c, path, &e) == 0, "%s", e.msg);
	for (int i = 1; i < CONFIG_MAX_FILES; i++)
		ck_assert_msg(config_merge(&c, path, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(config_merge(&c, path, &e), -1);
	ck_assert_int_eq(err_status(&e), ERR_INPUT);
	snprintf(want, sizeof want, "%s: expected at most 8 config files, found more", path);
	ck_assert_str_eq(e.msg, want);
	free(path);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *t = tcase_create("config");
	tcase_add_loop_test(t, dump_round_trips, 0, (int)(sizeof presets / sizeof *presets));
	tcase_add_test(t, equal_sees_one_change);
	tcase_add_test(t, tpu_v1_values);
	tcase_add_test(t, tpu_peaks_as_published);
	tcase_add_test(t, rate_refusals);
	tcase_add_test(t, defaults_fill_unset_keys);
	tcase_add_test(t, set_overrides_and_checks);
	tcase_add_test(t, gemmini_unified);
	tcase_add_test(t, memory_overlay);
	tcase_add_test(t, memory_type_brings_defaults);
	tcase_add_loop_test(t, memory_type_matches_overlay, 0, 4);
	tcase_add_test(t, memory_type_given_key_wins);
	tcase_add_test(t, memory_type_overlay_order);
	tcase_add_test(t, memory_type_set);
	tcase_add_test(t, memory_type_set_over_preset);
	tcase_add_test(t, presets_cite_no_outside_file);
	tcase_add_test(t, auto_port_widths);
	tcase_add_test(t, port_warnings);
	tcase_add_test(t, key_twice_in_two_forms);
	tcase_add_test(t, tags_rejected);
	tcase_add_test(t, number_grammar);
	tcase_add_test(t, config_file_limit);
	suite_add_tcase(s, t);
	return s;
}
