/*
 * helpers.c - temporary files, CLI runs and small loaders for the tests.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analytic.h"
#include "api.h"
#include "npy.h"
#include "run.h"
#include "plan.h"
#include "schedule.h"
#include "tests.h"
#include "train.h"
#include "ydoc.h"

char *th_tmpdir(void)
{
	char tmpl[] = "/tmp/tpusim-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

void th_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			th_rmdir(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

char *th_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return strdup(path);
}

void th_lower(const char *yaml, struct workload *w, struct oplist *ops)
{
	char *dir = th_tmpdir(), *path = th_write(dir, "w.yaml", yaml);
	struct err e = { 0 };
	memset(ops, 0, sizeof *ops);
	if (workload_load(w, path, 0, &e) < 0 || lower_workload(w, ops, &e) < 0)
		ck_abort_msg("workload did not load: %s", e.msg);
	free(path);
	th_rmdir(dir);
	free(dir);
}

void th_lower_step(const struct config *c, const char *yaml, struct workload *w, struct oplist *ops)
{
	char *dir = th_tmpdir(), *path = th_write(dir, "w.yaml", yaml);
	struct err e = { 0 };
	memset(ops, 0, sizeof *ops);
	if (workload_load(w, path, 0, &e) < 0 || lower_step(c, w, ops, &e) < 0)
		ck_abort_msg("workload did not load: %s", e.msg);
	free(path);
	th_rmdir(dir);
	free(dir);
}

void th_config(struct config *c, const char *preset, const char *const *sets)
{
	char path[PATH_MAX];
	struct err e = { 0 };
	snprintf(path, sizeof path, "configs/%s.yaml", preset);
	if (config_load(c, path, &e) < 0)
		ck_abort_msg("config did not load: %s", e.msg);
	for (; sets && *sets; sets++)
		if (config_set(c, *sets, &e) < 0)
			ck_abort_msg("--set %s: %s", *sets, e.msg);
}

const char *th_tpusim(void)
{
	static char path[PATH_MAX];
	if (!path[0]) {
		const char *t = getenv("TPUSIM");
		ck_assert_msg(t && realpath(t, path), "TPUSIM must name the tpusim binary (make test sets it)");
	}
	return path;
}

static char *slurp(int fd)
{
	size_t n = 0, cap = 4096;
	char *s = malloc(cap);
	ssize_t r;
	ck_assert_ptr_nonnull(s);
	while ((r = read(fd, s + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 2) {
			cap *= 2;
			s = realloc(s, cap);
			ck_assert_ptr_nonnull(s);
		}
	}
	s[n] = '\0';
	return s;
}

int th_cli(const char *dir, const char *const *argv, char **out, char **err)
{
	return th_run(th_tpusim(), dir, argv, out, err);
}

int th_sweep(const char *dir, char **out, char **err, ...)
{
	const char *argv[16] = { "sweep" };
	int n = 1;
	va_list ap;
	va_start(ap, err);
	for (const char *a; n < 15 && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	return th_cli(dir, argv, out, err);
}

int th_run(const char *bin, const char *dir, const char *const *argv, char **out, char **err)
{
	char of[PATH_MAX], ef[PATH_MAX];
	int status, ofd, efd;
	pid_t pid;

	snprintf(of, sizeof of, "/tmp/tpusim-cli-out-%d", (int)getpid());
	snprintf(ef, sizeof ef, "/tmp/tpusim-cli-err-%d", (int)getpid());
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *args[64];
		int n = 0;
		int o = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || chdir(dir) != 0)
			_exit(127);
		dup2(o, 1);
		dup2(e, 2);
		args[n++] = bin;
		for (; *argv && n < 63; argv++)
			args[n++] = *argv;
		args[n] = NULL;
		execvp(bin, (char *const *)args);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ofd = open(of, O_RDONLY);
	efd = open(ef, O_RDONLY);
	ck_assert(ofd >= 0 && efd >= 0);
	*out = slurp(ofd);
	*err = slurp(efd);
	close(ofd);
	close(efd);
	unlink(of);
	unlink(ef);
	ck_assert_msg(WIFEXITED(status), "%s did not exit normally (signal %d)", bin, WTERMSIG(status));
	return WEXITSTATUS(status);
}

const struct op *th_op(const struct oplist *ops, const char *name)
{
	char buf[OP_NAME_MAX];
	for (size_t i = 0; i < ops->n; i++)
		if (!strcmp(op_name(&ops->v[i], buf, sizeof buf), name))
			return &ops->v[i];
	ck_abort_msg("no op named %s", name);
	return NULL;
}

struct op th_gemm(int64_t m, int64_t k, int64_t n, int64_t rep)
{
	struct op o;
	memset(&o, 0, sizeof o);
	o.layer_name = "g";
	o.block = -1;
	o.kind = OP_GEMM;
	o.m = m, o.k = k, o.n = n, o.repeat = rep;
	o.b_weight = true;
	o.a_elems = m * k;
	return o;
}

int64_t th_rnd(uint64_t *state, int64_t lo, int64_t hi)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return lo + (int64_t)(x % (uint64_t)(hi - lo + 1));
}

char *th_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;
	ck_assert_msg(f != NULL, "%s was not written", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

int th_analytic(const struct config *c, const struct op *o, int df, bool ideal, struct result *r, struct err *e)
{
	struct sched s;
	if (o->kind == OP_GEMM && plan_gemm(&s, o, c, &c->arch, df, ideal, e) < 0)
		return -1;
	return analytic_op(c, o, o->kind == OP_GEMM ? &s : NULL, ideal, r, e);
}

int th_engine(engine *en, const struct config *c, const struct op *o, int df, bool ideal, struct result *r,
	      struct err *e)
{
	struct sched s;
	const struct sched *sp = o->kind == OP_GEMM ? &s : NULL;
	if (sp && plan_gemm(&s, o, c, &c->arch, df, ideal, e) < 0)
		return -1;
	int64_t compute;
	if (analytic_check(c, o, sp, ideal, &compute, e) < 0 || engine_op(en, o, sp, r, e) < 0)
		return -1;
	r->compute_cycles = compute;
	return 0;
}

int64_t th_cat_sum(const struct result *r)
{
	int64_t s = 0;
	for (int i = 0; i < CAT_N; i++) {
		ck_assert_int_ge(r->cat[i], 0);
		s += r->cat[i];
	}
	return s;
}

void th_run_past_int64(const struct run_opts *o, struct err *e)
{
	static const char *const bursty[] = { "clock_ghz=100", "hbm.gbps=0.001", "hbm.channels=1024",
					      "hbm.burst_bytes=1048576", "hbm.latency_ns=0",
					      "hbm.interleave_bytes=1073741824", "vector.lanes=1", NULL };
	struct config c;
	struct workload w;
	struct oplist ops;
	struct run r;
	th_config(&c, "lab_4x4", bursty);
	th_lower("name: v\nbatch: 1\nlayers:\n  - {name: big, type: add, elements: 200000000}\n", &w, &ops);
	ck_assert_int_eq(run_workload(&c, &w, &ops, o, &r, e), -1);
	ck_assert_int_eq(e->kind, ERR_SIM);
	oplist_release(&ops);
	workload_release(&w);
}

char *th_listing(const char *dir, bool hidden, char sep)
{
	char *names[256], *all;
	int n = 0;
	size_t len = 1;
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "%s is missing", dir);
	for (struct dirent *de; (de = readdir(d)) && n < 256;)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && (hidden || de->d_name[0] != '.')) {
			names[n++] = strdup(de->d_name);
			len += strlen(de->d_name) + 1;
		}
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	all = calloc(1, len);
	for (int i = 0; i < n; i++) {
		size_t k = strlen(all);
		strcpy(all + k, names[i]);
		all[k + strlen(names[i])] = sep;
		free(names[i]);
	}
	return all;
}

/* ---- JSON through the project's reader, CSV by RFC 4180 ---- */

struct ydoc *th_json(const char *name, const char *text)
{
	struct err e = { 0 };
	struct ydoc *d = ydoc_parse_json(name, text, &e);
	ck_assert_msg(d != NULL && d->root != NULL, "%s: not JSON: %s", name, d ? "an empty document" : e.msg);
	return d;
}

struct ydoc *th_json_file(const char *path)
{
	char *text = th_slurp(path);
	struct ydoc *d = th_json(path, text);
	free(text);
	return d;
}

const struct ynode *th_json_at(const struct ynode *n, const char *path)
{
	char key[256];
	const char *p = path;
	while (n && *p) {
		if (*p == '[') {
			char *end;
			long long i = strtoll(p + 1, &end, 10);
			ck_assert_msg(end != p + 1 && *end == ']', "%s: expected an index in [ ]", path);
			if (n->kind != Y_SEQ || i < 0 || (size_t)i >= n->n)
				return NULL;
			n = n->vals[i];
			p = end + 1;
		} else {
			size_t len = strcspn(p, ".[");
			ck_assert_msg(len > 0 && len < sizeof key, "%s: expected a key at %s", path, p);
			memcpy(key, p, len);
			key[len] = '\0';
			n = ynode_get(n, key);
			p += len;
		}
		if (*p == '.')
			p++;
	}
	return n;
}

/* The scalar at path, or fails the test. */
static const struct ynode *json_scalar(const struct ynode *n, const char *path)
{
	const struct ynode *v = th_json_at(n, path);
	ck_assert_msg(v != NULL, "%s: not in the JSON", path);
	ck_assert_msg(v->kind == Y_SCALAR, "%s: expected a scalar, found a %s", path, v->kind == Y_MAP ? "map" : "list");
	return v;
}

const char *th_json_str(const struct ynode *n, const char *path)
{
	const struct ynode *v = json_scalar(n, path);
	ck_assert_msg(v->quoted, "%s: expected a string, found %s", path, v->str);
	return v->str;
}

int64_t th_json_int(const struct ynode *n, const char *path)
{
	const struct ynode *v = json_scalar(n, path);
	char *end;
	errno = 0;
	long long x = strtoll(v->str, &end, 10);
	ck_assert_msg(!v->quoted && *v->str && !*end && !errno, "%s: expected an integer, found %s", path, v->str);
	return x;
}

double th_json_num(const struct ynode *n, const char *path)
{
	const struct ynode *v = json_scalar(n, path);
	char *end;
	double x = strtod(v->str, &end);
	ck_assert_msg(!v->quoted && *v->str && !*end, "%s: expected a number, found %s", path, v->str);
	return x;
}

struct th_csv *th_csv(const char *name, const char *text)
{
	struct th_csv *c = calloc(1, sizeof *c);
	size_t len = strlen(text), ncell = 0, cap = 64, col = 0;
	char *w;
	const char *p = text;
	ck_assert_ptr_nonnull(c);
	c->text = w = malloc(len + 1);
	c->cell = malloc(cap * sizeof *c->cell);
	ck_assert(c->text && c->cell);
	long line = 1;
	while (*p) {
		/* One field, unquoted into w. */
		if (ncell == cap) {
			c->cell = realloc(c->cell, (cap *= 2) * sizeof *c->cell);
			ck_assert_ptr_nonnull(c->cell);
		}
		c->cell[ncell++] = w;
		if (*p == '"') {
			for (p++;; p++) {
				ck_assert_msg(*p, "%s:%ld: a quoted field that does not end", name, line);
				if (*p == '"' && p[1] == '"')
					*w++ = *p++;
				else if (*p == '"')
					break;
				else {
					line += *p == '\n';
					*w++ = *p;
				}
			}
			p++;
			ck_assert_msg(*p == ',' || *p == '\n' || *p == '\r' || !*p, "%s:%ld: text after a quoted field",
				      name, line);
		} else {
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				*w++ = *p++;
		}
		*w++ = '\0';
		col++;
		if (*p == ',') {
			p++;
			continue;
		}
		/* The end of a row. */
		if (!c->cols)
			c->cols = col;
		ck_assert_msg(col == c->cols, "%s:%ld: expected %zu fields as in the header, found %zu", name, line, c->cols,
			      col);
		col = 0;
		if (*p == '\r')
			p++;
		if (*p == '\n')
			p++, line++;
	}
	ck_assert_msg(c->cols > 0, "%s: no header", name);
	c->rows = ncell / c->cols - 1;
	return c;
}

size_t th_csv_col(const struct th_csv *c, const char *name)
{
	for (size_t i = 0; i < c->cols; i++)
		if (!strcmp(c->cell[i], name))
			return i;
	ck_abort_msg("no column %s", name);
	return 0;
}

const char *th_csv_get(const struct th_csv *c, size_t row, const char *name)
{
	ck_assert_msg(row < c->rows, "row %zu of %zu", row, c->rows);
	return c->cell[(row + 1) * c->cols + th_csv_col(c, name)];
}

int64_t th_csv_int(const struct th_csv *c, size_t row, const char *name)
{
	const char *s = th_csv_get(c, row, name);
	char *end;
	long long x = strtoll(s, &end, 10);
	ck_assert_msg(*s && !*end, "row %zu: %s: expected an integer, found \"%s\"", row, name, s);
	return x;
}

double th_csv_num(const struct th_csv *c, size_t row, const char *name)
{
	const char *s = th_csv_get(c, row, name);
	char *end;
	double x = strtod(s, &end);
	ck_assert_msg(*s && !*end, "row %zu: %s: expected a number, found \"%s\"", row, name, s);
	return x;
}

void th_csv_free(struct th_csv *c)
{
	if (!c)
		return;
	free(c->cell);
	free(c->text);
	free(c);
}

bool th_pod_only(const char *path)
{
	struct workload w;
	struct oplist ops = { 0 };
	struct err e = { 0 };
	ck_assert_msg(workload_load(&w, path, 0, &e) == 0, "%s", e.msg);
	int rc = lower_workload(&w, &ops, &e);
	oplist_release(&ops);
	workload_release(&w);
	ck_assert_msg(rc == 0 || strstr(e.msg, "expected a workload whose total work fits in 58 bits"), "%s", e.msg);
	return rc != 0;
}

int64_t th_sim_folds(const struct sim *s, const char *what)
{
	struct err e = { 0 };
	int64_t folds, cycles;
	ck_assert_msg(run_estimate(&s->cfg, &s->ops, &s->opts, &folds, &cycles, &e) == 0, "%s: %s", what, e.msg);
	return folds;
}

double *th_npy(const char *path, int64_t *rows, int64_t *cols, struct err *e)
{
	struct npy_head h;
	double *v;
	if (npy_head(path, (struct pos){ path, 0, 0 }, NULL, &h, e) < 0)
		return NULL;
	ck_assert_ptr_nonnull(v = malloc((size_t)(h.rows * h.cols) * sizeof *v));
	if (npy_read(path, (struct pos){ path, 0, 0 }, NULL, &h, v, e) < 0) {
		free(v);
		return NULL;
	}
	*rows = h.rows;
	*cols = h.cols;
	return v;
}
