/*
 * plot.h - charts drawn by gnuplot (Debian package gnuplot-nox).
 *
 * The only module that runs gnuplot. Each chart is one gnuplot script with
 * its data inline, written to a temporary file and run; the picture goes to a
 * temporary name beside the target and is renamed into place, so a failed
 * plot leaves nothing behind. The terminal follows the extension: .png
 * (pngcairo) or .svg.
 */
#ifndef TPUSIM_PLOT_H
#define TPUSIM_PLOT_H

#include "compare.h"
#include "config.h"
#include "err.h"
#include "run.h"
#include "workload.h"

/*
 * Checks, before anything is simulated, that a picture can be put at path:
 * its extension names a terminal and a file can be made beside it (and is
 * removed again). opt names the option in the message ("-o", "--plot").
 */
int plot_check(const char *path, const char *opt, struct err *e);

/*
 * The roofline of the accelerator (the slanted bandwidth line, the flat compute
 * roof, the ridge point) with every layer that does MACs as a point, and the
 * two canonical points: an elementwise vector add and an 8192^3 matrix multiply.
 */
int plot_roofline(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		  const struct run_opts *o, struct err *e);

/* Each layer's cycles as a bar stacked by category (stats.h). */
int plot_cycles(const char *path, const struct config *cfg, const struct workload *w, const struct run *r,
		struct err *e);

/*
 * The whole run under each dataflow of c, two panels: its cycles as a ratio
 * to the base dataflow's (compare.h; ws unless left out), a bar per dataflow
 * stacked by category (cat.h) on a linear axis with the ratio printed on the
 * bar; and its energy likewise, stacked by component (energy.h).
 */
int plot_compare(const char *path, const struct config *cfg, const struct workload *w, const struct compare *c,
		 struct err *e);

#endif
