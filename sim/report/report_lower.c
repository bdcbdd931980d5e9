/*
 * report_lower.c - the ops of a lowered workload, as a table or CSV (see report.h).
 */
#include "report.h"

#include "plan.h"

void report_lower(FILE *out, const struct workload *w, const struct oplist *ops, const struct arch *a, bool csv)
{
	int64_t eb = array_elem_bytes(a->array.dtype);
	int64_t macs = 0, ngemm = 0, nvec = 0, velems = 0, bytes[3] = { 0 }, ncoll = 0, cbytes = 0;
	char name[OP_NAME_MAX], axes[80];

	if (csv)
		fprintf(out, "op,layer,kind,m,k,n,repeat,macs,a_role,a_bytes,b_role,b_bytes,c_bytes,vector_in_elements,"
			     "vector_out_elements,vector_lane_ops,collective_bytes,collective_axes,collective_chips\n");
	else
		fprintf(out, "%s (batch %lld), %zu layers -> %zu ops; bytes at %lld B per element\n\n"
			     "%-28s %-9s %9s %9s %9s %7s %15s %-4s %12s %-4s %12s %12s\n",
			w->name, (long long)w->batch, w->n, ops->n, (long long)eb, "op", "kind", "M", "K", "N", "repeat",
			"MACs", "A", "A bytes", "B", "B bytes", "C bytes");
	for (size_t i = 0; i < ops->n; i++) {
		const struct op *o = &ops->v[i];
		if (o->kind == OP_COLL) {
			/* A collective: its array's bytes (plan.h) over its axes, among their chips. */
			int64_t vb = plan_coll_bytes(a, o), n = ici_group_chips(&o->grp);
			ncoll++;
			cbytes += vb;
			ici_group_name(&a->pod, &o->grp, axes, sizeof axes);
			if (csv) {
				report_csv_str(out, op_name(o, name, sizeof name));
				fputc(',', out);
				report_csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",%s,,,,,0,,,,,%lld,%lld,,%lld,%s,%lld\n", coll_names[o->coll],
					(long long)o->in_elems, (long long)o->out_elems, (long long)vb, axes, (long long)n);
			} else {
				fprintf(out, "%-28.28s %-14s %4s %9s %9s %7s %15s %lld B over %s (%lld chips); a chip holds %lld "
					     "elements before, %lld after\n",
					op_name(o, name, sizeof name), coll_names[o->coll], "", "", "", "", "", (long long)vb, axes,
					(long long)n, (long long)o->in_elems, (long long)o->out_elems);
			}
		} else if (o->kind == OP_GEMM) {
			int64_t ab = o->a_elems * o->repeat * eb, bb = o->k * o->n * o->repeat * eb;
			int64_t cb = (o->c_elems ? o->c_elems : o->m * o->n) * o->repeat * eb;
			const char *ar = o->a_weight ? "wt" : "act", *br = o->b_weight ? "wt" : "act";
			macs += op_macs(o);
			ngemm++;
			bytes[0] += ab, bytes[1] += bb, bytes[2] += cb;
			if (csv) {
				report_csv_str(out, op_name(o, name, sizeof name));
				fputc(',', out);
				report_csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",gemm,%lld,%lld,%lld,%lld,%lld,%s,%lld,%s,%lld,%lld,,,,,,\n", (long long)o->m,
					(long long)o->k, (long long)o->n, (long long)o->repeat, (long long)op_macs(o),
					o->a_weight ? "weight" : "activation", (long long)ab,
					o->b_weight ? "weight" : "activation", (long long)bb, (long long)cb);
			} else {
				fprintf(out, "%-28.28s %-9s %9lld %9lld %9lld %7lld %15lld %-4s %12lld %-4s %12lld %12lld\n",
					op_name(o, name, sizeof name), "gemm", (long long)o->m, (long long)o->k, (long long)o->n,
					(long long)o->repeat, (long long)op_macs(o), ar, (long long)ab, br, (long long)bb,
					(long long)cb);
			}
		} else {
			nvec++;
			velems += o->out_elems;
			if (csv) {
				report_csv_str(out, op_name(o, name, sizeof name));
				fputc(',', out);
				report_csv_str(out, w->layers[o->layer].name);
				fprintf(out, ",%s,,,,,0,,,,,,%lld,%lld,%lld,,,\n", vector_kind_names[o->vec],
					(long long)o->in_elems, (long long)o->out_elems, (long long)o->lane_ops);
			} else {
				fprintf(out, "%-28.28s %-9s %9s %9s %9s %7s %15s in %lld elements, out %lld, %lld lane ops\n",
					op_name(o, name, sizeof name), vector_kind_names[o->vec], "", "", "", "", "", (long long)o->in_elems,
					(long long)o->out_elems, (long long)o->lane_ops);
			}
		}
	}
	if (!csv)
		fprintf(out, "\ntotal: %lld GEMM ops, %lld MACs (%.4g G); A %lld B, B %lld B, C %lld B; "
			     "%lld vector ops, %lld elements out\n",
			(long long)ngemm, (long long)macs, (double)macs / 1e9, (long long)bytes[0], (long long)bytes[1],
			(long long)bytes[2], (long long)nvec, (long long)velems);
	if (!csv && ncoll)
		fprintf(out, "%lld collectives, %lld B of arrays\n", (long long)ncoll, (long long)cbytes);
}
