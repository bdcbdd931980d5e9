"""
onnx_lower.py - the op-by-op translation of an ONNX graph into tpusim
workload layers, for onnx2workload.py (which reads the model, checks it and
writes the YAML; its docstring says what becomes what).

Converter(model, path, model_batch, fuse).run() walks a model whose shapes are
inferred: its layers, its report (one line per node that is not a layer of its
own) and its unsupported nodes. The bounds are limit.h's, in workload_out.py
with what the importers share. BadInput is bad input (exit status 2),
Unsupported a node with no workload layer.
"""
import os

import onnx

from workload_out import (BadInput, Unsupported, activations_matmul, check_keys, matmul_layer, prod, resolve_inputs,
                          sym_padding, unique)

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
        return unique(self.names, label)

    def note(self, category, node, label, detail=""):
        self.report.append((category, node.op_type, label, detail))

    def add_layer(self, node, label, ltype, keys, reads, read_sizes, out_elems):
        check_keys(ltype, keys)
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
        prev, seen = None, set()
        for l in self.layers:
            resolve_inputs(l, prev, self.mb, self.report, seen)
            prev = l

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
        p, exact = sym_padding(pads, [h, wd], [ekh, ekw], strides[0], ys[2:])
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
            activations_matmul(self, node, label, m, k, n, pb, a, b, "the rows of A")
    
    matmul_layer = matmul_layer

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
            p, exact = sym_padding(pads, [h, w], ks, strides[0], ys[2:])
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
