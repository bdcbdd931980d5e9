/*
 * config.c - loading, overriding and printing accelerator configs (see config.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memory.h"
#include "preset.h"
#include "ydoc.h"

static const struct cfg_key top_keys[] = {
	{ "name", CFG_STR, offsetof(struct arch, name), "", "custom", 0, 0, NULL, "name of this accelerator" },
	{ "clock_ghz", CFG_DOUBLE, offsetof(struct arch, clock_ghz), "GHz", "1", 0.001, 100, NULL,
	  "array clock; every cycle count is in this clock" },
	CFG_END
};

static struct cfg_schema schema;

/* Keys there are no more, and what to use instead. */
static const char *const gone_keys[][2] = {
	{ "energy.leak_pe_pj", "leakage is the die's idle power: area.idle_mw_per_mm2 x area_mm2" },
	{ "energy.leak_sram_pj_per_kib", "leakage is the die's idle power: area.idle_mw_per_mm2 x area_mm2" },
	{ NULL, NULL }
};

const struct cfg_schema *config_schema(void)
{
	if (!schema.n) {
		int rc = cfg_schema_add(&schema, "", top_keys, 0);
		rc |= cfg_schema_add(&schema, "array.", array_keys, offsetof(struct arch, array));
		rc |= cfg_schema_add(&schema, "sram.", sram_keys, offsetof(struct arch, sram));
		rc |= cfg_schema_add(&schema, "hbm.", hbm_keys, offsetof(struct arch, hbm));
		for (int m = 0; mem_model_at(m); m++)
			if (mem_model_at(m)->keys)
				rc |= cfg_schema_add(&schema, "hbm.", mem_model_at(m)->keys, offsetof(struct arch, hbm));
		rc |= cfg_schema_add(&schema, "vector.", vector_keys, offsetof(struct arch, vector));
		rc |= cfg_schema_add(&schema, "energy.", energy_keys, offsetof(struct arch, energy));
		rc |= cfg_schema_add(&schema, "area.", area_keys, offsetof(struct arch, area));
		rc |= cfg_schema_add(&schema, "chip.", chip_keys, offsetof(struct arch, chip));
		rc |= cfg_schema_add(&schema, "pod.", ici_keys, offsetof(struct arch, pod));
		rc |= cfg_schema_add(&schema, "sim.", sim_keys, offsetof(struct arch, sim));
		rc |= cfg_schema_add(&schema, "train.", train_keys, offsetof(struct arch, train));
		rc |= cfg_schema_add(&schema, "mesh.", mesh_keys, offsetof(struct arch, mesh));
		SIM_ASSERT(rc == 0 && schema.n <= CONFIG_MAX_KEYS);
		schema.gone = gone_keys;
	}
	return &schema;
}

/* A key a file or an override gave (not a default, not brought by hbm.type). */
static bool given(const struct config *c, int i)
{
	return c->origin[i].line > 0;
}

/*
 * The source that gave key i, in the order sources apply: 0 the defaults (or
 * hbm.type), k the k-th file merged, then the overrides (--set, a request's
 * "set", a sweep's axes), one source however many there are.
 */
static int source(const struct config *c, int i)
{
	if (!given(c, i))
		return 0;
	for (int k = 0; k < c->nfiles; k++)
		if (c->origin[i].file == c->files[k])
			return k + 1;
	return CONFIG_MAX_FILES + 1;
}

/*
 * A choice key that brings values (hbm.type its memory's, area.node its
 * densities) brings them for every key of keys[] the source that sets the
 * choice does not set: keys given by that source or a later one stay, keys
 * given by an earlier one (a preset under a later overlay or --set) are
 * replaced and count as brought. Run after every change, so that the choice
 * in force brings its values.
 */
static void brings(struct config *c, const char *choice, const char *const keys[], const char *const row[])
{
	const struct cfg_schema *s = config_schema();
	int from = source(c, cfg_find(s, choice));
	for (int j = 0; keys[j]; j++) {
		int i = cfg_find(s, keys[j]);
		struct pos nowhere = { "defaults", 0, 0 };
		struct err e;
		SIM_ASSERT(i >= 0);
		if (given(c, i) && source(c, i) >= from)
			continue;
		/* A preset that does not parse is a bug in the table. */
		if (cfg_parse(s, i, &c->arch, row[j] ? row[j] : s->e[i].key->def, false, nowhere, NULL, &e) < 0)
			sim_assert_fail(e.msg, __FILE__, __LINE__);
		c->origin[i] = nowhere;
	}
}

void config_resolve(struct config *c)
{
	const struct array_params *ap = &c->arch.array;
	brings(c, "hbm.type", hbm_type_keys, hbm_type_defaults[c->arch.hbm.type]);
	brings(c, "area.node", area_node_keys, area_node_defaults[c->arch.area.node]);
	/* A packed rate feeds n elements a row (and a column) a cycle. */
	sram_fit_edge(&c->arch.sram, ap->rows, ap->cols, array_elem_bytes(ap->dtype) * array_pack(ap),
		      array_acc_bytes(ap->dtype));
}

void config_init(struct config *c)
{
	const struct cfg_schema *s = config_schema();
	memset(c, 0, sizeof *c);
	cfg_defaults(s, &c->arch);
	snprintf(c->file, sizeof c->file, "defaults");
	for (size_t i = 0; i < s->n; i++)
		c->origin[i] = (struct pos){ "defaults", 0, 0 };
	config_resolve(c);
}

/* ---- presets by name (preset.h) ---- */

void config_presets(char *buf, size_t size)
{
	buf[0] = '\0';
	preset_list("", "workloads", buf, size);
}

int config_find(const char *name, char *path, size_t size, struct err *e)
{
	return config_find_in(NULL, name, path, size, e);
}

int config_find_in(const char *base, const char *name, char *path, size_t size, struct err *e)
{
	char list[2048];
	int rc = preset_find(base, "", name, path, size);
	if (rc == -2)
		return err_at(e, (struct pos){ name, 0, 0 }, NULL, "expected a path of at most %zu bytes, found more",
			      size - 1);
	if (rc >= 0)
		return 0;
	config_presets(list, sizeof list);
	if (!*list)
		return err_at(e, (struct pos){ name, 0, 0 }, NULL,
			      "expected a config file or a preset, found neither (no preset directory next to tpusim)");
	char hint[200];
	return err_at(e, (struct pos){ name, 0, 0 }, NULL, "expected a config file or a preset (%s), found neither%s", list,
		      preset_hint(list, name, hint, sizeof hint));
}

static int merge_at(struct config *c, const char *path, const char *base, int depth, struct err *e);

/*
 * The file's own `base:` (a preset's name, or a config file's path relative
 * to the file's folder), merged before the file: a pod slice's file names
 * its chip. Takes the key out of the map m, into rest (its arrays in keys
 * and vals, of m->n entries). Returns 0, or -1 with e set.
 */
static int merge_base(struct config *c, const char *file, int depth, const struct ynode *m, struct ynode *rest,
		      struct ynode **keys, struct ynode **vals, struct err *e)
{
	*rest = *m;
	rest->keys = keys;
	rest->vals = vals;
	rest->n = 0;
	const struct ynode *b = NULL;
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->keys[i]->str, "base") && !b) {
			b = m->vals[i];
			continue;
		}
		keys[rest->n] = m->keys[i];
		vals[rest->n++] = m->vals[i];
	}
	if (!b)
		return 0;
	if (b->kind != Y_SCALAR || !*b->str) {
		char buf[80];
		return err_at(e, b->pos, "base", "expected a preset's name or a config file's path, found %s",
			      ynode_describe(b, buf, sizeof buf));
	}
	if (depth + 1 >= CONFIG_MAX_FILES)
		return err_at(e, b->pos, "base", "expected at most %d config files, found more (does a base name itself?)",
			      CONFIG_MAX_FILES);
	char dir[LIMIT_PATH], found[LIMIT_PATH];
	snprintf(dir, sizeof dir, "%s", file);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	/* A base that is neither a preset nor a readable file is the base key's error. */
	struct stat st;
	if (config_find_in(slash ? dir : NULL, b->str, found, sizeof found, e) < 0 || stat(found, &st) != 0 ||
	    !S_ISREG(st.st_mode)) {
		char q[300];
		return err_at(e, b->pos, "base", "expected a preset's name or a readable config file, found \"%s\"",
			      err_quote(q, sizeof q, b->str, 200));
	}
	return merge_at(c, b->str, slash ? dir : NULL, depth + 1, e);
}

int config_merge(struct config *c, const char *path, struct err *e)
{
	int first = c->nfiles == 0, rc = merge_at(c, path, NULL, 0, e);
	/* The first file is the one named, not its base. */
	if (first && c->nfiles > 0)
		snprintf(c->file, sizeof c->file, "%s", c->files[c->nfiles - 1]);
	return rc;
}

/* config_merge of path, a relative one looked for under base (NULL: here), depth bases down. */
static int merge_at(struct config *c, const char *path, const char *base, int depth, struct err *e)
{
	const struct cfg_schema *s = config_schema();
	struct ydoc *d;
	char *file, found[LIMIT_PATH];
	int rc;

	if (c->nfiles == CONFIG_MAX_FILES)
		return err_at(e, (struct pos){ path, 0, 0 }, NULL, "expected at most %d config files, found more",
			      CONFIG_MAX_FILES);
	if (config_find_in(base, path, found, sizeof found, e) < 0)
		return -1;
	path = found;
	d = ydoc_load(path, e);
	if (!d)
		return -1;
	if (!d->root) {
		ydoc_free(d);
		return err_at(e, (struct pos){ path, 0, 0 }, NULL, "expected a mapping of config keys, found %s",
			      ydoc_nothing(path));
	}
	struct ynode rest, **kv = d->root->kind == Y_MAP ? calloc(2 * d->root->n + 1, sizeof *kv) : NULL;
	if (d->root->kind == Y_MAP) {
		if (!kv) {
			ydoc_free(d);
			return err_nomem(e, NULL);
		}
		/* The base first: its keys are the ones this file overlays. */
		if (merge_base(c, d->file, depth, d->root, &rest, kv, kv + d->root->n, e) < 0) {
			free(kv);
			ydoc_free(d);
			return -1;
		}
	}
	if (c->nfiles == CONFIG_MAX_FILES) {
		free(kv);
		ydoc_free(d);
		return err_at(e, (struct pos){ path, 0, 0 }, NULL, "expected at most %d config files, found more",
			      CONFIG_MAX_FILES);
	}
	file = c->files[c->nfiles];
	snprintf(file, sizeof c->files[0], "%s", path);
	if (c->nfiles++ == 0)
		snprintf(c->file, sizeof c->file, "%s", path);
	rc = cfg_load_map(s, &c->arch, kv ? &rest : d->root, NULL, NULL, c->origin, e);
	free(kv);
	/* Positions must outlive the document: point them at our own copy of the path. */
	for (size_t i = 0; i < s->n; i++)
		if (c->origin[i].file == d->file)
			c->origin[i].file = file;
	ydoc_free(d);
	config_resolve(c);
	return rc;
}

int config_load(struct config *c, const char *path, struct err *e)
{
	config_init(c);
	return config_merge(c, path, e);
}

/* The error for a key that is not in the schema: a section, a near miss, or nothing like it. */
static int unknown_key(const struct cfg_schema *s, const char *key, struct pos at, struct err *e)
{
	char sec[CFG_NAME_MAX * 2 + 1];
	snprintf(sec, sizeof sec, "%s.", key);
	for (size_t j = 0; j < s->n; j++)
		if (!strncmp(s->e[j].name, sec, strlen(sec)))
			return err_at(e, at, key, "expected a key, found a section (did you mean %s?)", s->e[j].name);
	if (cfg_gone(s, key))
		return err_at(e, at, key, "expected a known key, found one there is no more (%s)", cfg_gone(s, key));
	const char *hint = cfg_suggest(s, key);
	if (hint)
		return err_at(e, at, key, "expected a known key, found an unknown key (did you mean %s?)", hint);
	return err_at(e, at, key, "expected a known key, found an unknown key");
}

int config_set_key(struct config *c, const char *key, const char *value, bool quoted, struct pos at, struct err *e)
{
	const struct cfg_schema *s = config_schema();
	char shown[CFG_NAME_MAX * 2];
	int i = cfg_find(s, key), slot = c->nsets;

	err_quote(shown, sizeof shown, key, CFG_NAME_MAX);
	if (i < 0)
		return unknown_key(s, shown, at, e);
	/* A key given again replaces its earlier override, in its place. */
	for (int j = 0; j < c->nsets; j++)
		if (!strcmp(c->sets[j].key, s->e[i].name))
			slot = j;
	if (slot == CONFIG_MAX_SETS)
		return err_at(e, at, shown, "expected at most %d overrides, found more", CONFIG_MAX_SETS);
	if (cfg_parse(s, i, &c->arch, value, quoted, at, NULL, e) < 0)
		return -1;
	c->origin[i] = at;
	snprintf(c->sets[slot].key, sizeof c->sets[0].key, "%s", s->e[i].name);
	cfg_format(s, i, &c->arch, c->sets[slot].value, sizeof c->sets[0].value);
	if (slot == c->nsets)
		c->nsets++;
	config_resolve(c);
	return 0;
}

int config_assignment(const char *assignment, const char *next, struct err *e)
{
	const char *eq = strchr(assignment, '=');
	char q[300], v[300];
	if (eq && eq != assignment)
		return 0;
	err_quote(q, sizeof q, assignment, 60);
	if (!eq && next)
		return err_input(e, "--set: expected key.path=value, found \"%s\" (did you mean --set %s=%s?)", q, q,
				 err_quote(v, sizeof v, next, 60));
	return err_input(e, "--set: expected key.path=value, found \"%s\"", q);
}

int config_set(struct config *c, const char *assignment, struct err *e)
{
	const char *eq = strchr(assignment, '=');
	struct pos at = { "--set", 1, 1 };
	char raw[CFG_NAME_MAX * 2];

	if (config_assignment(assignment, NULL, e) < 0)
		return -1;
	snprintf(raw, sizeof raw, "%.*s", (int)(eq - assignment), assignment);
	if (cfg_find(config_schema(), raw) < 0) {
		char key[CFG_NAME_MAX * 2];
		return unknown_key(config_schema(), err_quote(key, sizeof key, raw, CFG_NAME_MAX), at, e);
	}
	at.col = (long)(eq - assignment) + 2;
	return config_set_key(c, raw, eq + 1, false, at, e);
}

int config_memory_unused(const struct config *c, bool energy, const char *why, struct err *e)
{
	const struct cfg_schema *s = config_schema();
	for (size_t i = 0; i < s->n; i++) {
		int from = source(c, (int)i);
		char v[CFG_STR_MAX + 64];
		if (strncmp(s->e[i].name, "hbm.", 4) || from <= 1 || (energy && from <= CONFIG_MAX_FILES))
			continue;
		/*
		 * The bandwidth sets the PHYs' area (area.h), so the area, leakage and
		 * peak power change; the type brings its PHY area, and its pJ per bit
		 * too when nothing later gives it.
		 */
		if (energy && (!strcmp(s->e[i].name, "hbm.gbps") || !strcmp(s->e[i].name, "hbm.type")))
			continue;
		/* What the memory holds is checked however fast it is. */
		if (energy && !strcmp(s->e[i].name, "hbm.capacity_gib"))
			continue;
		cfg_format(s, (int)i, &c->arch, v, sizeof v);
		return err_at(e, c->origin[i], s->e[i].name, "expected no hbm key (%s, so it would change nothing), found it "
			      "set to %s", why, v);
	}
	return 0;
}

int config_train_unused(const struct config *c, const char *why, struct err *e)
{
	const struct cfg_schema *s = config_schema();
	for (size_t i = 0; i < s->n; i++) {
		char v[CFG_STR_MAX + 64];
		bool on = !strcmp(s->e[i].name, "train.enabled");
		if (strncmp(s->e[i].name, "train.", 6) || source(c, (int)i) <= CONFIG_MAX_FILES)
			continue;
		if (on ? !c->arch.train.enabled || !why : c->arch.train.enabled)
			continue;
		cfg_format(s, (int)i, &c->arch, v, sizeof v);
		if (on)
			return err_at(e, c->origin[i], s->e[i].name, "expected false (%s), found true", why);
		return err_at(e, c->origin[i], s->e[i].name, "expected it with train.enabled: true or --train (a training "
			      "step; inference it would not change), found it set to %s", v);
	}
	return 0;
}

struct pos config_origin(const struct config *c, const char *key)
{
	int i = cfg_find(config_schema(), key);
	SIM_ASSERT(i >= 0);
	if (c->origin[i].line == 0)
		return (struct pos){ c->file, 0, 0 };
	return c->origin[i];
}

int64_t arch_arrays(const struct arch *a)
{
	return a->chip.cores * a->chip.arrays_per_core;
}

int64_t arch_pes(const struct arch *a)
{
	return array_pes(&a->array) * arch_arrays(a);
}

int config_check_rate(const struct config *c, const char *one_mac, struct err *e)
{
	const struct array_params *ap = &c->arch.array;
	char key[CFG_NAME_MAX];
	const char *rate = array_rate_names[ap->rate[ap->dtype]];
	snprintf(key, sizeof key, "array.rate_%s", array_dtype_names[ap->dtype]);
	if (array_pack(ap) == 0) {
		struct pos at = config_origin(c, "array.dtype");
		char from[LIMIT_PATH + 40] = "";
		if (at.line)
			snprintf(from, sizeof from, " (array.dtype at %s:%ld:%ld)", at.file,
				 at.line, at.col);
		return err_at(e, config_origin(c, key), key, "expected a rate for array.dtype %s, found none (the array "
			      "does not run %s)%s", array_dtype_names[ap->dtype], array_dtype_names[ap->dtype], from);
	}
	if (ap->scalesim_compat)
		one_mac = "array.scalesim_compat";
	if (!one_mac || (array_pack(ap) == 1 && array_passes(ap) == 1))
		return 0;
	return err_at(e, config_origin(c, key), key, "expected 1 for %s (its PEs do one MAC a cycle), found %s", one_mac,
		      rate);
}

double arch_mac_pj(const struct arch *a, double *move_pj)
{
	const struct array_params *ap = &a->array;
	int n = array_passes(ap), pe = a->area.pe_dtype ? a->area.pe_dtype - 1 : ap->dtype;
	*move_pj = n * a->energy.pe_move_pj;
	return n == 1 ? energy_mac_pj(&a->energy, ap->dtype) : n * energy_mac_pj(&a->energy, pe);
}

double arch_macs_per_cycle(const struct arch *a)
{
	return (double)arch_pes(a) * array_rate(&a->array);
}

int64_t arch_op_fixed_cycles(const struct arch *a)
{
	if (a->array.scalesim_compat)
		return 0;                       /* SCALE-Sim's compute model has no per-op time */
	double c = ceil(a->chip.op_fixed_ns * a->clock_ghz - 1e-9);
	return c <= 0 ? 0 : c >= 0x1p62 ? INT64_MAX / 4 : (int64_t)c;
}

double arch_peak_macs_per_s(const struct arch *a)
{
	return arch_macs_per_cycle(a) * a->clock_ghz * 1e9;
}

double arch_hbm_bytes_per_s(const struct arch *a)
{
	return mem_model_bytes_per_cycle(&a->hbm, a->clock_ghz, false) * a->clock_ghz * 1e9;
}

double arch_area_mm2(const struct arch *a, double part[])
{
	struct area_chip c = {
		.dtype = a->area.pe_dtype ? a->area.pe_dtype - 1 : a->array.dtype,
		/* a PE built for the run's dtype holds a multiplier per packed element; one built for a wider
		 * type (area.pe_dtype) packs the narrower in its own */
		.pack = a->area.pe_dtype || array_pack(&a->array) < 1 ? 1 : array_pack(&a->array),
		.weight_double_buffer = a->array.weight_double_buffer,
		.pes = arch_pes(a),
		.cores = a->chip.cores,
		.activation_kib = a->chip.activation_kib,       /* 0, auto: the inputs buffer holds them */
		.vector_lanes = a->vector.lanes,
		.memory_gbps = a->hbm.gbps,
	};
	for (int b = 0; b < SRAM_NBUF; b++)
		c.sram_kib[b] = a->sram.buf[b].kib;
	return area_mm2(&a->area, &c, part);
}

double arch_idle_w(const struct arch *a)
{
	double part[AR_N];
	return arch_area_mm2(a, part) * a->area.idle_mw_per_mm2 * 1e-3;
}

int64_t arch_memory_cycles(const struct arch *a, int64_t bytes)
{
	double bpc = mem_model_bytes_per_cycle(&a->hbm, a->clock_ghz, false);
	if (isinf(bpc) || bytes <= 0)
		return 0;
	double c = ceil((double)bytes / bpc);
	return c >= 0x1p62 ? INT64_MAX : (int64_t)c;
}

int config_warnings(const struct config *c, bool ports, bool positioned, char lines[][CONFIG_WARNING_MAX], int max)
{
	const struct arch *a = &c->arch;
	int n = 0;
	for (int b = 0; ports && b < SRAM_NBUF && n < max; b++) {
		int64_t have = a->sram.buf[b].bytes_per_cycle, need = a->sram.edge_bytes[b];
		/*
		 * The edge the port feeds: outputs the columns; inputs and weights
		 * the wider side (sram.h), inputs the rows and weights the columns
		 * when the array is square.
		 */
		bool by_rows = b == SRAM_INPUTS ? a->array.rows >= a->array.cols :
			       b == SRAM_WEIGHTS && a->array.rows > a->array.cols;
		char key[CFG_NAME_MAX];
		struct err e;
		if (!have || have >= need)
			continue;
		snprintf(key, sizeof key, "sram.%s.bytes_per_cycle", sram_buf_names[b]);
		err_at(&e, config_origin(c, key), key,
		       "%lld B/cycle cannot feed the array's %lld-%s edge (needs %lld); streams will stretch",
		       (long long)have, (long long)(by_rows ? a->array.rows : a->array.cols), by_rows ? "row" : "column",
		       (long long)need);
		/* Without the position, the line starts at the key. */
		snprintf(lines[n++], CONFIG_WARNING_MAX, "%s", positioned ? e.msg : strstr(e.msg, key));
	}
	return n;
}

void config_dump(const struct config *c, FILE *out)
{
	fprintf(out, "# tpusim config, every key resolved (from");
	for (int i = 0; i < c->nfiles; i++)
		fprintf(out, "%s %s", i ? "," : "", c->files[i]);
	fprintf(out, "%s)\n", c->nfiles ? "" : " the defaults");
	cfg_dump(config_schema(), &c->arch, out);
}
