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
tpusim refuses is refused here; the bounds below are limit.h's (the test
checks them). It is written atomically, 0666 less the umask.

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
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import onnx
from onnx import shape_inference

PROG = "onnx2workload"
NAME_MAX = 63                         # CFG_STR_MAX - 1: the longest layer name a workload takes
DIM_MAX = 1 << 40                     # workload.c: the largest value of a layer's key
COUNT_MAX = 10 ** 9                   # workload.c: the most repeat and groups
BATCH_MAX = 1 << 20                   # workload.c: the largest batch

SHAPE_ONLY = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Cast"}
SHAPE_VALUES = {"Shape", "Size"}      # values that depend on shapes alone
DATA_MOVEMENT = {"Concat", "Slice", "Gather", "GatherElements", "Split", "Pad", "Expand", "Tile"}
BINARY = {"Add": "add", "Sub": "add", "Mul": "mul", "Div": "mul"}
# op type: (layer type, how it is counted when the type is not its own, or None)
UNARY = {
    "Relu": ("relu", None),
    "Gelu": ("gelu", None),
    "FastGelu": ("gelu", None),
    "Softmax": ("softmax", None),
    "LayerNormalization": ("layernorm", None),
    "Sigmoid": ("silu", "Sigmoid counted as silu"),
    "Erf": ("gelu", "Erf counted as gelu"),
    "HardSigmoid": ("silu", "HardSigmoid counted as silu"),
    "HardSwish": ("silu", "HardSwish counted as silu"),
    "Tanh": ("gelu", "Tanh counted as gelu"),
    "LeakyRelu": ("relu", "LeakyRelu counted as relu"),
    "Clip": ("relu", "Clip counted as relu"),
    "LogSoftmax": ("softmax", "LogSoftmax counted as softmax"),
}
# op type: (inputs it needs, inputs it takes at most, None for any); the checks shape inference leaves out
ARITY = {"Conv": (2, 3), "Gemm": (2, 3), "MatMul": (2, 2), "MaxPool": (1, 1), "AveragePool": (1, 1),
         "GlobalAveragePool": (1, 1), "GlobalMaxPool": (1, 1), "BatchNormalization": (5, 5),
         **{op: (2, 2) for op in BINARY}, **{op: (1, None) for op in UNARY},
         **{op: (1, None) for op in SHAPE_ONLY | DATA_MOVEMENT}}
OTHER_DOMAIN_OK = {("com.microsoft", "Gelu"), ("com.microsoft", "FastGelu")}
ONNX_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training")   # the domains the ONNX standard defines


class BadInput(Exception):
    """The model cannot be read or its shapes are not known: exit 2."""


class Unsupported(Exception):
    """This node has no workload layer: the reason."""


class Layer:
    """One workload layer, in the order the YAML lists them."""

    def __init__(self, name, ltype, keys, node, op, reads, read_sizes, out_elems):
        self.name = name
        self.type = ltype
        self.keys = keys              # the type's keys, in the order written
        self.nodes = [node]           # ONNX node names this layer stands for
        self.op = op
        self.reads = reads            # Val per activation operand, operand order
        self.read_sizes = read_sizes  # elements per sample the workload reads for each
        self.out_elems = out_elems    # elements per sample it writes
        self.notes = []
        self.uses = []                # layers that read its output
        self.escapes = False          # read by something that is not a layer (or a graph output)
        self.pending = None           # Erf or Sigmoid waiting for its Mul: the Val it was applied to
        self.pending_note = None      # what the report says when the Mul never comes
        self.pattern = None           # what the report says when it does
        self.removed = False
        self.replaced_by = None


class Val:
    """What an ONNX tensor is to the workload."""

    def __init__(self, kind, elems=None, src=None, gin=None, via=None):
        self.kind = kind              # "const" or "act"
        self.elems = elems            # total elements (all samples), None when the shape is unknown
        self.src = src                # the Layer whose whole output this is, when one is
        self.gin = gin                # the graph input it is, when it is one
        self.via = via                # else the node that wrote it, as messages show it

    def alias(self, elems):
        return Val("act", elems, self.src, self.gin)

    def same(self, other):
        return (self.kind == other.kind == "act" and self.elems == other.elems and
                self.src is other.src and self.gin == other.gin and (self.src or self.gin))


def node_label(node, index):
    return node.name if node.name else f"{node.op_type}_{index}"


def sanitize(name):
    """name in the characters a plain YAML scalar keeps; when too long, its last path parts, or its tail."""
    parts = re.sub(r"[^A-Za-z0-9_./-]", "_", name).strip("/").split("/")
    while len(parts) > 1 and len("/".join(parts)) > NAME_MAX:
        parts.pop(0)
    s = "/".join(parts)[-NAME_MAX:].lstrip("/.-_")
    return s or "layer"


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def prod(v):
    return math.prod(v) if v else 1


def broadcast(a, b, node):
    """The batch dimensions of a matmul's result: a's and b's, broadcast as numpy does."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x != y and 1 not in (x, y):
            raise Unsupported(f"batch dimensions {a} and {b} that do not broadcast")
        out.append(max(x, y))
    return out[::-1]


def attr_value(a, where):
    """An attribute's value; one of no type (a name only) is bad input, not a traceback."""
    try:
        return onnx.helper.get_attribute_value(a)
    except ValueError as e:
        raise BadInput(f"{where}: attribute {a.name}: expected a value of a known type, found none ({e})")


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return attr_value(a, f"node '{node.name}' ({node.op_type})")
    return default


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


def known_shapes(graph):
    shapes = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if t is None or not t.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in t.shape.dim]
        if None not in dims:
            shapes[vi.name] = dims
    for t in graph.initializer:
        shapes[t.name] = list(t.dims)
    return shapes


# ---------------------------------------------------------------------------- converting

def find_layernorms(nodes):
    """
    LayerNorm written out, as exporters before opset 17 do: m = ReduceMean(x),
    d = x - m, v = ReduceMean(d^2) (Pow or Mul), y = d / Sqrt(v + eps).
    Returns {index of the Div: x} and {index of each other node: the Div's label},
    for every instance whose intermediate tensors nothing else reads.
    """
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    readers = {}
    for i, n in enumerate(nodes):
        for t in n.input:
            readers.setdefault(t, set()).add(i)

    def made_by(t, op):
        i = producer.get(t)
        return i if i is not None and nodes[i].op_type == op else None

    out, part = {}, {}
    for i, div in enumerate(nodes):
        if div.op_type != "Div" or len(div.input) != 2:
            continue
        sub, sq = made_by(div.input[0], "Sub"), made_by(div.input[1], "Sqrt")
        if sub is None or sq is None:
            continue
        x, r1 = nodes[sub].input[0], made_by(nodes[sub].input[1], "ReduceMean")
        add = made_by(nodes[sq].input[0], "Add")
        if r1 is None or nodes[r1].input[0] != x or add is None:
            continue
        r2 = next((made_by(t, "ReduceMean") for t in nodes[add].input if made_by(t, "ReduceMean") is not None), None)
        if r2 is None:
            continue
        sqr = made_by(nodes[r2].input[0], "Pow")
        if sqr is None:
            sqr = made_by(nodes[r2].input[0], "Mul")
            if sqr is None or list(nodes[sqr].input) != [div.input[0]] * 2:
                continue
        elif nodes[sqr].input[0] != div.input[0]:
            continue
        inner = {r1: {sub}, sub: {sqr, i}, sqr: {r2}, r2: {add}, add: {sq}, sq: {i}}
        if all(readers.get(nodes[j].output[0], set()) == want for j, want in inner.items()):
            out[i] = x
            label = node_label(div, i)
            for j in inner:
                part[j] = label
    return out, part


class Converter:
    def __init__(self, model, path, model_batch, fuse):
        self.g = model.graph
        self.path = path
        self.mb = model_batch
        self.fuse = fuse
        self.shapes = known_shapes(self.g)
        self.vals = {}
        self.layers = []
        self.names = set()
        self.report = []               # (category, op, node, detail)
        self.unsupported = []
        for t in self.g.initializer:
            self.vals[t.name] = Val("const", prod(t.dims))
        for inp in self.g.input:
            if inp.name not in self.vals:
                self.vals[inp.name] = Val("act", self.elems(inp.name), gin=inp.name)
        self.ln_out, self.ln_part = find_layernorms(list(self.g.node))

    # -- helpers

    def elems(self, name):
        s = self.shapes.get(name)
        return prod(s) if s is not None else None

    def shape(self, name):
        s = self.shapes.get(name)
        if s is None:
            raise Unsupported(f"the shape of '{name}' is not known after shape inference")
        return s

    def attr_int(self, node, name, default, lo=0):
        v = attr(node, name, default)
        if not isinstance(v, int) or v < lo:
            raise BadInput(f"{self.where}: attribute {name}: expected an integer of at least {lo}, found {v!r}")
        return v

    def attr_ints(self, node, name, default, n, lo=0):
        v = attr(node, name, default)
        if not isinstance(v, list) or len(v) != n or any(not isinstance(x, int) or x < lo for x in v):
            raise BadInput(f"{self.where}: attribute {name}: expected {n} integers of at least {lo}, found {v!r}")
        return v

    def auto_pad(self, node):
        v = attr(node, "auto_pad", b"NOTSET")
        v = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        if v not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
            raise BadInput(f"{self.where}: attribute auto_pad: expected NOTSET, VALID, SAME_UPPER or SAME_LOWER, "
                           f"found {v!r}")
        return v

    def per_sample(self, n, what):
        if n % self.mb:
            raise Unsupported(f"{what} ({n}) is not a multiple of the batch ({self.mb}, the first dimension of "
                              f"the model's first input)")
        return n // self.mb

    def batch_dim(self, name, s):
        if s[0] != self.mb:
            raise Unsupported(f"'{name}' has {s[0]} in its first dimension, not the batch ({self.mb})")

    def unique(self, label):
        base = sanitize(label)
        name, i = base, 2
        while name in self.names:
            suffix = f"_{i}"
            name = base[:NAME_MAX - len(suffix)] + suffix
            i += 1
        self.names.add(name)
        return name

    def note(self, category, node, label, detail=""):
        self.report.append((category, node.op_type, label, detail))

    def add_layer(self, node, label, ltype, keys, reads, read_sizes, out_elems):
        for k, v in keys.items():
            top = COUNT_MAX if k in ("repeat", "groups") else DIM_MAX
            if isinstance(v, int) and not 1 <= v <= top and not (v == 0 and k == "padding"):
                raise Unsupported(f"{ltype} {k} {v}, beyond what a workload takes (1 to {top})")
        layer = Layer(self.unique(label), ltype, keys, label, node.op_type, reads, read_sizes, out_elems)
        for v in reads:
            if v.src is not None:
                v.src.uses.append(layer)
        self.layers.append(layer)
        want = self.elems(node.output[0])
        if want is not None and want != out_elems * self.mb:
            raise AssertionError(f"{label}: the layer writes {out_elems * self.mb} elements, ONNX {want}")
        self.vals[node.output[0]] = Val("act", out_elems * self.mb, src=layer)
        return layer

    def escape(self, vals):
        for v in vals:
            if v.kind == "act" and v.src is not None:
                v.src.escapes = True

    # -- the walk

    def run(self):
        for i, node in enumerate(self.g.node):
            label = node_label(node, i)
            self.where = f"{self.path}: graph.node[{i}] ({node.op_type} '{label}')"
            ins = []                   # one per input, None for an optional input not given
            for n in node.input:
                if n and n not in self.vals:
                    raise BadInput(f"{self.where}: expected inputs written by earlier nodes, found '{n}' that no "
                                   f"earlier node writes")
                ins.append(self.vals[n] if n else None)
            lo, hi = ARITY.get(node.op_type, (0, None))
            if (node.domain in ("", "ai.onnx") and
                    (len(ins) < lo or (hi is not None and len(ins) > hi) or None in ins[:lo])):
                raise BadInput(f"{self.where}: expected {lo}{'' if hi == lo else ' or more' if hi is None else f' to {hi}'} "
                               f"inputs, found {sum(v is not None for v in ins)}")
            try:
                if i in self.ln_part:
                    self.note("fused", node, label, f"a LayerNorm written out, into '{self.ln_part[i]}'")
                    for o in node.output:
                        self.vals[o] = Val("act", self.elems(o), via=f"{node.op_type} '{label}'")
                    continue
                if i in self.ln_out:
                    x = self.vals[self.ln_out[i]]
                    if x.kind != "act" or x.elems is None:
                        raise Unsupported("a LayerNorm of a constant or of a tensor whose shape is not known")
                    e = self.per_sample(x.elems, "the input")
                    self.add_layer(node, label, "layernorm", dict(elements=e), [x], [e], e)
                    self.note("fused", node, label, "the last op of a LayerNorm written out")
                    continue
                self.convert(node, label, ins)
            except Unsupported as e:
                dom = f"{node.domain}:" if node.domain not in ("", "ai.onnx") else ""
                self.unsupported.append((dom + node.op_type, label, str(e)))
                self.report.append(("unsupported", dom + node.op_type, label, str(e)))
                self.escape([v for v in ins if v is not None])
                for o in node.output:
                    if o:
                        self.vals[o] = Val("act", self.elems(o), via=f"unsupported {node.op_type} '{label}'")
        for o in self.g.output:
            v = self.vals.get(o.name)
            if v is not None:
                self.escape([v])
        for l in self.layers:
            if l.pending is not None:
                l.notes.append(l.pending_note)
                self.report.append(("counted as", l.op, l.nodes[0], l.pending_note))
                l.pending = None
        if self.fuse:
            self.fuse_attention()
        prev = None
        for l in self.layers:
            self.resolve_inputs(l, prev)
            prev = l

    def resolve_inputs(self, l, prev):
        """
        l.inputs: the names of the layers l reads, when every operand is the
        whole output of one; else none, and tpusim's default rule applies
        (operand 0: the previous layer's output when it has the size read,
        else a new input; any other operand a new input). A note says where
        that rule reads something else than the model.
        """
        want = []
        for v, size in zip(l.reads, l.read_sizes):
            src = final(v.src) if v.src is not None else None
            if src is not None and v.elems == size * self.mb and src.out_elems == size:
                want.append(("layer", src, f"'{src.name}'"))
            elif v.gin is not None and v.src is None and v.elems == size * self.mb:
                want.append(("input", None, f"network input '{v.gin}'"))
            elif src is not None and v.elems == src.out_elems * self.mb:
                want.append(("none", None, f"'{src.name}', broadcast"))
            else:
                want.append(("none", None, f"what {v.via} writes" if v.via else "a tensor that no layer writes"))
        l.inputs = [w[1].name for w in want] if all(w[0] == "layer" for w in want) else None
        if l.inputs is not None:
            return
        for j, (kind, what, shown) in enumerate(want):
            gets = prev if j == 0 and prev is not None and prev.out_elems == l.read_sizes[0] else None
            if (kind == "layer" and gets is what) or (kind == "input" and gets is None):
                continue
            reads = f"'{gets.name}'" if gets is not None else "a new input"
            why = {"layer": "another operand has no layer to name", "input": "`inputs` names layers only",
                   "none": "no layer writes it whole"}[kind]
            text = f"operand {j} is {shown}, but tpusim reads {reads} ({why})"
            l.notes.append(text)
            self.report.append(("dataflow", l.type, l.name, text))

    def convert(self, node, label, ins):
        op = node.op_type
        acts = [v for v in ins if v is not None and v.kind == "act"]
        if node.domain not in ("", "ai.onnx") and (node.domain, op) not in OTHER_DOMAIN_OK:
            raise Unsupported(f"an op of domain '{node.domain}'")
        if any(a.HasField("g") or len(a.graphs) for a in node.attribute):
            raise Unsupported("an op with subgraphs")
        if op in SHAPE_VALUES or not acts or (op in SHAPE_ONLY and (ins[0] is None or ins[0].kind == "const")):
            for o in node.output:
                if o:
                    self.vals[o] = Val("const", self.elems(o))
            self.note("constant", node, label)
            return
        if op in SHAPE_ONLY:
            self.vals[node.output[0]] = ins[0].alias(self.elems(node.output[0]) or ins[0].elems)
            self.note("shape only", node, label)
            return
        if op in DATA_MOVEMENT:
            self.escape(acts)
            for o in node.output:
                if o:
                    self.vals[o] = Val("act", self.elems(o), via=f"{op} '{label}'")
            self.note("data movement", node, label, "what it writes has no layer")
            return
        if op == "BatchNormalization":
            self.fold(node, label, ins[0], "into " + self.producer(ins[0]))
            return
        handler = {"Conv": self.conv, "Gemm": self.gemm, "MatMul": self.matmul,
                   "MaxPool": self.pool, "AveragePool": self.pool,
                   "GlobalAveragePool": self.pool, "GlobalMaxPool": self.pool}.get(op)
        if handler:
            return handler(node, label, ins)
        if op in BINARY:
            return self.binary(node, label, ins)
        if op in UNARY:
            return self.unary(node, label, ins)
        raise Unsupported(f"no workload layer type for {op}")

    def producer(self, v):
        return f"'{v.src.name}'" if v.src is not None else f"network input '{v.gin}'" if v.gin else "no layer"

    def fold(self, node, label, v, detail):
        out = node.output[0]
        self.vals[out] = v.alias(self.elems(out) or v.elems)
        self.note("folded", node, label, detail)

    # -- layers

    def sym_padding(self, pads, dims, kernels, stride, outs):
        """The one padding p whose output size, (n + 2p - k) / s + 1, is ONNX's in both dimensions."""
        def fits(p):
            return all(k <= n + 2 * p and (n + 2 * p - k) // stride + 1 == o for n, k, o in zip(dims, kernels, outs))
        if pads and len(set(pads)) == 1 and fits(pads[0]):
            return pads[0], True
        # (n + 2p - k) // s + 1 == o  <=>  s (o - 1) <= n + 2p - k <= s o - 1
        lo = max([0] + [-((n - k - stride * (o - 1)) // 2) for n, k, o in zip(dims, kernels, outs)])
        hi = min((stride * o - 1 + k - n) // 2 for n, k, o in zip(dims, kernels, outs))
        p = min(max(sum(pads) // (2 * len(dims)) if pads else 0, lo), hi)   # nearest the mean pad
        if lo <= hi and fits(p):
            return p, False
        raise Unsupported(f"pads {list(pads)} give an output of {outs}, which no one padding on every side gives")

    def conv(self, node, label, ins):
        x, w = ins[0], ins[1]
        if w.kind != "const":
            raise Unsupported("weights computed at run time (input 1 is not a constant)")
        xs, ws = self.shape(node.input[0]), self.shape(node.input[1])
        ys = self.shape(node.output[0])
        if len(xs) != 4:
            raise Unsupported(f"a {len(xs) - 2}-D convolution (conv2d is 2-D)")
        if len(ws) != 4 or len(ys) != 4:
            raise BadInput(f"{self.where}: expected 4-D weights and output for a 4-D input, found {list(ws)} and "
                           f"{list(ys)}")
        self.batch_dim(node.input[0], xs)
        _, c, h, wd = xs
        oc, kh, kw = ws[0], ws[2], ws[3]
        groups = self.attr_int(node, "group", 1, 1)
        if groups < 1 or c % groups or oc % groups or ws[1] != c // groups:
            raise BadInput(f"{self.where}: expected weights of shape [out_c, in_c / group, kh, kw] with in_c {c} "
                           f"and group {groups}, found {list(ws)}")
        strides = self.attr_ints(node, "strides", [1, 1], 2, 1)
        dil = self.attr_ints(node, "dilations", [1, 1], 2, 1)
        if strides[0] != strides[1]:
            raise Unsupported(f"strides {strides} differ by dimension (conv2d has one stride)")
        if dil[0] != dil[1]:
            raise Unsupported(f"dilations {dil} differ by dimension (conv2d has one dilation)")
        auto = self.auto_pad(node)
        pads = self.attr_ints(node, "pads", [0, 0, 0, 0], 4) if auto == "NOTSET" else []
        ekh, ekw = dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1
        p, exact = self.sym_padding(pads, [h, wd], [ekh, ekw], strides[0], ys[2:])
        keys = dict(in_h=h, in_w=wd, in_c=c, out_c=oc)
        if kh == kw:
            keys["kernel"] = kh
        else:
            keys.update(kernel_h=kh, kernel_w=kw)
        keys.update(stride=strides[0], padding=p)
        if dil[0] != 1:
            keys["dilation"] = dil[0]
        if groups != 1:
            keys["groups"] = groups
        layer = self.add_layer(node, label, "conv2d", keys, [x], [c * h * wd], prod(ys[1:]))
        if not exact:
            layer.notes.append(f"pads {pads or auto} as padding {p}: the same output size")

    def gemm(self, node, label, ins):
        a, b = ins[0], ins[1]
        if len(ins) > 2 and ins[2] is not None and ins[2].kind == "act":
            raise Unsupported("a bias computed at run time (input C is not a constant)")
        sa, sb = self.shape(node.input[0]), self.shape(node.input[1])
        if len(sa) != 2 or len(sb) != 2:
            raise BadInput(f"{self.where}: expected two matrices, found shapes {list(sa)} and {list(sb)}")
        ta, tb = self.attr_int(node, "transA", 0), self.attr_int(node, "transB", 0)
        m, k = (sa[1], sa[0]) if ta else (sa[0], sa[1])
        n, kb = (sb[0], sb[1]) if tb else (sb[1], sb[0])
        if kb != k:
            raise BadInput(f"{self.where}: expected B with {k} rows (the columns of A), found {kb}")
        self.product(node, label, a, b, [], m, k, n, [], [])

    def matmul(self, node, label, ins):
        a, b = ins[0], ins[1]
        sa, sb = list(self.shape(node.input[0])), list(self.shape(node.input[1]))
        if not sa or not sb:
            raise BadInput(f"{self.where}: expected operands of rank 1 or more, found shapes {sa} and {sb}")
        if len(sa) == 1:
            sa = [1] + sa
        if len(sb) == 1:
            sb = sb + [1]
        if sb[-2] != sa[-1]:
            raise BadInput(f"{self.where}: expected B with {sa[-1]} rows (the columns of A), found {sb[-2]}")
        out_batch = broadcast(sa[:-2], sb[:-2], node)
        self.product(node, label, a, b, out_batch, sa[-2], sa[-1], sb[-1], sa[:-2], sb[:-2])

    def product(self, node, label, a, b, out_batch, m, k, n, a_batch, b_batch):
        """A . B with M x K and K x N matrices, prod(out_batch) of them; a weight is a constant operand."""
        pb = prod(out_batch)
        if a.kind == "act" and b.kind == "const" and not b_batch:
            tokens = self.per_sample(pb * m, "the rows of A")
            keys = dict(in_features=k, out_features=n, tokens=tokens)
            if node.op_type == "Gemm":
                ltype = "fc"
                if tokens == 1:
                    del keys["tokens"]
            else:
                ltype = "linear"
            self.add_layer(node, label, ltype, keys, [a], [tokens * k], tokens * n)
            return
        if a.kind == "act" and b.kind == "const":
            rep = prod(b_batch)
            mm = self.per_sample(pb * m // rep, "the rows of A per weight matrix")
            self.matmul_layer(node, label, mm, k, n, rep, "activation", "weight", [a], [mm * k * rep])
        elif a.kind == "const":
            rep = prod(a_batch)
            nn = self.per_sample(pb * n // rep, "the columns of B per weight matrix")
            self.matmul_layer(node, label, m, k, nn, rep, "weight", "activation", [b], [k * nn * rep])
        else:
            if pb % self.mb == 0:
                rep, mm = pb // self.mb, m
            else:
                rep, mm = 1, self.per_sample(pb * m, "the rows of A")
            self.matmul_layer(node, label, mm, k, n, rep, "activation", "activation", [a, b],
                                      [mm * k * rep, k * n * rep])
    
    def matmul_layer(self, node, label, m, k, n, rep, ra, rb, reads, sizes):
        keys = dict(m=m, k=k, n=n, a=ra, b=rb)
        if rep != 1:
            keys["repeat"] = rep
        return self.add_layer(node, label, "matmul", keys, reads, sizes, m * n * rep)

    def pool(self, node, label, ins):
        x = ins[0]
        xs, ys = self.shape(node.input[0]), self.shape(node.output[0])
        if len(xs) != 4:
            raise Unsupported(f"a {len(xs) - 2}-D pooling (pool is 2-D)")
        self.batch_dim(node.input[0], xs)
        _, c, h, w = xs
        mode = "max" if "Max" in node.op_type else "avg"
        keys = dict(in_h=h, in_w=w, in_c=c)
        exact = True
        if node.op_type.startswith("Global"):
            keys["global"] = "true"
        else:
            ks = self.attr_ints(node, "kernel_shape", [], 2, 1)
            strides = self.attr_ints(node, "strides", [1, 1], 2, 1)
            dil = self.attr_ints(node, "dilations", [1, 1], 2, 1)
            if len(node.output) > 1 and node.output[1]:
                raise Unsupported("MaxPool's indices output")
            if ks[0] != ks[1]:
                raise Unsupported(f"kernel_shape {ks} is not square (pool has one kernel size)")
            if strides[0] != strides[1]:
                raise Unsupported(f"strides {strides} differ by dimension (pool has one stride)")
            if dil != [1, 1]:
                raise Unsupported(f"dilations {dil} (pool has none)")
            auto = self.auto_pad(node)
            pads = self.attr_ints(node, "pads", [0, 0, 0, 0], 4) if auto == "NOTSET" else []
            p, exact = self.sym_padding(pads, [h, w], ks, strides[0], ys[2:])
            keys.update(kernel=ks[0], stride=strides[0], padding=p)
        keys["mode"] = mode
        layer = self.add_layer(node, label, "pool", keys, [x], [c * h * w], prod(ys[1:]))
        if not exact:
            layer.notes.append(f"pads {pads or auto} as padding {p}: the same output size")

    def binary(self, node, label, ins):
        acts = [v for v in ins if v.kind == "act"]
        if len(acts) == 1:
            self.fold(node, label, acts[0], "a constant operand, into " + self.producer(acts[0]))
            return
        a, b = ins
        out = self.elems(node.output[0])
        if out is None:
            raise Unsupported(f"the shape of '{node.output[0]}' is not known after shape inference")
        if node.op_type == "Mul":
            for g, x in ((a, b), (b, a)):
                p = g.src.pending if g.src is not None else None
                if p is not None and g.elems == x.elems == out and x.same(p) and not g.src.uses:
                    # x * act(x): the Erf or Sigmoid pattern, one layer
                    g.src.pending = None
                    g.src.nodes.append(label)
                    self.vals[node.output[0]] = g.alias(out)
                    self.note("fused", node, label, f"{g.src.pattern}, into '{g.src.name}'")
                    return
        ltype = BINARY[node.op_type]
        e = self.per_sample(out, "the output")
        layer = self.add_layer(node, label, ltype, dict(elements=e), [a, b], [e, e], e)
        if ltype != node.op_type.lower():
            layer.notes.append(f"{node.op_type} counted as {ltype}")
            self.note("counted as", node, label, f"{node.op_type} counted as {ltype}")

    def unary(self, node, label, ins):
        x = ins[0]
        if x.kind != "act" or any(v is not None and v.kind == "act" for v in ins[1:]):
            raise Unsupported("a second operand computed at run time")
        ltype, counted = UNARY[node.op_type]
        out = self.elems(node.output[0]) or x.elems
        if out is None:
            raise Unsupported(f"the shape of '{node.input[0]}' is not known after shape inference")
        e = self.per_sample(out, "the output")
        layer = self.add_layer(node, label, ltype, dict(elements=e), [x], [e], e)
        if node.op_type in ("Erf", "Sigmoid"):
            # x * Sigmoid(x) is silu; x * 0.5 * (1 + Erf(x / sqrt 2)) is gelu: wait for the Mul
            layer.pending, layer.pending_note = x, counted
            layer.pattern = ("x * Sigmoid(x) as silu" if node.op_type == "Sigmoid"
                             else "x * 0.5 * (1 + Erf(x / sqrt 2)) as gelu")
        elif counted:
            layer.notes.append(counted)
            self.note("counted as", node, label, counted)

    # -- attention

    def fuse_attention(self):
        """Q/K/V projections, Q.K^T, Softmax, P.V and the output projection as one attention layer."""
        for sm in list(self.layers):
            if sm.removed or sm.type != "softmax":
                continue
            parts = self.attention_parts(sm)
            if parts is None:
                continue
            lq, lk, lv, qk, pv, lo = parts
            seq, d_model = lq.keys["tokens"], lq.keys["in_features"]
            heads, hd = qk.keys.get("repeat", 1), qk.keys["k"]
            keys = dict(seq=seq, d_model=d_model, heads=heads)
            if heads * hd != d_model:
                keys["head_dim"] = hd
            group = [lq, lk, lv, qk, sm, pv, lo]
            names = [l.nodes[0] for l in group]
            prefix = os.path.commonprefix(names)
            cut = max(prefix.rfind(ch) for ch in "/._")
            base = prefix[:cut] if cut > 0 else sm.nodes[0] + "_attention"
            att = Layer(None, "attention", keys, None, "attention", [lq.reads[0]], [seq * d_model], seq * d_model)
            att.nodes = [n for l in group for n in l.nodes]
            att.notes = [f"self-attention of nodes {', '.join(names)}"]
            att.uses, att.escapes = lo.uses, lo.escapes
            for l in group:
                self.names.discard(l.name)
                l.removed, l.replaced_by = True, att
            src = lq.reads[0].src
            if src is not None:
                src.uses = [u for u in src.uses if u not in (lq, lk, lv)] + [att]
            att.name = self.unique(base)
            self.layers[self.layers.index(lo)] = att
            self.layers = [l for l in self.layers if not l.removed]
            self.report.append(("fused", "attention", att.name, ", ".join(names)))

    def attention_parts(self, sm):
        def only(layer, reader):
            return not layer.escapes and layer.uses == [reader]

        def whole(v, layer_type=None):
            s = v.src
            if s is None or s.removed or v.elems != s.out_elems * self.mb:
                return None
            return s if layer_type is None or s.type == layer_type else None

        qk = whole(sm.reads[0], "matmul")
        if qk is None or qk.keys["a"] != "activation" or qk.keys["b"] != "activation" or not only(qk, sm):
            return None
        if len(sm.uses) != 1 or sm.escapes:
            return None
        pv = sm.uses[0]
        if pv.type != "matmul" or pv.keys["b"] != "activation" or whole(pv.reads[0]) is not sm:
            return None
        if len(pv.uses) != 1 or pv.escapes:
            return None
        lo = pv.uses[0]
        lq, lk, lv = whole(qk.reads[0], "linear"), whole(qk.reads[1], "linear"), whole(pv.reads[1], "linear")
        if None in (lq, lk, lv) or lo.type != "linear" or whole(lo.reads[0]) is not pv:
            return None
        if not (only(lq, qk) and only(lk, qk) and only(lv, pv)):
            return None
        x = lq.reads[0]
        if not (x.same(lk.reads[0]) and x.same(lv.reads[0])):
            return None
        s, d = lq.keys["tokens"], lq.keys["in_features"]
        h, hd = qk.keys.get("repeat", 1), qk.keys["k"]
        if not (qk.keys["m"] == qk.keys["n"] == s and pv.keys == dict(m=s, k=s, n=hd, a="activation",
                                                                      b="activation", **({"repeat": h} if h != 1 else {}))):
            return None
        for l in (lq, lk, lv):
            if l.keys != dict(in_features=d, out_features=h * hd, tokens=s):
                return None
        if lo.keys != dict(in_features=h * hd, out_features=d, tokens=s):
            return None
        return lq, lk, lv, qk, pv, lo


# ---------------------------------------------------------------------------- writing

def printable(s):
    """s with every character outside printable ASCII shown as ?: for comments and messages."""
    return "".join(c if " " <= c <= "~" else "?" for c in s)


def yaml_name(s):
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", s) and s.lower() not in ("true", "false", "null", "yes", "no",
                                                                            "on", "off", "y", "n"):
        return s
    return '"' + s + '"'


def final(layer):
    while layer.replaced_by is not None:
        layer = layer.replaced_by
    return layer


def render(conv, model, path, yaml_batch):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = sanitize(model.graph.name or stem)
    lines = [f"# Converted from {os.path.basename(path)} by scripts/onnx2workload.py"
             f" (producer: {(model.producer_name + ' ' + model.producer_version).strip() or 'unknown'}; opsets: "
             + ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import) + ").",
             f"# {plural(len(model.graph.node), 'node')} as {plural(len(conv.layers), 'layer')}; shapes per sample, the batch"
             f" ({conv.mb} in the model) divided out. Biases and BatchNorm are folded."]
    counts = {}
    for cat, op, _, _ in conv.report:
        counts.setdefault(cat, {}).setdefault(op, 0)
        counts[cat][op] += 1
    for cat in sorted(counts):
        ops = ", ".join(f"{op} x{n}" for op, n in sorted(counts[cat].items()))
        lines.append(f"# {cat}: {ops}")
    for op, label, why in conv.unsupported:
        lines.append(f"# UNSUPPORTED, left out: {op} '{label}': {why}")
    lines += [f"name: {yaml_name(name)}", f"batch: {yaml_batch}", "layers:"]
    for l in conv.layers:
        if l.notes:
            lines.append("  # " + "; ".join(l.notes))
        items = [f"name: {yaml_name(l.name)}", f"type: {l.type}"] + [f"{k}: {v}" for k, v in l.keys.items()]
        if l.inputs:
            items.append("inputs: [" + ", ".join(yaml_name(n) for n in l.inputs) + "]")
        lines.append("  - {" + ", ".join(items) + "}")
    return "\n".join(printable(l) for l in lines) + "\n"


def find_tpusim():
    """The tpusim that checks what is written: $TPUSIM, else build/tpusim beside this script, else tpusim on PATH."""
    if os.environ.get("TPUSIM"):
        return os.environ["TPUSIM"]
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tpusim")
    return built if os.access(built, os.X_OK) else shutil.which("tpusim")


def check_with_tpusim(model_path, path, shown):
    """`tpusim lower` on path (shown as shown): what tpusim refuses is bad input, with tpusim's reason."""
    tpusim = find_tpusim()
    if not tpusim:
        print(f"{PROG}: note: no tpusim found (set TPUSIM): the workload is not checked against its limits",
              file=sys.stderr)
        return
    try:
        r = subprocess.run([tpusim, "lower", "-w", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, errors="replace")
    except OSError as e:
        raise BadInput(f"{tpusim}: expected a tpusim to check the workload with, found {e.strerror.lower()}")
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[0].replace(path, shown)
        raise BadInput(f"{model_path}: expected a workload that tpusim takes, found one it refuses: {why}")


def write_checked(model_path, out, text):
    """text to out (None: standard output) once tpusim took it, from a temporary file beside out; nothing left on error."""
    d = os.path.dirname(os.path.abspath(out)) if out else None
    tmpdir = None
    try:
        if out is None:
            tmpdir = tempfile.TemporaryDirectory(prefix="onnx2workload.")
            d = tmpdir.name
        fd, tmp = tempfile.mkstemp(prefix=".onnx2workload.", suffix=".yaml", dir=d)
    except OSError as e:
        raise BadInput(f"{out}: expected a writable path, found {e.strerror.lower()}")
    try:
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        except OSError as e:
            raise BadInput(f"{out or tmp}: expected a writable path, found {e.strerror.lower()}")
        check_with_tpusim(model_path, tmp, out or "<standard output>")
        if out is None:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except (OSError, ValueError) as e:
                raise BadInput(f"standard output: expected to write the workload, found {e}")
            return
        try:
            os.replace(tmp, out)
        except OSError as e:
            raise BadInput(f"{out}: expected a writable path, found {e.strerror.lower()}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if tmpdir is not None:
            tmpdir.cleanup()


def print_report(conv, path, quiet):
    width = max([len(op) for _, op, _, _ in conv.report] + [8])
    for cat, op, label, detail in conv.report:
        if quiet and cat != "unsupported":
            continue
        print(printable(f"  {cat:<13} {op:<{width}} {label}" + (f"  ({detail})" if detail else "")), file=sys.stderr)


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= BATCH_MAX:
        raise argparse.ArgumentTypeError(f"expected an integer in [1, {BATCH_MAX}], found {text!r}")
    return v


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
            print_report(conv, args.model, args.quiet)
            print(f"{PROG}: {args.model}: {len(conv.unsupported)} unsupported node"
                  f"{'s' if len(conv.unsupported) != 1 else ''} (listed above); nothing written "
                  f"(--allow-unsupported writes the rest)", file=sys.stderr)
            return 1
        if not conv.layers:
            raise BadInput(f"{args.model}: expected a node that becomes a layer, found none")
        text = render(conv, model, args.model, args.batch or mb)
        write_checked(args.model, args.output, text)
    except BadInput as e:
        print(printable(f"{PROG}: {e}"), file=sys.stderr)
        return 2
    print_report(conv, args.model, args.quiet)
    print(f"{PROG}: {args.model}: {plural(len(model.graph.node), 'node')}, {plural(n_layers, 'layer')}"
          + (f", {len(conv.unsupported)} unsupported left out" if conv.unsupported else "")
          + (f" -> {args.output}" if args.output else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
