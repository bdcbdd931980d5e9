#!/usr/bin/python3
"""
hlo2workload.py - a tpusim workload YAML from a StableHLO module.

    scripts/hlo2workload.py MODULE.mlir [-o OUT.yaml] [--batch N] [--input N]...
                            [--allow-unsupported] [--quiet]

The module is the MLIR text of StableHLO, as jax.jit(f).lower(...).as_text()
prints it (pretty or generic form), read with the standard library alone
(hlo_parse.py). Its entry function is @main (else its first); the functions
it calls are inlined. Each op becomes one workload layer named after the op
and its result (`dot_general_0` for %0; an inlined op after the call too,
`call_3.maximum_0`), with its source location (`loc(...)`, following #loc
aliases) in a comment, or is accounted for in the report on stderr, one line
per op that does not become a layer of its own:

  shape only    reshape, transpose, convert, bitcast_convert, copy: the
                output is the input, relabelled
  constant      constant, iota and every op whose operands are all constant
                (weights included): no work at run time
  folded        add, subtract, multiply, divide with a constant operand (a
                bias, a scale): folded into the op that wrote the other one
  data movement broadcast_in_dim, concatenate, slice, gather, pad, ...: no
                layer
  fused         part of a softmax written out (reduce max, subtract,
                exponential, reduce add, divide, with their broadcasts): one
                softmax layer
  counted as    an op with no layer type of its own, converted to the type
                of the same vector work (subtract as add, exponential as
                gelu, logistic as silu, a reduce as relu of the elements it
                reads)
  inlined       a func.call: its body is converted in its place
  dataflow      a layer whose operands `inputs` cannot name
  unsupported   everything else (while, sort, custom_call, ...), each named
                with its position (file:line:col) and source location

A function argument is a weight, as an ONNX initializer is, unless it is an
input: `--input N` (repeatable; default 0, the first argument) names the
arguments that are the network's data. The first dimension of the first input
is the batch: every activation's total is divided by it, so that layer shapes
are per sample; `--batch N` sets the YAML's batch (default: the module's).
Element types (f32, bf16, i8) are not part of a workload (a chip's
array.dtype is): the header lists them, and nothing else keeps them.

The YAML is checked by `tpusim lower` before it is written, as
onnx2workload.py's is (workload_out.py), atomically, 0666 less the umask.

Exit status: 0 when the YAML is written; 2 on bad input (text that is no
StableHLO module, a malformed type, an undefined value, an attribute that
does not read) and when some ops are unsupported (each on stderr with its
position; nothing written unless --allow-unsupported, which writes the YAML
with them listed in its header).
"""
import argparse
import os
import sys

_here = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [_here, os.path.join(_here, "..", "share", "tpusim", "python")]
sys.dont_write_bytecode = True

from hlo_lower import Converter  # noqa: E402
from hlo_parse import parse  # noqa: E402
from workload_out import (BATCH_MAX, BadInput, layer_lines, plural, positive, print_report, printable,  # noqa: E402
                          report_counts, sanitize, write_checked, yaml_name)

PROG = "hlo2workload"


def read(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"{path}: expected a readable StableHLO file, found {e.strerror.lower()}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: expected UTF-8 text, found a byte that is not at offset {e.start}")


def render(conv, path, yaml_batch):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = sanitize((conv.m.name or "@" + stem)[1:].strip('"'))
    e = conv.entry
    first = e.args[conv.inputs[0]]
    shown = [e.args[n] + (f" ({e.arg_names[n]})" if e.arg_names[n] else "") for n in conv.inputs]
    lines = [f"# Converted from {os.path.basename(path)} by scripts/hlo2workload.py (function {e.name}; inputs "
             + ", ".join(shown) + "; element types "
             + (", ".join(sorted(conv.dtypes)) or "none") + ", not kept: a chip's array.dtype sets them).",
             f"# {plural(conv.n_ops, 'op')} as {plural(len(conv.layers), 'layer')}; shapes per sample, the batch"
             f" ({conv.mb}, the first dimension of {first}) divided out. Biases are folded."]
    lines += report_counts(conv.report)
    for _, _, msg in conv.unsupported:
        lines.append(f"# UNSUPPORTED, left out: {msg}")
    lines += [f"name: {yaml_name(name)}", f"batch: {yaml_batch}", "layers:"] + layer_lines(conv.layers)
    return "\n".join(printable(l) for l in lines) + "\n"


def arg_number(text):
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an argument number (0 for the first), found {text!r}")
    return v


def main(argv):
    ap = argparse.ArgumentParser(prog="hlo2workload.py",
                                 description="Writes a tpusim workload YAML from a StableHLO module (MLIR text).")
    ap.add_argument("module", help="the .mlir file (jax.jit(f).lower(...).as_text())")
    ap.add_argument("-o", "--output", help="the YAML file to write (default: standard output)")
    ap.add_argument("--batch", type=positive, help=f"the workload's batch (1 to {BATCH_MAX}; default: the module's)")
    ap.add_argument("--input", type=arg_number, action="append", metavar="N",
                    help="an argument of the entry function that is the network's data, not a weight "
                         "(repeatable; default 0)")
    ap.add_argument("--allow-unsupported", action="store_true",
                    help="write the YAML even when some ops are unsupported (they are listed in its header)")
    ap.add_argument("-q", "--quiet", action="store_true", help="list only unsupported ops on stderr")
    args = ap.parse_args(argv)
    try:
        module = parse(read(args.module), args.module)
        conv = Converter(module, sorted(set(args.input or [0])))
        conv.run()
        if conv.unsupported and not args.allow_unsupported:
            print_report(conv.report, args.quiet)
            for _, _, msg in conv.unsupported:
                print(printable(f"{PROG}: {msg}"), file=sys.stderr)
            print(f"{PROG}: {args.module}: {plural(len(conv.unsupported), 'unsupported op')} (listed above); "
                  f"nothing written (--allow-unsupported writes the rest)", file=sys.stderr)
            return 2
        if not conv.layers:
            raise BadInput(f"{args.module}: expected an op that becomes a layer, found none")
        text = render(conv, args.module, args.batch or conv.mb)
        write_checked(PROG, args.module, args.output, text)
    except BadInput as e:
        print(printable(f"{PROG}: {e}"), file=sys.stderr)
        return 2
    print_report(conv.report, args.quiet)
    print(f"{PROG}: {args.module}: {plural(conv.n_ops, 'op')}, {plural(len(conv.layers), 'layer')}"
          + (f", {len(conv.unsupported)} unsupported left out" if conv.unsupported else "")
          + (f" -> {args.output}" if args.output else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
