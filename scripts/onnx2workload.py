#!/usr/bin/python3
"""
onnx2workload.py - a tpusim workload YAML from an ONNX model.

    scripts/onnx2workload.py MODEL.onnx [-o OUT.yaml] [--batch N] [--dim NAME=N]
                             [--no-fuse] [--allow-unsupported] [--quiet]

The model is read with the onnx package (Debian python3-onnx) and its shapes
are inferred (onnx.shape_inference). Each node becomes one workload layer
named after the node (sanitised to [A-Za-z0-9_./-], at most 63 characters,
made unique), or is accounted for in the report on stderr, one line per node
that does not become a layer of its own:

  shape only    Reshape, Transpose, Flatten, Squeeze, Unsqueeze, Identity,
                Dropout, Cast: the output is the input, relabelled
  constant      Constant, Shape, Size and every node whose inputs are all
                constant (shape arithmetic): no work at run time
  folded        BatchNormalization, and Add, Sub, Mul, Div with a constant
                operand (a bias, a scale): folded into the op that wrote the
                other operand, as the shipped workloads fold BatchNorm
  data movement Concat, Slice, Gather, Split, Pad, Expand, Tile: no layer
  fused         part of a recognised pattern: x * 0.5 * (1 + Erf(x / sqrt 2))
                is one gelu layer, x * Sigmoid(x) one silu layer, a LayerNorm
                written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div)
                one layernorm layer, and (unless --no-fuse) a self-attention
                block one attention layer
  counted as    an op with no layer type of its own, converted to the type of
                the same vector work (Sub as add, Div as mul, Sigmoid as silu)
  dataflow      a layer whose operands `inputs` cannot name (below)
  unsupported   everything else (LSTM, Resize, ai.onnx.ml ops, ...)

A node of a custom domain (not ONNX's own; of others only com.microsoft's
Gelu and FastGelu are known) has work no one here can know: it is refused,
named, with exit status 2, even with --allow-unsupported.

The first dimension of the model's first input is the batch: every tensor's
total is divided by it, so that layer shapes are per sample, as the workload
format has them; `--batch N` gives a symbolic first dimension its value (one
without --batch or --dim is refused) and sets the YAML's batch (default: the
model's). Any other symbolic dimension needs `--dim NAME=N`.

The YAML is checked by `tpusim lower` before it is written (the tpusim of
$TPUSIM, else build/tpusim beside this script, else on PATH), so that what
tpusim refuses is refused here; the bounds are limit.h's (workload_out.py's,
which the test checks). It is written atomically, 0666 less the umask.

A layer lists `inputs` (the layers whose outputs it reads) when every operand
it reads is the whole output of an earlier layer. When one is a network input
(`inputs` names layers only) or a tensor no layer writes whole (after Concat,
Slice, a broadcast), the layer has no `inputs` and tpusim's default applies;
where that default reads something else than the model does, a comment on the
layer and a "dataflow" line on stderr say so. MACs never depend on it.

Exit status: 0 when the YAML is written; 1 when some nodes are unsupported
(listed on stderr; nothing written unless --allow-unsupported, which writes
the YAML with them listed in its header); 2 on bad input (a file that is no
ONNX model, shapes that cannot be inferred, a dimension without a value),
with nothing written.
"""
import argparse
import os
import re
import sys
import tempfile
import warnings

import onnx
from onnx import shape_inference

# The translation lives beside this file in a checkout (scripts/) and in
# PREFIX/share/tpusim/python when installed (make install), as the presets do;
# no __pycache__ is left in either.
_here = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [_here, os.path.join(_here, "..", "share", "tpusim", "python")]
sys.dont_write_bytecode = True

from onnx_lower import ONNX_DOMAINS, OTHER_DOMAIN_OK, Converter, attr_value, node_label  # noqa: E402
from workload_out import (BATCH_MAX, DIM_MAX, BadInput, layer_lines, plural, positive, print_report,  # noqa: E402
                          printable, report_counts, sanitize, write_checked, yaml_name)

PROG = "onnx2workload"

# ---------------------------------------------------------------------------- reading

def load_model(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"{path}: expected a readable ONNX file, found {e.strerror.lower()}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = onnx.load_model_from_string(data)
    except Exception as e:   # protobuf raises DecodeError and, on some inputs, others
        raise BadInput(f"{path}: expected an ONNX model (a protobuf ModelProto), found {len(data)} bytes "
                       f"that do not decode as one ({e})")
    bad = non_text(model, "model")
    if bad:
        raise BadInput(f"{path}: {bad}: expected UTF-8 text, found bytes that are not")
    if not model.ir_version or not model.graph.node:
        raise BadInput(f"{path}: expected an ONNX model with a graph of nodes, found "
                       f"{'no ir_version' if not model.ir_version else 'a graph without nodes'}")
    return model


def non_text(msg, where):
    """The path of the first string field of msg that did not decode as UTF-8 (protobuf then gives bytes), or None."""
    for fd, value in msg.ListFields():
        if fd.type == fd.TYPE_MESSAGE:
            items = value if fd.label == fd.LABEL_REPEATED else [value]
            for i, m in enumerate(items):
                sub = f"{where}.{fd.name}[{i}]" if fd.label == fd.LABEL_REPEATED else f"{where}.{fd.name}"
                bad = non_text(m, sub)
                if bad:
                    return bad
        elif fd.type == fd.TYPE_STRING:
            items = value if fd.label == fd.LABEL_REPEATED else [value]
            if any(isinstance(v, bytes) for v in items):
                return f"{where}.{fd.name}"
    return None


def set_dims(model, path, batch, dims):
    """Gives symbolic input dimensions their values; returns the model's batch (dim 0 of its first input)."""
    inits = {t.name for t in model.graph.initializer}
    ins = [i for i in model.graph.input if i.name not in inits]
    if not ins:
        raise BadInput(f"{path}: graph.input: expected at least one input that is not an initializer, found none")
    used = set()
    model_batch = None
    for ii, inp in enumerate(ins):
        if not inp.type.HasField("tensor_type") or not inp.type.tensor_type.HasField("shape"):
            raise BadInput(f"{path}: graph.input '{inp.name}': expected a tensor with a shape, found none")
        for di, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                continue
            sym = d.dim_param if d.HasField("dim_param") else ""
            if sym and sym in dims:
                d.dim_value = dims[sym]
                used.add(sym)
            elif di == 0 and batch:
                d.dim_value = batch
            elif di == 0:
                give = f"--batch N, or --dim {sym}=N" if sym else "--batch N"
                raise BadInput(f"{path}: graph.input '{inp.name}'.shape[0]: expected a fixed size, found "
                               f"{'the symbol ' + repr(sym) if sym else 'no size'} (the batch: give {give})")
            else:
                hint = f" (give --dim {sym}=N)" if sym else ""
                raise BadInput(f"{path}: graph.input '{inp.name}'.shape[{di}]: expected a fixed size, found "
                               f"{'the symbol ' + repr(sym) if sym else 'no size'}{hint}")
        if ii == 0:
            shape = inp.type.tensor_type.shape.dim
            model_batch = shape[0].dim_value if len(shape) else 1
            if not batch and model_batch > BATCH_MAX:
                raise BadInput(f"{path}: graph.input '{inp.name}'.shape[0]: expected a batch of at most {BATCH_MAX}, "
                               f"found {model_batch} (give --batch)")
    unused = sorted(set(dims) - used)
    if unused:
        raise BadInput(f"{path}: --dim {unused[0]}: expected the name of a symbolic input dimension, found none "
                       f"of that name")
    return model_batch


def check_domains(model, path):
    """A node of a domain the ONNX standard does not define, but the few known ones: refused, named."""
    known = ", ".join(sorted({f"{dom} " + ", ".join(sorted(op for d2, op in OTHER_DOMAIN_OK if d2 == dom))
                              for dom, _ in OTHER_DOMAIN_OK}))
    for i, node in enumerate(model.graph.node):
        if node.domain not in ONNX_DOMAINS and (node.domain, node.op_type) not in OTHER_DOMAIN_OK:
            raise BadInput(f"{path}: graph.node[{i}] ({node.domain}:{node.op_type} '{node_label(node, i)}'): expected "
                           f"an op of ONNX's own domains (or {known}), found one of domain '{node.domain}', whose "
                           f"work tpusim cannot know")


POSITIVE_ATTRS = ("strides", "dilations", "kernel_shape", "group")


def check_attrs(model, path):
    """Window attributes that must be positive; onnx.shape_inference divides by some of them unchecked."""
    for i, node in enumerate(model.graph.node):
        if node.domain not in ("", "ai.onnx"):
            continue
        for a in node.attribute:
            if a.name in POSITIVE_ATTRS:
                v = attr_value(a, f"{path}: graph.node[{i}] ({node.op_type} '{node_label(node, i)}')")
                vals = v if isinstance(v, list) else [v]
                if not vals or any(not isinstance(x, int) or x < 1 for x in vals):
                    raise BadInput(f"{path}: graph.node[{i}] ({node.op_type} '{node_label(node, i)}'): attribute "
                                   f"{a.name}: expected positive integers, found {v!r}")


def infer(model, path):
    """
    The model with its shapes inferred. onnx.shape_inference runs in a child
    process: on some malformed models it dies of a signal, which must not end
    this program without a message.
    """
    check_attrs(model, path)
    with tempfile.TemporaryDirectory(prefix="onnx2workload.") as d:
        out, err = os.path.join(d, "model.onnx"), os.path.join(d, "error")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                m = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
                with open(out, "wb") as f:
                    f.write(m.SerializeToString())
            except Exception as e:
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                with open(err, "w") as f:
                    f.write(msg)
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            raise BadInput(f"{path}: expected a model that onnx.shape_inference can read, found one that stops it "
                           f"(signal {os.WTERMSIG(status)})")
        if os.path.exists(err):
            with open(err) as f:
                raise BadInput(f"{path}: expected shapes that onnx.shape_inference can infer, found an error: {f.read()}")
        if os.waitstatus_to_exitcode(status) != 0 or not os.path.exists(out):
            raise BadInput(f"{path}: expected shapes that onnx.shape_inference can infer, found none")
        with open(out, "rb") as f:
            return onnx.load_model_from_string(f.read())


# ---------------------------------------------------------------------------- writing

def render(conv, model, path, yaml_batch):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = sanitize(model.graph.name or stem)
    lines = [f"# Converted from {os.path.basename(path)} by scripts/onnx2workload.py"
             f" (producer: {(model.producer_name + ' ' + model.producer_version).strip() or 'unknown'}; opsets: "
             + ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import) + ").",
             f"# {plural(len(model.graph.node), 'node')} as {plural(len(conv.layers), 'layer')}; shapes per sample, the batch"
             f" ({conv.mb} in the model) divided out. Biases and BatchNorm are folded."]
    lines += report_counts(conv.report)
    for op, label, why in conv.unsupported:
        lines.append(f"# UNSUPPORTED, left out: {op} '{label}': {why}")
    lines += [f"name: {yaml_name(name)}", f"batch: {yaml_batch}", "layers:"] + layer_lines(conv.layers)
    return "\n".join(printable(l) for l in lines) + "\n"


def dim_arg(text):
    m = re.fullmatch(r"([^=]+)=(\d+)", text)
    if not m or not 1 <= int(m.group(2)) <= DIM_MAX:
        raise argparse.ArgumentTypeError(f"expected NAME=N with N an integer in [1, {DIM_MAX}], found {text!r}")
    return m.group(1), int(m.group(2))


def main(argv):
    ap = argparse.ArgumentParser(prog="onnx2workload.py", description="Writes a tpusim workload YAML from an ONNX model.")
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("-o", "--output", help="the YAML file to write (default: standard output)")
    ap.add_argument("--batch", type=positive, help="the workload's batch; also the value of a symbolic first input dimension")
    ap.add_argument("--dim", type=dim_arg, action="append", default=[], metavar="NAME=N",
                    help="the value of a symbolic input dimension (repeatable)")
    ap.add_argument("--no-fuse", action="store_true", help="keep a self-attention block as its separate layers")
    ap.add_argument("--allow-unsupported", action="store_true",
                    help="write the YAML even when some nodes are unsupported (they are listed in its header)")
    ap.add_argument("-q", "--quiet", action="store_true", help="list only unsupported nodes on stderr")
    args = ap.parse_args(argv)
    try:
        model = load_model(args.model)
        check_domains(model, args.model)
        mb = set_dims(model, args.model, args.batch, dict(args.dim))
        model = infer(model, args.model)
        conv = Converter(model, args.model, mb, not args.no_fuse)
        conv.run()
        n_layers = len(conv.layers)
        if conv.unsupported and not args.allow_unsupported:
            print_report(conv.report, args.quiet)
            print(f"{PROG}: {args.model}: {len(conv.unsupported)} unsupported node"
                  f"{'s' if len(conv.unsupported) != 1 else ''} (listed above); nothing written "
                  f"(--allow-unsupported writes the rest)", file=sys.stderr)
            return 1
        if not conv.layers:
            raise BadInput(f"{args.model}: expected a node that becomes a layer, found none")
        text = render(conv, model, args.model, args.batch or mb)
        write_checked(PROG, args.model, args.output, text)
    except BadInput as e:
        print(printable(f"{PROG}: {e}"), file=sys.stderr)
        return 2
    print_report(conv.report, args.quiet)
    print(f"{PROG}: {args.model}: {plural(len(model.graph.node), 'node')}, {plural(n_layers, 'layer')}"
          + (f", {len(conv.unsupported)} unsupported left out" if conv.unsupported else "")
          + (f" -> {args.output}" if args.output else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
