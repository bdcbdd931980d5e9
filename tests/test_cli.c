/*
 * test_cli.c - the command line itself: every command's help, output paths
 * (missing parents made; an output that cannot be written refused before the
 * run, leaving nothing), presets found by name in a checkout and after make
 * install, and SCALE-Sim's COMPUTE_REPORT.csv against folds counted by hand.
 */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

#define CFG_4X4 "array:\n  rows: 4\n  cols: 4\n"
#define WL_FC "name: t\nlayers:\n  - {name: f, type: fc, in_features: 8, out_features: 8}\n"
#define RUN "run", "-c", "c.yaml", "-w", "w.yaml"
/* A run that reached the simulation would be refused for its folds: a path error shows the check came first. */
#define LIMIT "--set", "sim.max_folds=1"

/* A directory with c.yaml, w.yaml, a sweep spec s.yaml over them and f, a plain file (owned; th_rmdir). */
static char *workdir(void)
{
	char *dir = th_tmpdir(), spec[2 * PATH_MAX];
	free(th_write(dir, "c.yaml", CFG_4X4));
	free(th_write(dir, "w.yaml", WL_FC));
	free(th_write(dir, "f", "a file\n"));
	snprintf(spec, sizeof spec, "configs: [%s/c.yaml]\nworkloads: [%s/w.yaml]\naxes:\n  array.rows: [4, 8]\n", dir,
		 dir);
	free(th_write(dir, "s.yaml", spec));
	return dir;
}

/* The names in dir, sorted, joined by spaces. */
static void listing(const char *dir, char *buf, size_t size)
{
	struct dirent **v;
	int n = scandir(dir, &v, NULL, alphasort);
	ck_assert_int_ge(n, 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, ".."))
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? " " : "", v[i]->d_name);
		free(v[i]);
	}
	free(v);
}

static bool exists(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* ---- help ---- */

/* Each command's options as its help must list them, worked out from what each command reads. */
static const struct {
	const char *cmd;
	const char *opts[24];
} helps[] = {
	{ "run", { "-c, --config CONFIG", "-w, --workload WORKLOAD", "-o, --out DIR", "--dataflow ws|os|is", "--model MODEL",
		   "--ideal-memory", "--batch N", "--train", "--seed N", "--save-outputs DIR", "--chakra PREFIX", "--vcd BASE",
		   "--plot DIR", "--timing",
		   "--trace FILE.gz", "--dram-trace FILE.gz", "--dram-trace-format FORMAT", "--no-reuse",
		   "--set key.path=value", "-h, --help" } },
	{ "roofline", { "-c, --config CONFIG", "-w, --workload WORKLOAD", "-o, --out FILE", "--dataflow ws|os|is",
			"--model MODEL", "--ideal-memory", "--batch N", "--train", "--seed N", "--no-reuse", "--set key.path=value",
			"-h, --help" } },
	{ "compare", { "-c, --config CONFIG", "-w, --workload WORKLOAD", "-o, --out FILE", "--dataflows LIST",
		       "--model MODEL", "--ideal-memory", "--batch N", "--train", "--no-reuse", "--csv", "--set key.path=value",
		       "-h, --help" } },
	{ "lower", { "-c, --config CONFIG", "-w, --workload WORKLOAD", "--batch N", "--train", "--csv", "--set key.path=value",
		     "-h, --help" } },
	{ "config", { "-c, --config CONFIG", "--train", "--dump", "--set key.path=value", "-h, --help" } },
	{ "lab", { "-c, --config CONFIG", "--dataflow ws|os|is", "--seed N", "--vcd BASE", "--gemm MxKxN", "--cycles A..B",
		   "--step", "--format text|json", "--html FILE", "--set key.path=value", "-h, --help" } },
	{ "sweep", { "-o, --out DIR", "-j, --jobs N", "--points I-J", "--no-reuse", "--plot", "--emit parallel|slurm",
		     "--chunk-size C", "--merge DIR", "--hold AXIS=VALUE", "--pareto X,Y", "--heatmaps first|all", "-h, --help" } },
	{ "trace", { "--records", "-h, --help" } },
};

/* tpusim CMD --help, tpusim CMD -h and tpusim help CMD: the same text, every option on one line of its own. */
START_TEST(help_lists_options)
{
	char *dir = th_tmpdir(), *out[3], *err;
	const char *cmd = helps[_i].cmd;
	const char *a0[] = { cmd, "--help", NULL }, *a1[] = { cmd, "-h", NULL }, *a2[] = { "help", cmd, NULL };
	const char *const *argv[3] = { a0, a1, a2 };
	char usage[64];
	int nopts = 0, lines = 0;

	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(th_cli(dir, argv[k], &out[k], &err), 0);
		ck_assert_str_eq(err, "");
		free(err);
	}
	ck_assert_str_eq(out[0], out[1]);
	ck_assert_str_eq(out[0], out[2]);
	snprintf(usage, sizeof usage, "usage: tpusim %s ", cmd);
	ck_assert_msg(!strncmp(out[0], usage, strlen(usage)), "%s", out[0]);
	const char *list = strstr(out[0], "\noptions:\n");
	ck_assert_ptr_nonnull(list);
	list += strlen("\noptions:\n");
	/* Every line of the list: "  LABEL  help", one per option, no line wrapped. */
	for (const char *l = list; *l; l = strchr(l, '\n') + 1) {
		size_t len = strcspn(l, "\n");
		ck_assert_msg(len > 4 && !strncmp(l, "  ", 2) && l[2] == '-' && len <= 110, "%.*s", (int)len, l);
		lines++;
	}
	for (; helps[_i].opts[nopts]; nopts++) {
		const char *o = helps[_i].opts[nopts];
		int found = 0;
		for (const char *l = list; *l; l = strchr(l, '\n') + 1)
			found += !strncmp(l + 2, o, strlen(o)) && !strncmp(l + 2 + strlen(o), "  ", 2) &&
				 l[2 + strlen(o) + strspn(l + 2 + strlen(o), " ")] != '\n';
		ck_assert_msg(found == 1, "tpusim %s --help: %s on %d lines with its help", cmd, o, found);
	}
	ck_assert_int_eq(lines, nopts);
	for (int k = 0; k < 3; k++)
		free(out[k]);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* The presets in configs/, "edge_32x32, ..., memory/hbm3", listed here from the directory itself. */
static void preset_list(const char *configs, char *buf, size_t size)
{
	char names[64][96];
	int n = 0;
	const char *subs[] = { "", "area/", "energy/", "memory/", "pods/" };
	buf[0] = '\0';
	for (size_t s = 0; s < sizeof subs / sizeof *subs; s++) {
		char path[PATH_MAX];
		struct dirent *de;
		DIR *d;
		int first = n;
		snprintf(path, sizeof path, "%s/%s", configs, subs[s]);
		ck_assert_ptr_nonnull(d = opendir(path));
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml") && n < 64)
				snprintf(names[n++], sizeof names[0], "%s%.*s", subs[s], (int)len - 5, de->d_name);
		}
		closedir(d);
		qsort(names[first], (size_t)(n - first), sizeof names[0], (int (*)(const void *, const void *))strcmp);
	}
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "", names[i]);
}

/* tpusim --help, -h and help: the commands and every preset; unknown commands for help are bad input. */
START_TEST(help_overview_and_errors)
{
	char *dir = th_tmpdir(), *out[3], *err, presets[4096];
	const char *a0[] = { "--help", NULL }, *a1[] = { "-h", NULL }, *a2[] = { "help", NULL };
	const char *const *argv[3] = { a0, a1, a2 };
	static const struct {
		const char *args[4];
		const char *want;
	} bad[] = {
		{ { "help", "nosuch" }, "help: expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found "
					"\"nosuch\"\n" },
		{ { "help", "swep" }, "help: expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found "
				      "\"swep\" (did you mean sweep?)\n" },
		{ { "help", "run", "lab" }, "help: expected one command, found another, \"lab\"\n" },
		{ { "nosuch", "--help" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found "
					  "\"nosuch\"; try tpusim --help\n" },
		/* Another command's option is refused, not ignored. */
		{ { "run", "--csv" }, "--csv: expected an option of tpusim run (see tpusim --help), found an option of "
				      "tpusim compare\n" },
		{ { "lower", "--dataflow", "ws" }, "--dataflow: expected an option of tpusim lower (see tpusim --help), found "
						   "an option of tpusim run\n" },
		{ { "config", "--gemm", "4x4x4" }, "--gemm: expected an option of tpusim config (see tpusim --help), found "
						   "an option of tpusim lab\n" },
		{ { "roofline", "-j", "2" }, "-j: expected an option of tpusim roofline (see tpusim --help), found an option "
					     "of tpusim sweep\n" },
	};

	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(th_cli(dir, argv[k], &out[k], &err), 0);
		ck_assert_str_eq(err, "");
		free(err);
	}
	ck_assert_str_eq(out[0], out[1]);
	ck_assert_str_eq(out[0], out[2]);
	for (size_t i = 0; i < sizeof helps / sizeof *helps; i++) {
		char line[64];
		snprintf(line, sizeof line, "\n  %s ", helps[i].cmd);
		ck_assert_msg(strstr(out[0], line), "no line for %s in\n%s", helps[i].cmd, out[0]);
	}
	/* Every preset, as the list wraps it: names between ", " or line breaks. */
	preset_list("configs", presets, sizeof presets);
	for (char *p = strtok(presets, ", "); p; p = strtok(NULL, ", ")) {
		char *at = strstr(out[0], p);
		ck_assert_msg(at && (at[-1] == ' ') && strchr(",\n", at[strlen(p)]), "preset %s not listed in\n%s", p,
			      out[0]);
	}
	for (int k = 0; k < 3; k++)
		free(out[k]);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_int_eq(th_cli(dir, bad[i].args, &out[0], &err), 2);
		ck_assert_str_eq(err, bad[i].want);
		ck_assert_str_eq(out[0], "");
		free(out[0]);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * The one parser's refusals, the same for every command (sweep and trace
 * too): an unknown option with the nearest of the command's own, another
 * command's option with that command's name (the first in tpusim --help that
 * takes it) and the command's hint, a second operand, a missing value, a
 * value out of its range, a list that is full.
 */
START_TEST(parser_refusals)
{
	char *dir = workdir(), *out, *err;
	static const struct {
		const char *args[24];
		const char *want;
	} cases[] = {
		{ { "run", "--dataflw", "ws" }, "--dataflw: expected an option of tpusim run (see tpusim --help), found an "
						"unknown option (did you mean --dataflow?)" },
		{ { "sweep", "s.yaml", "--recrods" }, "--recrods: expected an option of tpusim sweep (see tpusim --help), found "
						      "an unknown option" },
		{ { "trace", "t.gz", "--record" }, "--record: expected an option of tpusim trace (see tpusim --help), found an "
						   "unknown option (did you mean --records?)" },
		{ { "rnu" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found \"rnu\" "
			     "(did you mean run?); try tpusim --help" },
		{ { "swep", "s.yaml" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found "
					"\"swep\" (did you mean sweep?); try tpusim --help" },
		/* The command is the first word wrong, whatever follows it. */
		{ { "swep", "--bogus" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), found "
					 "\"swep\" (did you mean sweep?); try tpusim --help" },
		{ { "swep", "s.yaml", "-j2" }, "expected a command (run, roofline, compare, lower, config, lab, sweep, trace), "
					       "found \"swep\" (did you mean sweep?); try tpusim --help" },
		{ { "sweep", "s.yaml", "-o", "o", "--model", "cycle" }, "--model: expected an option of tpusim sweep (see tpusim "
									"--help), found an option of tpusim run" },
		{ { "trace", "t.gz", "-c", "c.yaml" }, "-c: expected an option of tpusim trace (see tpusim --help), found an "
						       "option of tpusim run" },
		{ { "config", "--dump", "--records" }, "--records: expected an option of tpusim config (see tpusim --help), "
						       "found an option of tpusim trace" },
		{ { "lab", "-c", "c.yaml", "--gemm", "4x4x4", "--trace", "t.gz" }, "--trace: expected an option of tpusim lab "
		  "(see tpusim --help), found an option of tpusim run; lab runs one GEMM on the functional model with ideal "
		  "memory" },
		{ { "compare", "-c", "c.yaml", "-w", "w.yaml", "--dram-trace-format", "dramsim3" }, "--dram-trace-format: "
		  "expected an option of tpusim compare (see tpusim --help), found an option of tpusim run" },
		{ { "sweep", "s.yaml", "t.yaml" }, "sweep: expected one SPEC.yaml, found another, \"t.yaml\"" },
		{ { "run", "extra" }, "extra: expected an option of tpusim run (see tpusim --help), found an unknown option" },
		{ { "run", "-c" }, "-c: expected a value after it, found the end of the command line" },
		{ { "sweep", "s.yaml", "-o", "o", "-jx" }, "-j: expected an integer in [1, 64], found \"x\"" },
		{ { "sweep", "s.yaml", "-o", "o", "-j65" }, "-j: expected an integer in [1, 64], found \"65\"" },
		{ { "sweep", "s.yaml", "-o", "o", "--jobs", "0" }, "--jobs: expected an integer in [1, 64], found \"0\"" },
		{ { "run", "-w", "w.yaml", "--model", "fast" }, "--model: expected analytic, cycle or functional, found \"fast\"" },
		{ { "run", "-w", "w.yaml", "--seed", "1x" }, "--seed: expected an integer in [0, 2^64), found \"1x\"" },
		{ { "run", "-w", "w.yaml", "--batch", "1048577" }, "--batch: expected an integer in [1, 1048576], found "
								   "\"1048577\"" },
		{ { "run", "-c", "c.yaml", "-c", "c.yaml", "-c", "c.yaml", "-c", "c.yaml", "-c", "c.yaml", "-c", "c.yaml", "-c",
		    "c.yaml", "-c", "c.yaml", "-c", "c.yaml" }, "-c: expected at most 8 config files, found more" },
		{ { "sweep", "--plot", "o", "--no-reuse" }, "sweep --plot: expected only DIR and --hold, --pareto, --heatmaps, found another option" },
		{ { "sweep", "--plot" }, "--plot: expected a value after it, found the end of the command line" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int rc = th_cli(dir, cases[i].args, &out, &err);
		ck_assert_msg(rc == 2, "case %zu: exit %d: %s", i, rc, err);
		ck_assert_msg(strlen(err) > 0 && err[strlen(err) - 1] == '\n', "case %zu: %s", i, err);
		err[strlen(err) - 1] = '\0';
		ck_assert_str_eq(err, cases[i].want);
		ck_assert_str_eq(out, "");
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * Every option that one command's help lists and another's does not is
 * refused by the other, naming the first command (in tpusim --help's order)
 * whose help lists it: what the helps say, read back from their text.
 */
/* Whether the options of a help text list name (as the first word of a line, or after "-x, "). */
static bool help_lists(const char *help, const char *name)
{
	for (const char *l = strstr(help, "\noptions:\n") + 10; *l; l = strchr(l, '\n') + 1) {
		char a[64] = "", b[64] = "";
		if (sscanf(l, " %63[^ ,\n], %63[^ \n]", a, b) >= 1 && (!strcmp(a, name) || !strcmp(b, name)))
			return true;
	}
	return false;
}

START_TEST(other_commands_options_refused)
{
	static const char *const cmds[] = { "run", "roofline", "compare", "lower", "config", "lab", "sweep", "trace" };
	enum { NCMD = sizeof cmds / sizeof *cmds };
	char *dir = workdir(), *help[NCMD], *out, *err;
	int checked = 0;
	for (int c = 0; c < NCMD; c++) {
		const char *argv[] = { "help", cmds[c], NULL };
		ck_assert_int_eq(th_cli(dir, argv, &help[c], &err), 0);
		free(err);
	}
	for (int c = 0; c < NCMD; c++)
		for (const char *l = strstr(help[c], "\noptions:\n") + 10; *l; l = strchr(l, '\n') + 1) {
			char name[64];
			int owner = 0;
			ck_assert_int_eq(sscanf(l, " %63[^ ,\n]", name), 1);
			while (!help_lists(help[owner], name))
				owner++;
			for (int o = 0; o < NCMD; o++) {
				char want[300];
				const char *argv[] = { cmds[o], name, "x", NULL };
				if (help_lists(help[o], name))
					continue;
				ck_assert_int_eq(th_cli(dir, argv, &out, &err), 2);
				snprintf(want, sizeof want, "%s: expected an option of tpusim %s (see tpusim --help), found an option "
					 "of tpusim %s", name, cmds[o], cmds[owner]);
				ck_assert_msg(!strncmp(err, want, strlen(want)), "%s %s: %s", cmds[o], name, err);
				free(out);
				free(err);
				checked++;
			}
		}
	ck_assert_int_gt(checked, 100);
	for (int c = 0; c < NCMD; c++)
		free(help[c]);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * hbm.type brings its memory over a preset that sets every memory key, the
 * same way from --set and from a sweep axis: tpu_v1's DDR3 becomes HBM3
 * (JESD238: 1024 pins x 6.4 Gb/s / 8 = 819 GB/s, 32 pseudo-channels).
 */
START_TEST(memory_type_over_preset)
{
	char *dir = workdir(), *out, *err, spec[PATH_MAX + 128], path[2 * PATH_MAX];
	const char *dump[] = { "config", "--dump", "-c", "tpu_v1", "--set", "hbm.type=hbm3", NULL };
	const char *sweep[] = { "sweep", "t.yaml", "-o", "sw", NULL };
	struct dirent **v;
	int n, seen = 0;

	ck_assert_int_eq(th_cli(dir, dump, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\nhbm:\n"));
	ck_assert_msg(strstr(out, "\n  type: hbm3 ") && strstr(out, "\n  gbps: 819 ") && strstr(out, "\n  channels: 32 "),
		      "%.300s", strstr(out, "\nhbm:\n"));
	free(out);
	free(err);
	snprintf(spec, sizeof spec, "configs: [tpu_v1]\nworkloads: [%s/w.yaml]\naxes: {hbm.type: [ddr3, hbm3], model: "
		 "[analytic]}\n", dir);
	free(th_write(dir, "t.yaml", spec));
	ck_assert_int_eq(th_cli(dir, sweep, &out, &err), 0);
	snprintf(path, sizeof path, "%s/sw/points", dir);
	ck_assert_int_eq(n = scandir(path, &v, NULL, alphasort), 4);
	for (int i = 0; i < n; i++) {
		if (v[i]->d_name[0] != '.') {
			char file[3 * PATH_MAX];
			snprintf(file, sizeof file, "%s/%s", path, v[i]->d_name);
			struct ydoc *d = th_json_file(file);
			bool hbm3 = !strcmp(th_json_str(d->root, "config.hbm.type"), "hbm3");
			ck_assert_int_eq(th_json_int(d->root, "config.hbm.gbps"), hbm3 ? 819 : 34);
			ck_assert_int_eq(th_json_int(d->root, "config.hbm.channels"), hbm3 ? 32 : 2);
			seen |= 1 << hbm3;
			ydoc_free(d);
		}
		free(v[i]);
	}
	free(v);
	ck_assert_int_eq(seen, 3);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- output paths ---- */

/* Every output of every command gets its missing parent directories. */
START_TEST(outputs_make_parents)
{
	char *dir = workdir(), *out, *err;
	static const struct {
		const char *args[16];
		const char *made[3];
	} cases[] = {
		{ { RUN, "-o", "a/b/out", "--plot", "p/q/plots", "--vcd", "v/w/t" },
		  { "a/b/out/layers.csv", "p/q/plots/cycles.png", "v/w/t.vcd" } },
		{ { RUN, "--model", "functional", "--save-outputs", "s/t/res" }, { "s/t/res/f.npy" } },
		{ { "roofline", "-c", "c.yaml", "-w", "w.yaml", "-o", "r/s/roof.svg" }, { "r/s/roof.svg" } },
		{ { "compare", "-c", "c.yaml", "-w", "w.yaml", "-o", "c/d/cmp.svg" }, { "c/d/cmp.svg" } },
		{ { "lab", "-c", "c.yaml", "--gemm", "4x4x4", "--html", "h/i/page.html" }, { "h/i/page.html" } },
		{ { "lab", "-c", "c.yaml", "--gemm", "4x4x4", "--vcd", "l/m/t" }, { "l/m/t.vcd" } },
		{ { "sweep", "s.yaml", "-o", "x/y/sw" }, { "x/y/sw/sweep.csv" } },
		{ { "sweep", "s.yaml", "-o", "e/f/jobs", "--emit", "slurm" }, { "e/f/jobs/sweep.sbatch" } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int rc = th_cli(dir, cases[i].args, &out, &err);
		ck_assert_msg(rc == 0, "case %zu: exit %d: %s", i, rc, err);
		for (int k = 0; k < 3 && cases[i].made[k]; k++)
			ck_assert_msg(exists(dir, cases[i].made[k]), "case %zu: no %s", i, cases[i].made[k]);
		free(out);
		free(err);
	}
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * An output that cannot be written (under the plain file f) is bad input,
 * found before the run, and the directory is as it was: no output, no parent
 * made for another output of the same command.
 */
START_TEST(outputs_refused_before_run)
{
	static const struct {
		const char *args[20];
		const char *want;
	} cases[] = {
		{ { RUN, LIMIT, "-o", "f/out" }, "-o: expected a directory that can be created, found \"f/out\" (Not a directory)" },
		{ { RUN, LIMIT, "-o", "f" }, "f: expected a directory for the reports, found a file" },
		{ { RUN, LIMIT, "-o", "f/x/y" },
		  "-o: expected a directory that can be created, found \"f/x/y\" (Not a directory)" },
		{ { RUN, LIMIT, "-o", "n1/n2/out", "--plot", "f/p" },
		  "--plot: expected a directory that can be created, found \"f/p\" (Not a directory)" },
		{ { RUN, LIMIT, "-o", "n1/out", "--vcd", "f/t" },
		  "--vcd: expected a writable path, found \"f/t.vcd\" (Not a directory)" },
		{ { RUN, "--model", "functional", "--set", "sim.max_pe_updates=1", "-o", "n1/out", "--save-outputs", "f/s" },
		  "--save-outputs: expected a directory that can be created, found \"f/s\" (Not a directory)" },
		{ { "roofline", "-c", "c.yaml", "-w", "w.yaml", LIMIT, "-o", "f/r.png" },
		  "-o: expected a writable path, found \"f/r.png\" (Not a directory)" },
		{ { "compare", "-c", "c.yaml", "-w", "w.yaml", LIMIT, "-o", "f/c.svg" },
		  "-o: expected a writable path, found \"f/c.svg\" (Not a directory)" },
		{ { "lab", "-c", "c.yaml", "--gemm", "4x4x4", "--html", "f/p.html" },
		  "--html: expected a writable path, found \"f/p.html\" (Not a directory)" },
		{ { "lab", "-c", "c.yaml", "--gemm", "4x4x4", "--vcd", "f/t" },
		  "--vcd: expected a writable path, found \"f/t.vcd\" (Not a directory)" },
		{ { "sweep", "s.yaml", "-o", "f/sw" },
		  "-o: expected a directory that can be created and written, found \"f/sw\" (Not a directory)" },
		/* Parents made for outputs are removed again when the command fails later. */
		{ { RUN, "--set", "array.rows=0", "-o", "n1/n2/out", "--plot", "n3/p", "--vcd", "n4/n5/t" },
		  "--set:1:12: array.rows: expected an integer in [1, 4096], found \"0\"" },
		{ { "roofline", "-c", "c.yaml", "-w", "w.yaml", "--set", "array.rows=0", "-o", "n1/n2/r.png" },
		  "--set:1:12: array.rows: expected an integer in [1, 4096], found \"0\"" },
		{ { "lab", "-c", "c.yaml", "--set", "array.rows=0", "--gemm", "4x4x4", "--vcd", "n1/n2/t" },
		  "--set:1:12: array.rows: expected an integer in [1, 4096], found \"0\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *dir = workdir(), *out, *err, names[4096];
		int rc = th_cli(dir, cases[i].args, &out, &err);
		ck_assert_msg(rc == 2, "case %zu: exit %d: %s", i, rc, err);
		ck_assert_msg(strlen(err) > 0 && err[strlen(err) - 1] == '\n', "case %zu: %s", i, err);
		err[strlen(err) - 1] = '\0';
		ck_assert_str_eq(err, cases[i].want);
		ck_assert_str_eq(out, "");
		listing(dir, names, sizeof names);
		ck_assert_msg(!strcmp(names, "c.yaml f s.yaml w.yaml"), "case %zu left: %s", i, names);
		free(out);
		free(err);
		th_rmdir(dir);
		free(dir);
	}
}
END_TEST

/* ---- presets by name ---- */

/* The first line of config --dump and the rest, split in place. */
static char *dump_body(char *dump)
{
	char *nl = strchr(dump, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	return nl + 1;
}

/* Presets by name from a checkout's build: any working directory, overlays too, a file of that name first. */
START_TEST(presets_by_name)
{
	char *dir = th_tmpdir(), *out, *err, *ref, *rerr, want[3 * PATH_MAX], p1[PATH_MAX], p2[PATH_MAX], presets[4096];
	ck_assert_ptr_nonnull(realpath("configs/tpu_v4.yaml", p1));
	ck_assert_ptr_nonnull(realpath("configs/memory/hbm3.yaml", p2));
	const char *byname[] = { "config", "--dump", "-c", "tpu_v4", "-c", "memory/hbm3", NULL };
	const char *bypath[] = { "config", "--dump", "-c", p1, "-c", p2, NULL };

	ck_assert_int_eq(th_cli(dir, byname, &out, &err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(th_cli(dir, bypath, &ref, &rerr), 0);
	snprintf(want, sizeof want, "# tpusim config, every key resolved (from %s, %s)", p1, p2);
	ck_assert_str_eq(dump_body(out), dump_body(ref));
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(ref, want);
	free(out);
	free(err);
	free(ref);
	free(rerr);

	/* Not a file, not a preset: the presets are listed. */
	const char *unknown[] = { "run", "-c", "tpu_v9", "-w", "w.yaml", NULL };
	preset_list("configs", presets, sizeof presets);
	snprintf(want, sizeof want, "tpu_v9: expected a config file or a preset (%s), found neither (did you mean tpu_v1?)\n",
		 presets);
	ck_assert_int_eq(th_cli(dir, unknown, &out, &err), 2);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	/* A preset's name in another case, and a workload's near miss: the name meant. */
	const char *upper[] = { "run", "-c", "TPU_V1", "-w", "w.yaml", NULL };
	snprintf(want, sizeof want, "TPU_V1: expected a config file or a preset (%s), found neither (did you mean tpu_v1?)\n",
		 presets);
	ck_assert_int_eq(th_cli(dir, upper, &out, &err), 2);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);
	const char *near[] = { "run", "-c", "tpu_v1", "-w", "resnet5", NULL };
	ck_assert_int_eq(th_cli(dir, near, &out, &err), 2);
	ck_assert_msg(strstr(err, "resnet5: expected a workload file or a workload name (") == err, "%s", err);
	ck_assert_msg(strstr(err, "), found neither (did you mean resnet50?)\n"), "%s", err);
	free(out);
	free(err);

	/* A path is a path: the message for a missing file, whatever presets there are. */
	const char *paths[][6] = { { "config", "--dump", "-c", "tpu_v1.yaml" }, { "config", "--dump", "-c", "./tpu_v1" },
				   { "config", "--dump", "-c", "../tpu_v1" } };
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof want, "%s: expected a readable file, found No such file or directory\n", paths[i][3]);
		ck_assert_int_eq(th_cli(dir, paths[i], &out, &err), 2);
		ck_assert_str_eq(err, want);
		free(out);
		free(err);
	}

	/* A directory of that name (an earlier run's -o tpu_v4) does not hide the preset. */
	{
		char d[PATH_MAX + 16];
		snprintf(d, sizeof d, "%s/tpu_v4", dir);
		ck_assert_int_eq(mkdir(d, 0755), 0);
		const char *again[] = { "config", "--dump", "-c", "tpu_v4", NULL };
		ck_assert_int_eq(th_cli(dir, again, &out, &err), 0);
		ck_assert_str_eq(err, "");
		free(out);
		free(err);
	}

	/* A file of that name in the working directory comes first. */
	free(th_write(dir, "tpu_v1", CFG_4X4));
	const char *file[] = { "config", "--dump", "-c", "tpu_v1", NULL };
	ck_assert_int_eq(th_cli(dir, file, &out, &err), 0);
	dump_body(out);
	ck_assert_str_eq(out, "# tpusim config, every key resolved (from tpu_v1)");
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* make install with these arguments, from the checkout, installing the binaries under test. */
static void make_install(const char *dest, const char *prefix)
{
	char bin[PATH_MAX], lib[PATH_MAX + 16], a[4][PATH_MAX + 16], *out, *err;
	snprintf(bin, sizeof bin, "%s", th_tpusim());
	snprintf(lib, sizeof lib, "%.*s/libtpusim.so", (int)(strrchr(bin, '/') - bin), bin);
	snprintf(a[0], sizeof a[0], "DESTDIR=%s", dest);
	snprintf(a[1], sizeof a[1], "PREFIX=%s", prefix);
	snprintf(a[2], sizeof a[2], "BIN=%s", bin);
	snprintf(a[3], sizeof a[3], "LIB=%s", lib);
	const char *argv[] = { "-s", "--no-print-directory", "install", a[0], a[1], a[2], a[3],
			       strstr(bin, "/build/san/") ? "SAN=1" : "SAN=0", NULL };
	/* Not a sub-make of the make that runs the tests. */
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	int rc = th_run("make", ".", argv, &out, &err);
	ck_assert_msg(rc == 0, "make install: exit %d: %s%s", rc, out, err);
	free(out);
	free(err);
}

/*
 * make install PREFIX=tmp: tmp/bin/tpusim, run from another directory, finds
 * -c tpu_v1 in tmp/share/tpusim/configs and gives what the checkout's config
 * file gives; DESTDIR stages the same tree under another root.
 */
START_TEST(install_finds_presets)
{
	char *dir = th_tmpdir(), prefix[PATH_MAX], bin[PATH_MAX + 16], work[PATH_MAX + 8], wl[PATH_MAX], cfg[PATH_MAX];
	char want[3 * PATH_MAX], path[2 * PATH_MAX], presets[4096], *out, *err, *a, *b;
	struct stat st;

	snprintf(prefix, sizeof prefix, "%s/prefix", dir);
	make_install("", prefix);
	snprintf(bin, sizeof bin, "%s/bin/tpusim", prefix);
	ck_assert_int_eq(stat(bin, &st), 0);
	ck_assert(st.st_mode & S_IXUSR);
	snprintf(path, sizeof path, "%s/share/tpusim/configs/memory/hbm3.yaml", prefix);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	snprintf(path, sizeof path, "%s/lib/libtpusim.so", prefix);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof path, "%s/include/tpusim.h", prefix);
	ck_assert_int_eq(stat(path, &st), 0);

	/* From a directory with no configs in sight. */
	snprintf(work, sizeof work, "%s/work", dir);
	ck_assert_int_eq(mkdir(work, 0755), 0);
	ck_assert_ptr_nonnull(realpath("configs/workloads/mlp.yaml", wl));
	ck_assert_ptr_nonnull(realpath("configs/tpu_v1.yaml", cfg));
	const char *run[] = { "run", "-c", "tpu_v1", "-w", wl, "-o", "installed", NULL };
	const char *ref[] = { "run", "-c", cfg, "-w", wl, "-o", "checkout", NULL };
	ck_assert_int_eq(th_run(bin, work, run, &out, &err), 0);
	free(out);
	free(err);
	ck_assert_int_eq(th_cli(work, ref, &out, &err), 0);
	free(out);
	free(err);
	snprintf(path, sizeof path, "%s/installed/layers.csv", work);
	a = th_slurp(path);
	snprintf(path, sizeof path, "%s/checkout/layers.csv", work);
	b = th_slurp(path);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);

	const char *dump[] = { "config", "--dump", "-c", "tpu_v1", NULL };
	ck_assert_int_eq(th_run(bin, work, dump, &out, &err), 0);
	dump_body(out);
	snprintf(want, sizeof want, "# tpusim config, every key resolved (from %s/share/tpusim/configs/tpu_v1.yaml)", prefix);
	ck_assert_str_eq(out, want);
	free(out);
	free(err);

	const char *unknown[] = { "config", "--dump", "-c", "tpu_v9", NULL };
	preset_list("configs", presets, sizeof presets);
	snprintf(want, sizeof want, "tpu_v9: expected a config file or a preset (%s), found neither (did you mean tpu_v1?)\n",
		 presets);
	ck_assert_int_eq(th_run(bin, work, unknown, &out, &err), 2);
	ck_assert_str_eq(err, want);
	free(out);
	free(err);

	/* DESTDIR: the tree under DESTDIR/PREFIX finds its own presets. */
	snprintf(path, sizeof path, "%s/stage", dir);
	make_install(path, "/opt/tpusim");
	snprintf(bin, sizeof bin, "%s/stage/opt/tpusim/bin/tpusim", dir);
	const char *overlay[] = { "config", "--dump", "-c", "memory/hbm3", NULL };
	ck_assert_int_eq(th_run(bin, work, overlay, &out, &err), 0);
	dump_body(out);
	snprintf(want, sizeof want, "# tpusim config, every key resolved (from %s/stage/opt/tpusim/share/tpusim/configs/"
		 "memory/hbm3.yaml)", dir);
	ck_assert_str_eq(out, want);
	free(out);
	free(err);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/* ---- SCALE-Sim's COMPUTE_REPORT.csv ---- */

#define SCALESIM_HEADER "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,"

struct compute_row {
	long long layer, cycles, stalls;
	double util, mapping, compute;
};

/* Row i of DIR/COMPUTE_REPORT.csv (after the header, checked byte for byte); its text in line. */
static void compute_row(const char *dir, int i, struct compute_row *r, char *line, size_t size)
{
	char path[PATH_MAX], *text, *l;
	int n = 0;
	snprintf(path, sizeof path, "%s/COMPUTE_REPORT.csv", dir);
	text = th_slurp(path);
	ck_assert_msg(!strncmp(text, SCALESIM_HEADER "\n", strlen(SCALESIM_HEADER) + 1), "%s", text);
	l = text + strlen(SCALESIM_HEADER) + 1;
	for (int k = 0; k < i; k++) {
		ck_assert_ptr_nonnull(strchr(l, '\n'));
		l = strchr(l, '\n') + 1;
	}
	snprintf(line, size, "%.*s", (int)strcspn(l, "\n"), l);
	ck_assert_int_eq(sscanf(line, "%lld, %lld, %lld, %lf, %lf, %lf,%n", &r->layer, &r->cycles, &r->stalls, &r->util,
				&r->mapping, &r->compute, &n), 6);
	ck_assert_msg(n == (int)strlen(line), "%s", line);
	free(text);
}

static void near(double got, double want, const char *what)
{
	ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want), "%s: %.17g, expected %.17g", what, got, want);
}

/*
 * mm = 10 x 6 times 6 x 5 (300 MACs) on a 4 x 4 array, SCALE-Sim's mapping
 * per dataflow; ideal memory, so no stalls. Folds of Sr x Sc, T streamed:
 *   ws  Sr = K = 6,  Sc = N = 5,  T = M = 10: 2 x 2 folds of 2R + C + T - 2 = 20, less 1: 79
 *       mapped 6 x 5 = 30 of 4 folds x 16 PEs: 46.875%; each fold as SCALE-Sim counts it
 *       2R + 2C + T - 3 = 23 cycles: compute util 300 / (4 x 16 x 23)
 *   os  Sr = M = 10, Sc = N = 5,  T = K = 6:  3 x 2 folds of R + C + T - 2 = 12, less 1: 71
 *       mapped 50 of 96; R + C + T - 2 = 12: 300 / (96 x 12)
 *   is  Sr = K = 6,  Sc = M = 10, T = N = 5:  2 x 3 folds of 2R + C + T - 2 = 15, less 1: 89
 *       mapped 60 of 96; 2R + 2C + T - 3 = 18: 300 / (96 x 18)
 * Overall util: 100 x 300 MACs / (cycles x 16 PEs). The relu after it maps
 * nothing: 0.0 for all three.
 */
START_TEST(scalesim_compute_report)
{
	static const struct {
		const char *df;
		long long cycles;
		double util, mapping, compute;
	} cases[] = {
		{ "ws", 79, 30000.0 / (79 * 16), 100.0 * 30 / 64, 100.0 * 300 / (64 * 23) },
		{ "os", 71, 30000.0 / (71 * 16), 100.0 * 50 / 96, 100.0 * 300 / (96 * 12) },
		{ "is", 89, 30000.0 / (89 * 16), 100.0 * 60 / 96, 100.0 * 300 / (96 * 18) },
	};
	char *dir = th_tmpdir(), *out, *err, line[256], path[PATH_MAX];
	struct compute_row r;
	struct stat st;
	free(th_write(dir, "c.yaml", CFG_4X4 "  scalesim_compat: true\n"));
	free(th_write(dir, "w.yaml", "name: t\nlayers:\n  - {name: mm, type: matmul, m: 10, k: 6, n: 5, b: weight}\n"
				     "  - {name: r, type: relu, elements: 50}\n"));
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *argv[] = { RUN, "--ideal-memory", "--dataflow", cases[i].df, "-o", cases[i].df, NULL };
		char sub[PATH_MAX];
		ck_assert_int_eq(th_cli(dir, argv, &out, &err), 0);
		free(out);
		free(err);
		snprintf(sub, sizeof sub, "%s/%s", dir, cases[i].df);
		compute_row(sub, 0, &r, line, sizeof line);
		ck_assert_int_eq(r.layer, 0);
		ck_assert_int_eq(r.cycles, cases[i].cycles);
		ck_assert_int_eq(r.stalls, 0);
		/* Both one division of exact integers, rounded once: equal. */
		ck_assert_msg(r.util == cases[i].util, "%s: %s", cases[i].df, line);
		ck_assert_msg(r.mapping == cases[i].mapping, "%s: %s", cases[i].df, line);
		near(r.compute, cases[i].compute, line);
		if (i == 0) {
			/* Numbers as Python prints them (repr of 30000/1264 and of 30000/1472). */
			ck_assert_str_eq(line, "0, 79, 0, 23.734177215189874, 46.875, 20.380434782608695,");
		}
		compute_row(sub, 1, &r, line, sizeof line);
		ck_assert_int_eq(r.layer, 1);
		ck_assert_int_eq(r.stalls, 0);
		ck_assert_msg(strstr(line, ", 0, 0.0, 0.0, 0.0,") && r.cycles > 0, "%s", line);
	}

	/* With memory: total - compute cycles are the stalls, as layers.csv has them; the mapping is the same. */
	const char *withmem[] = { RUN, "-o", "mem", NULL };
	ck_assert_int_eq(th_cli(dir, withmem, &out, &err), 0);
	free(out);
	free(err);
	snprintf(path, sizeof path, "%s/mem/layers.csv", dir);
	char *csv = th_slurp(path), *head = csv, *row = strchr(csv, '\n') + 1;
	int col_cycles = -1, col_compute = -1, col = 0;
	long long v[64];
	for (char *p = head; *p != '\n'; p += strcspn(p, ",\n") + (p[strcspn(p, ",\n")] == ','), col++) {
		col_cycles = !strncmp(p, "cycles,", 7) ? col : col_cycles;
		col_compute = !strncmp(p, "compute_cycles,", 15) ? col : col_compute;
	}
	ck_assert(col_cycles > 0 && col_compute > 0 && col_compute < 64);
	col = 0;
	for (char *p = row; col <= col_compute; p += strcspn(p, ",\n") + 1, col++)
		v[col] = atoll(p);
	snprintf(path, sizeof path, "%s/mem", dir);
	compute_row(path, 0, &r, line, sizeof line);
	ck_assert_int_eq(r.cycles, v[col_cycles]);
	ck_assert_int_eq(r.stalls, v[col_cycles] - v[col_compute]);
	ck_assert_int_gt(r.stalls, 0);
	ck_assert(r.mapping == 100.0 * 30 / 64);
	free(csv);

	/* Without scalesim_compat no COMPUTE_REPORT.csv, and a run into the same DIR takes the old one away. */
	const char *plain[] = { RUN, "--set", "array.scalesim_compat=false", "-o", "mem", NULL };
	ck_assert_int_eq(th_cli(dir, plain, &out, &err), 0);
	free(out);
	free(err);
	snprintf(path, sizeof path, "%s/mem/COMPUTE_REPORT.csv", dir);
	ck_assert_int_ne(lstat(path, &st), 0);
	th_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * SCALE-Sim's own check value: AlexNet conv1 (227 x 227 x 3, 96 filters of
 * 11 x 11, stride 4) on a 32 x 32 ws array. Sr = 11 x 11 x 3 = 363, Sc = 96,
 * T = 55 x 55 = 3025: 12 x 3 = 36 folds of 2 x 32 + 32 + 3025 - 2 = 3119,
 * less 1: 112,283 cycles. Mapped 363 x 96 of 36 x 1024 PEs: 94.53125%;
 * compute util 363 x 96 x 3025 / (36 x 1024 x (64 + 64 + 3025 - 3)).
 */
START_TEST(scalesim_alexnet_conv1)
{
	char *dir = th_tmpdir(), *out, *err, trace[PATH_MAX], line[256];
	struct compute_row r;
	ck_assert_ptr_nonnull(realpath("traces/alexnet.csv", trace));
	const char *argv[] = { "run", "-c", "lab_4x4", "-w", trace, "--set", "array.rows=32", "--set", "array.cols=32",
			       "--set", "array.scalesim_compat=true", "--dataflow", "ws", "--model", "analytic",
			       "--ideal-memory", "-o", "out", NULL };
	ck_assert_int_eq(th_cli(dir, argv, &out, &err), 0);
	free(out);
	free(err);
	char sub[PATH_MAX];
	snprintf(sub, sizeof sub, "%s/out", dir);
	compute_row(sub, 0, &r, line, sizeof line);
	ck_assert_int_eq(r.cycles, 112283);
	ck_assert_int_eq(r.stalls, 0);
	ck_assert(r.mapping == 94.53125);
	ck_assert(r.util == 100.0 * 105415200 / (112283.0 * 1024));
	near(r.compute, 100.0 * 105415200 / (36.0 * 1024 * 3150), line);
	th_rmdir(dir);
	free(dir);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *t = tcase_create("cli");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, help_lists_options, 0, (int)(sizeof helps / sizeof *helps));
	tcase_add_test(t, help_overview_and_errors);
	tcase_add_test(t, parser_refusals);
	tcase_add_test(t, other_commands_options_refused);
	tcase_add_test(t, memory_type_over_preset);
	tcase_add_test(t, outputs_make_parents);
	tcase_add_test(t, outputs_refused_before_run);
	tcase_add_test(t, presets_by_name);
	tcase_add_test(t, install_finds_presets);
	tcase_add_test(t, scalesim_compute_report);
	tcase_add_test(t, scalesim_alexnet_conv1);
	suite_add_tcase(s, t);
	return s;
}
