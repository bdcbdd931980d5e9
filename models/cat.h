/*
 * cat.h - the categories every cycle of an op falls in.
 *
 * Every cycle of an op's time is in exactly one category, so the categories
 * sum to its cycles. In the order of the TPU v1 paper's Table 3 (Jouppi et
 * al., ISCA 2017): array active, weight stall, weight shift, non-matrix.
 *   compute       the array streams operands (one row of T per cycle)
 *   weights       waiting for weights (operand B) to arrive, or for the weight
 *                 buffer's port to feed the array
 *   weight_shift  ws and is: the array shifting its stationary tile (ws
 *                 weights, is inputs) into the PEs while nothing streams: the
 *                 first shift of a chain, the part of a shift longer than the
 *                 stream before it, and without a shadow register
 *                 (array.weight_double_buffer false) every shift; SCALE-Sim's
 *                 R-cycle preload. os has no stationary tile: never charged
 *   inputs        the same as weights for inputs (operand A) and the input
 *                 buffer
 *   outputs       waiting for an accumulator tile to be free, and the stores
 *                 still draining to HBM after the array is done
 *   vector        the vector unit computing
 *   fill_drain    the skew of filling and draining the array, and os drains
 *   op_fixed      the fixed time every op spends before it computes (launch,
 *                 synchronisation, the pipeline between fusions:
 *                 chip.op_fixed_ns)
 *   exposed_comm  waiting for a collective over the pod's links
 *                 (models/ici.h) that no compute hid: charged to the op
 *                 that waits for its result, and what is still on the
 *                 links after a pass's last op to that op (a collective
 *                 alone: to itself)
 *   bubble        a pipeline stage's chip idle in the step, waiting for
 *                 the stages before and after it (sim/run/pipeline.h):
 *                 a row of its own, phase bubble
 *
 * Late data and shifts: weight_shift counts a shift as if its tile had
 * been there in time. With a shadow register a tile starts shifting in when
 * the previous fold starts streaming, and what of its Sr cycles outlasts
 * that stream is weight_shift. When the tile arrives later, the fold waits
 * until it has shifted in: those cycles, the shift after the data included,
 * are a wait on the late data (weights in ws, inputs in is, shared with any
 * other late operand by the bytes each moved), and so are the cycles a slow
 * stationary-buffer port adds to a shift. Without a shadow register a fold
 * first waits for all its data (charged to whoever was late), then shifts:
 * that whole shift is weight_shift.
 *
 * The models charge cycles to them (models/array: the array's own time);
 * sim/plan/stats.h names them in reports.
 */
#ifndef TPUSIM_CAT_H
#define TPUSIM_CAT_H

enum cat {
	CAT_COMPUTE,
	CAT_WEIGHTS,
	CAT_WEIGHT_SHIFT,
	CAT_INPUTS,
	CAT_OUTPUTS,
	CAT_VECTOR,
	CAT_FILL_DRAIN,
	CAT_OP_FIXED,
	CAT_EXPOSED_COMM,
	CAT_BUBBLE,
	CAT_N
};

#endif
