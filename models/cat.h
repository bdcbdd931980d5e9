/*
 * cat.h - the categories every cycle of an op falls in.
 *
 * Every cycle of an op's time is in exactly one category, so the categories
 * sum to its cycles:
 *   compute      the array streams operands (one row of T per cycle)
 *   weights      waiting for weights (operand B) to arrive, or for the weight
 *                buffer's port to feed the array
 *   inputs       the same for inputs (operand A) and the input buffer
 *   outputs      waiting for an accumulator tile to be free, and the stores
 *                still draining to HBM after the array is done
 *   vector       the vector unit computing
 *   fill_drain   the array's own overhead: the first weight shift, shifts
 *                longer than the stream before them, os drains, and the skew
 *                of filling and draining the array
 *
 * The models charge cycles to them (models/array: the array's own time);
 * sim/stats.h names them in reports.
 */
#ifndef TPUSIM_CAT_H
#define TPUSIM_CAT_H

enum cat { CAT_COMPUTE, CAT_WEIGHTS, CAT_INPUTS, CAT_OUTPUTS, CAT_VECTOR, CAT_FILL_DRAIN, CAT_N };

#endif
