/*
 * report.c - the derived figures of a result, and the run's report directory (see report.h).
 */
#include "report.h"

#include <math.h>

#include "outdir.h"

void report_metrics(const struct arch *a, const struct result *r, bool ideal, struct metrics *m)
{
	double macs_per_cycle = arch_macs_per_cycle(a);
	double bytes = (double)(r->hbm_read_bytes + r->hbm_write_bytes + r->bus_shift_bytes);
	double seconds = (double)r->cycles / (a->clock_ghz * 1e9);
	double peak = 2 * arch_peak_macs_per_s(a), area[AR_N];

	m->ops = 2.0 * (double)r->macs;
	m->bus_bytes = bytes;
	m->utilization = r->cycles ? (double)r->macs / ((double)r->cycles * macs_per_cycle) : 0;
	m->intensity = bytes > 0 ? m->ops / bytes : 0;
	m->achieved_ops_per_s = seconds > 0 ? m->ops / seconds : 0;
	m->attainable_ops_per_s = bytes > 0 && !ideal ? fmin(peak, arch_hbm_bytes_per_s(a) * m->intensity) : peak;
	m->energy_pj = result_energy(a, r, m->part);
	m->pj_per_mac = r->macs ? m->energy_pj / (double)r->macs : 0;
	m->tops_per_w = m->energy_pj > 0 ? m->ops / m->energy_pj : 0;
	m->edp_js = m->energy_pj * 1e-12 * seconds;
	m->power_w = seconds > 0 ? m->energy_pj * 1e-12 / seconds : 0;
	double die = arch_area_mm2(a, area);
	m->tops_per_mm2 = die > 0 ? m->achieved_ops_per_s * 1e-12 / die : 0;
	for (int x = 0; x < ICI_NAXES; x++) {
		double cap = (double)ici_axis_dirs(x) * ici_axis_bytes_per_s(&a->pod, x) * seconds;
		m->link_utilization[x] = cap > 0 ? (double)r->link_bytes[x] / cap : 0;
	}
}

void report_area(FILE *out, const struct arch *a, const char *prefix)
{
	double part[AR_N], die = arch_area_mm2(a, part);
	char node[CFG_STR_MAX];
	cfg_format(config_schema(), cfg_find(config_schema(), "area.node"), a, node, sizeof node);
	fprintf(out, "%sarea %.4g mm2 at %s:", prefix, die, node);
	double peak = 2 * arch_peak_macs_per_s(a) * 1e-12, watts = result_peak_power_w(a);
	for (int k = 0; k < AR_N; k++)
		fprintf(out, " %s %.4g (%.1f%%)%s", area_part_names[k], part[k], die > 0 ? 100 * part[k] / die : 0,
			k + 1 < AR_N ? "," : "\n");
	fprintf(out, "%speak power %.4g W (every PE, SRAM port and the memory busy each cycle: a bound), idle %.4g W; peak %.4g TOPS/mm2, "
		"%.4g TOPS/W\n", prefix, watts, arch_idle_w(a), die > 0 ? peak / die : 0, watts > 0 ? peak / watts : 0);
}

void report_field_num(FILE *f, const struct result_field *fd, int i, const struct result *r, const struct metrics *m)
{
	if (fd->kind == RF_COUNT)
		fprintf(f, "%lld", (long long)result_field_count(fd, i, r));
	else
		fprintf(f, "%.17g", result_field_value(fd, i, r, m));
}

static void put_csv(FILE *f, const void *c)
{
	report_layers_csv(f, c);
}

static void put_json(FILE *f, const void *c)
{
	report_json(f, c);
}

static void put_scalesim(FILE *f, const void *c)
{
	report_scalesim(f, c);
}

/* The names of -o DIR's reports, in the order they are committed. */
static const char *const report_names[3] = { "layers.csv", "summary.json", "COMPUTE_REPORT.csv" };

int report_write(const char *dir, const struct report_ctx *c, struct err *e)
{
	const struct outdir_file files[] = {
		{ report_names[0], put_csv, c, false },
		{ report_names[1], put_json, c, false },
		{ report_names[2], c->cfg->arch.array.scalesim_compat ? put_scalesim : NULL, c, true },
	};
	return outdir_commit(dir, files, 3, e);
}

int report_check(const char *dir, struct err *e)
{
	return outdir_check(dir, report_names, 3, e);
}
