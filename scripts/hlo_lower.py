"""
hlo_lower.py - the op-by-op translation of a StableHLO module (read by
hlo_parse.py) into tpusim workload layers, for hlo2workload.py (which writes
the YAML; its docstring says what becomes what).

Converter(module, inputs).run() walks the entry function, inlining the
functions it calls: its layers, its report (one line per op that is not a
layer of its own) and its unsupported ops, each with its position in the
text and its source location. A function argument is a weight unless it is
one of the inputs (argument numbers; the first dimension of the first is the
batch), as an ONNX initializer is. BadInput is bad input (exit status 2),
Unsupported an op with no workload layer.
"""
import re

from workload_out import (BadInput, Unsupported, activations_matmul, check_keys, matmul_layer, plural, prod,
                          resolve_inputs, sym_padding, unique)

DIALECTS = ("stablehlo.", "chlo.", "mhlo.")
SHAPE_ONLY = {"reshape", "transpose", "convert", "bitcast_convert", "copy", "optimization_barrier",
              "dynamic_reshape"}
CONSTANT = {"constant", "iota"}
DATA_MOVEMENT = {"broadcast_in_dim", "broadcast", "concatenate", "slice", "dynamic_slice", "dynamic_update_slice",
                 "gather", "pad", "reverse"}
RETURN = {"return", "func.return", "stablehlo.return"}
CALL = {"call", "func.call"}
# op: (layer type with one activation operand, with two or more); None: a constant operand folded
ELEMENTWISE = {
    "add": (None, "add"), "subtract": (None, "add"), "multiply": (None, "mul"), "divide": (None, "mul"),
    "maximum": ("relu", "add"), "minimum": ("relu", "add"), "clamp": ("relu", "add"),
    "compare": ("relu", "add"), "select": ("relu", "add"), "and": ("relu", "add"), "or": ("relu", "add"),
    "xor": ("relu", "add"), "power": ("gelu", "mul"), "remainder": ("relu", "add"), "atan2": ("gelu", "mul"),
    **{op: ("gelu", None) for op in ("exponential", "exponential_minus_one", "log", "log_plus_one", "tanh",
                                     "rsqrt", "sqrt", "cbrt", "cosine", "sine", "tan", "erf", "erf_inv")},
    "logistic": ("silu", None),
    **{op: ("relu", None) for op in ("negate", "abs", "sign", "floor", "ceil", "round_nearest_even",
                                     "round_nearest_afz", "not", "is_finite", "popcnt", "real", "imag")},
}
REDUCE_BODY = {"add", "maximum", "minimum", "multiply", "and", "or"}
# op: how many operands it takes (the checks a verifier would make before us)
ARITY = {**{op: 1 for op in SHAPE_ONLY}, **{op: 2 for op, (_, two) in ELEMENTWISE.items() if two is not None},
         **{op: 1 for op, (_, two) in ELEMENTWISE.items() if two is None},
         "dot": 2, "dot_general": 2, "convolution": 2, "reduce_window": 2, "select": 3, "clamp": 3}


class Val:
    """What a StableHLO value is to the workload."""

    def __init__(self, kind, ty, src=None, gin=None, via=None, zero=False):
        self.kind = kind              # "const" or "act"
        self.ty = ty                  # its Type
        self.elems = ty.elems if ty is not None else None
        self.src = src                # the Layer whose whole output this is, when one is
        self.gin = gin                # the function argument it is, when it is one
        self.via = via                # else what wrote it, as messages show it
        self.zero = zero              # a constant known to be 0 (max(x, 0) is relu)


class Layer:
    """One workload layer, in the order the YAML lists them."""

    def __init__(self, name, ltype, keys, label, reads, read_sizes, out_elems):
        self.name, self.type, self.keys, self.label = name, ltype, keys, label
        self.reads = reads            # Val per activation operand, operand order
        self.read_sizes = read_sizes  # elements per sample the workload reads for each
        self.out_elems = out_elems    # elements per sample it writes
        self.notes = []
        self.inputs = None
        self.replaced_by = None


def short(name):
    for d in DIALECTS:
        if name.startswith(d):
            return name[len(d):]
    return name


def op_label(op, prefix):
    """What an op is called: its kind and first result (dot_general_0 for %0), after the calls it is inlined from."""
    return prefix + short(op.name) + (f"_{op.results[0][1:].split('#')[0]}" if op.results else "")


def loc_of(module, text, depth=0):
    """The file:line:col a loc(...) text comes from, following #locN aliases, callsites and names; else None."""
    if text is None or depth > 32:
        return None
    m = re.search(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)', text)
    ref = re.search(r"#loc\d*", text)
    if m and (ref is None or m.start() < ref.start()):
        return f"{m.group(1)}:{m.group(2)}:{m.group(3)}"
    if ref:
        return loc_of(module, module.locs.get(ref.group()), depth + 1)
    return None


def find_softmaxes(ops):
    """
    Softmax as jax.nn.softmax writes it: e = exp(x - max(x)) (the max
    reduced, broadcast back, maybe clamped by a constant), e / sum(e).
    Returns {index of the divide: x} and {index of each other op: the
    divide's index}, for every instance whose values nothing else reads.
    """
    producer = {r: i for i, op in enumerate(ops) for r in op.results}
    readers = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            readers.setdefault(v, set()).add(i)

    def kind(v, at):
        """The op before op at that writes v, and its kind (none after it: a use before the definition)."""
        i = producer.get(v)
        return (i, short(ops[i].name)) if i is not None and i < at else (None, None)

    def const(v, at):
        i, k = kind(v, at)
        return k in CONSTANT or (k in ("broadcast_in_dim", "reshape") and len(ops[i].operands) == 1
                                 and const(ops[i].operands[0], i))

    def back(v, at, part):
        """v after the broadcasts, reshapes and constant clamps that bring a reduced value back to full size."""
        while True:
            i, k = kind(v, at)
            if k in ("broadcast_in_dim", "reshape") and len(ops[i].operands) == 1:
                v = ops[i].operands[0]
            elif k in ("maximum", "minimum") and len(ops[i].operands) == 2 and const(ops[i].operands[0], i):
                v = ops[i].operands[1]
            elif k in ("maximum", "minimum") and len(ops[i].operands) == 2 and const(ops[i].operands[1], i):
                v = ops[i].operands[0]
            else:
                return v, at
            part.append(i)
            at = i

    def reduce_of(v, at, body, part):
        i, k = kind(*back(v, at, part))
        if k != "reduce" or [short(b) for b in ops[i].body] != [body] or len(ops[i].operands) != 2:
            return None
        part.append(i)
        return ops[i].operands[0]

    out, parts = {}, {}
    for d, op in enumerate(ops):
        if short(op.name) != "divide" or len(op.operands) != 2 or len(op.results) != 1:
            continue
        part = []
        e = op.operands[0]
        if reduce_of(op.operands[1], d, "add", part) != e:
            continue
        ie, k = kind(e, d)
        if k != "exponential" or len(ops[ie].operands) != 1:
            continue
        part.append(ie)
        x = ops[ie].operands[0]
        isub, k = kind(x, ie)
        if k == "subtract" and len(ops[isub].operands) == 2:
            sub = []
            if reduce_of(ops[isub].operands[1], isub, "maximum", sub) == ops[isub].operands[0]:
                part += [isub] + sub
                x = ops[isub].operands[0]
        want = {i: 1 for i in part}
        want[ie] = 2                            # e: read by the sum and the divide
        inside = set(part) | {d}
        if all(all(readers.get(r, set()) <= inside and len(readers.get(r, set())) <= want[i] for r in ops[i].results)
               for i in part):
            out[d] = x
            for i in part:
                parts[i] = d
    return out, parts


class Converter:
    def __init__(self, module, inputs):
        self.m = module
        self.src = module.src
        self.path = self.src.path
        self.entry = self.entry_func()
        if not self.entry.args:
            raise self.src.error(self.entry.off, f"func.func {self.entry.name}", "at least one argument (the input)",
                                 "none")
        for n in inputs:
            if not 0 <= n < len(self.entry.args):
                raise BadInput(f"{self.path}: --input {n}: expected an argument number of {self.entry.name} "
                               f"(0 to {len(self.entry.args) - 1}), found none of that number")
        self.inputs = inputs
        first = self.entry.arg_types[inputs[0]]
        if first.shape is None:
            raise self.src.error(self.entry.off, f"{self.entry.name} argument {self.entry.args[inputs[0]]}",
                                 "a tensor (the input)", first.text)
        self.mb = first.shape[0] if first.shape else 1
        if self.mb < 1:
            raise self.src.error(self.entry.off, f"{self.entry.name} argument {self.entry.args[inputs[0]]}",
                                 "a batch of at least 1 in its first dimension", first.text)
        self.layers = []
        self.names = set()
        self.report = []               # (category, op, label, detail)
        self.unsupported = []          # (op, label, the message: where, what, why)
        self.dtypes = set()
        self.n_ops = 0
        self.patterns = {}

    def entry_func(self):
        f = self.m.funcs
        return f.get("@main") or next(iter(f.values()))

    # -- helpers

    def where(self, op, label):
        """file:line:col: op 'label' (from its source location), as messages name an op."""
        src = loc_of(self.m, op.loc)
        return f"{self.src.pos(op.pos_off)}: {op.name} '{label}'" + (f" (from {src})" if src else "")

    def per_sample(self, n, what):
        if n % self.mb:
            raise Unsupported(f"{what} ({n}) is not a multiple of the batch ({self.mb}, the first dimension of "
                              f"the first input)")
        return n // self.mb

    def note(self, category, op, label, detail=""):
        self.report.append((category, op.name, label, detail))

    def add_layer(self, op, label, ltype, keys, reads, read_sizes, out_elems):
        check_keys(ltype, keys)
        layer = Layer(unique(self.names, label), ltype, keys, label, reads, read_sizes, out_elems)
        src = loc_of(self.m, op.loc)
        if src:
            layer.notes.append(src)
        self.layers.append(layer)
        ty = op.out_types[0]
        whole = ty.elems == out_elems * self.mb
        self.vals[op.results[0]] = Val("act", ty, src=layer, via=None if whole else f"{op.name} '{label}'")
        return layer

    def attr(self, op, pattern, what, expected):
        m = re.search(pattern, op.text)
        if not m:
            raise self.src.error(op.pos_off, f"{op.name} {what}", expected, "none")
        return m

    def ints(self, op, m, group):
        """The integers of a match group: 1, [1, 2], [[1, 1], [1, 1]], array<i64: 1, 2>, dense<1>; positioned errors."""
        text = re.sub(r"^\s*(?:array<\w+:?|dense<)", "", m.group(group)).rstrip(">")
        if re.search(r"[^\s\d,\[\]-]", text):
            raise self.src.error(op.off + m.start(group), op.name, "a list of integers", f"'{m.group(group).strip()}'")
        return [int(v) for v in re.findall(r"-?\d+", text)]

    def dims_attr(self, op, names, default=None):
        """The integers of the first of names (`name = [..]`, `name = array<i64: ..>`, `name = dense<..>`)."""
        for n in names:
            m = re.search(rf"\b{n}\s*=\s*(\[[\[\]\d,\s-]*\]|array<i64(?::[\d,\s-]*)?>|dense<[\[\]\d,\s-]*>|-?\d+)",
                          op.text)
            if m:
                return self.ints(op, m, 1), m.group(1).startswith("dense<")
        if default is not None:
            return default, False
        raise self.src.error(op.pos_off, op.name, f"an attribute {names[0]}", "none")

    # -- the walk

    def run(self):
        env = {}
        for n, (a, ty) in enumerate(zip(self.entry.args, self.entry.arg_types)):
            name = self.entry.arg_names[n]
            shown = f"{a} ({name})" if name else a
            env[a] = Val("act", ty, gin=shown) if n in self.inputs else Val("const", ty)
            if n in self.inputs and ty.dtype:
                self.dtypes.add(ty.dtype)
        self.walk(self.entry, env, "", [self.entry.name])
        prev, seen = None, set()
        for l in self.layers:
            resolve_inputs(l, prev, self.mb, self.report, seen)
            prev = l

    def walk(self, func, env, prefix, stack):
        """Converts func's ops with env (name: Val), their labels after prefix; returns the Vals it returns."""
        if func.name not in self.patterns:
            self.patterns[func.name] = find_softmaxes(func.ops)
        self.vals = env
        for i, op in enumerate(func.ops):
            if op.name in RETURN:
                return [self.value(op, v) for v in op.operands]
            ins = [self.value(op, v) for v in op.operands]
            self.check_types(op, ins)
            label = op_label(op, prefix)
            if op.name not in CALL:
                self.n_ops += 1
            try:
                self.walk_op(func, i, op, label, ins, prefix, stack)
            except Unsupported as e:
                self.unsupported.append((op.name, label, f"{self.where(op, label)}: {e}"))
                self.report.append(("unsupported", op.name, label, f"{self.src.pos(op.pos_off)}: {e}"))
                for r, t in zip(op.results, op.out_types):
                    self.vals[r] = Val("act", t, via=f"unsupported {op.name} '{label}'")
        raise self.src.error(func.off, f"func.func {func.name}", "a return at the end of its body", "none")

    def walk_op(self, func, i, op, label, ins, prefix, stack):
        """One op of func (its i-th): a layer, a note in the report, or Unsupported."""
        sm_out, sm_part = self.patterns[func.name]
        if not op.results:
            raise Unsupported("an op without results (a side effect)")
        if any(v.ty is None or v.ty.shape is None for v in ins) or any(t.shape is None for t in op.out_types):
            raise Unsupported("a value that is no tensor (a token, a tuple)")
        if i in sm_part:
            self.vals.update({r: Val("act", t, via=f"{op.name} '{label}'") for r, t in zip(op.results, op.out_types)})
            self.note("fused", op, label, f"a softmax written out, into '{op_label(func.ops[sm_part[i]], prefix)}'")
            return
        if i in sm_out:
            x = self.vals[sm_out[i]]
            if x.kind != "act":
                raise Unsupported("a softmax of a constant")
            e = self.per_sample(x.elems, "the input")
            self.add_layer(op, label, "softmax", dict(elements=e), [x], [e], e)
            self.note("fused", op, label, "the last op of a softmax written out")
            return
        self.convert(op, short(op.name), label, ins, stack)

    def value(self, op, name):
        v = self.vals.get(name)
        if v is None:
            raise self.src.error(op.pos_off, op.name, "operands defined earlier", f"{name}, which is not")
        return v

    def check_types(self, op, ins):
        """The signature's operand types are the operands' (when it lists one per operand), its result types one per result."""
        if len(op.in_types) == len(ins):
            for name, v, (t, off) in zip(op.operands, ins, op.in_types):
                if v.ty is not None and t.shape is not None and (t.shape, t.dtype) != (v.ty.shape, v.ty.dtype):
                    raise self.src.error(off, f"{op.name} operand {name}", f"its type, {v.ty.text}", t.text)
        want = ARITY.get(short(op.name)) if op.name.startswith(DIALECTS) else None
        if want is not None and len(ins) != want:
            raise self.src.error(op.pos_off, op.name, plural(want, "operand"), len(ins))
        if op.results and len(op.out_types) != len(op.results):
            raise self.src.error(op.pos_off, op.name, f"{len(op.results)} result types",
                                 f"{len(op.out_types)}")
        for t in op.out_types:
            if t.dtype:
                self.dtypes.add(t.dtype)

    def convert(self, op, kind, label, ins, stack):
        acts = [v for v in ins if v.kind == "act"]
        if op.name in CALL:
            return self.call(op, label, ins, stack)
        if not op.name.startswith(DIALECTS):
            raise Unsupported(f"an op of another dialect than stablehlo and chlo ({op.name})")
        if kind in CONSTANT or not acts:
            zero = kind == "constant" and re.match(r"\s*dense<(?:-?0(?:\.0*)?(?:e[+-]?\d+)?|false)>", op.text)
            zero = zero or (kind in ("broadcast_in_dim", "reshape", "convert") and ins and ins[0].zero)
            for r, t in zip(op.results, op.out_types):
                self.vals[r] = Val("const", t, zero=bool(zero))
            self.note("constant", op, label)
            return
        if kind in SHAPE_ONLY:
            self.vals[op.results[0]] = Val("act", op.out_types[0], src=ins[0].src, gin=ins[0].gin, via=ins[0].via)
            self.note("shape only", op, label)
            return
        if kind in DATA_MOVEMENT:
            for r, t in zip(op.results, op.out_types):
                self.vals[r] = Val("act", t, via=f"{op.name} '{label}'")
            self.note("data movement", op, label, "what it writes has no layer")
            return
        handler = {"dot_general": self.dot_general, "dot": self.dot, "convolution": self.conv,
                   "reduce": self.reduce, "reduce_window": self.reduce_window}.get(kind)
        if handler:
            return handler(op, label, ins)
        if kind in ELEMENTWISE:
            return self.elementwise(op, kind, label, ins, acts)
        raise Unsupported(f"no workload layer type for {op.name}")

    def call(self, op, label, ins, stack):
        f = self.m.funcs.get(op.callee)
        if f is None:
            raise self.src.error(op.pos_off, op.name, "a function of the module", f"{op.callee}, which is not one")
        if f.name in stack:
            raise Unsupported(f"a recursive call of {f.name}")
        if len(f.args) != len(ins):
            raise self.src.error(op.pos_off, op.name, f"{len(f.args)} operands for {f.name}", f"{len(ins)}")
        outer = self.vals
        outs = self.walk(f, dict(zip(f.args, ins)), label + ".", stack + [f.name])
        self.vals = outer
        if len(outs) != len(op.results):
            raise self.src.error(op.pos_off, op.name, f"{len(op.results)} results from {f.name}", f"{len(outs)}")
        self.vals.update(zip(op.results, outs))
        self.note("inlined", op, label, f"the body of {f.name}")

    # -- layers

    def dot(self, op, label, ins):
        sa, sb = ins[0].ty.shape, ins[1].ty.shape
        if not 1 <= len(sa) <= 2 or not 1 <= len(sb) <= 2:
            raise self.src.error(op.pos_off, op.name, "operands of rank 1 or 2", f"ranks {len(sa)} and {len(sb)}")
        self.product(op, label, ins, [], [], [len(sa) - 1], [0])

    def dot_general(self, op, label, ins):
        t = op.text
        pretty = re.search(r"contracting_dims\s*=\s*(\[[^\]]*\])\s*x\s*(\[[^\]]*\])", t)
        if pretty:
            lc, rc = self.ints(op, pretty, 1), self.ints(op, pretty, 2)
            b = re.search(r"batching_dims\s*=\s*(\[[^\]]*\])\s*x\s*(\[[^\]]*\])", t)
            lb, rb = (self.ints(op, b, 1), self.ints(op, b, 2)) if b else ([], [])
        else:
            self.attr(op, r"dot_dimension_numbers|contracting_dim", "contracting_dims",
                      "contracting_dims = [..] x [..] or dot_dimension_numbers = #stablehlo.dot<..>")
            lc = self.dims_attr(op, ["lhs_contracting_dimensions"], [])[0]
            rc = self.dims_attr(op, ["rhs_contracting_dimensions"], [])[0]
            lb = self.dims_attr(op, ["lhs_batching_dimensions"], [])[0]
            rb = self.dims_attr(op, ["rhs_batching_dimensions"], [])[0]
        self.product(op, label, ins, lb, rb, lc, rc)

    def product(self, op, label, ins, lb, rb, lc, rc):
        """lhs . rhs with batch, contracting and free dimensions: one GEMM of M x K by K x N per batch."""
        a, b = ins
        sa, sb = a.ty.shape, b.ty.shape
        for dims, s, side in ((lb + lc, sa, "lhs"), (rb + rc, sb, "rhs")):
            if len(set(dims)) != len(dims) or any(not 0 <= d < len(s) for d in dims):
                raise self.src.error(op.pos_off, op.name, f"distinct {side} dimensions in 0 to {len(s) - 1}",
                                     f"{dims}")
        if len(lb) != len(rb) or len(lc) != len(rc) or [sa[d] for d in lb] != [sb[d] for d in rb] or \
                [sa[d] for d in lc] != [sb[d] for d in rc]:
            raise self.src.error(op.pos_off, op.name, "batching and contracting dimensions of equal sizes",
                                 f"lhs {[sa[d] for d in lb]} x {[sa[d] for d in lc]}, rhs {[sb[d] for d in rb]} x "
                                 f"{[sb[d] for d in rc]}")
        fa = [d for d in range(len(sa)) if d not in lb + lc]
        fb = [d for d in range(len(sb)) if d not in rb + rc]
        want = [sa[d] for d in lb] + [sa[d] for d in fa] + [sb[d] for d in fb]
        got = op.out_types[0].shape
        if got != want:
            raise self.src.error(op.pos_off, op.name, f"a result of shape {want} (batch, lhs free, rhs free)",
                                 op.out_types[0].text)
        pb, k = prod([sa[d] for d in lb]), prod([sa[d] for d in lc])
        m, n = prod([sa[d] for d in fa]), prod([sb[d] for d in fb])
        if a.kind == "act" and b.kind == "const" and not lb:
            tokens = self.per_sample(m, "the rows of lhs")
            self.add_layer(op, label, "linear", dict(in_features=k, out_features=n, tokens=tokens), [a],
                           [tokens * k], tokens * n)
        elif a.kind == "act" and b.kind == "const":
            mm = self.per_sample(m, "the rows of lhs per weight matrix")
            self.matmul_layer(op, label, mm, k, n, pb, "activation", "weight", [a], [mm * k * pb])
        elif a.kind == "const":
            nn = self.per_sample(n, "the columns of rhs per weight matrix")
            self.matmul_layer(op, label, m, k, nn, pb, "weight", "activation", [b], [k * nn * pb])
        else:
            activations_matmul(self, op, label, m, k, n, pb, a, b, "the rows of lhs")

    matmul_layer = matmul_layer

    def layout(self, op, m, group, letters):
        """The positions of a conv layout's letters ([b, 0, 1, f]): letter: dimension."""
        items = [x.strip() for x in m.group(group).strip("[]").split(",")]
        if sorted(items) != sorted(letters):
            raise self.src.error(op.off + m.start(group), f"{op.name} dim_numbers",
                                 f"a 2-D layout of {', '.join(letters)}", f"[{', '.join(items)}]")
        return {x: i for i, x in enumerate(items)}

    def conv(self, op, label, ins):
        x, w = ins[0], ins[1]
        m = self.attr(op, r"(?:dim_numbers\s*=\s*|#stablehlo\.conv<)(\[[^\]]*\])\s*x\s*(\[[^\]]*\])\s*->\s*(\[[^\]]*\])",
                      "dim_numbers", "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]")
        if len(m.group(1).split(",")) != 4:
            raise Unsupported(f"a {len(m.group(1).split(',')) - 2}-D convolution (conv2d is 2-D)")
        li = self.layout(op, m, 1, ["b", "f", "0", "1"])
        ki = self.layout(op, m, 2, ["i", "o", "0", "1"])
        oi = self.layout(op, m, 3, ["b", "f", "0", "1"])
        if w.kind != "const":
            raise Unsupported("weights computed at run time (the kernel is not a weight)")
        xs, ws, ys = x.ty.shape, w.ty.shape, op.out_types[0].shape
        if len(xs) != 4 or len(ws) != 4 or len(ys) != 4:
            raise self.src.error(op.pos_off, op.name, "4-D input, kernel and result", f"{xs}, {ws} and {ys}")
        if xs[li["b"]] != self.mb:
            raise Unsupported(f"an input with {xs[li['b']]} in its batch dimension, not the batch ({self.mb})")
        h, wd, c = xs[li["0"]], xs[li["1"]], xs[li["f"]]
        kh, kw, ic, oc = ws[ki["0"]], ws[ki["1"]], ws[ki["i"]], ws[ki["o"]]
        oh, ow = ys[oi["0"]], ys[oi["1"]]
        groups = self.dims_attr(op, ["feature_group_count"], [1])[0][0]
        bgroups = self.dims_attr(op, ["batch_group_count"], [1])[0][0]
        if bgroups != 1:
            raise Unsupported(f"batch_group_count {bgroups} (a weight gradient; conv2d has none)")
        if groups < 1 or c % groups or oc % groups or ic * groups != c or ys[oi["f"]] != oc:
            raise self.src.error(op.pos_off, op.name, f"a kernel of {c} / feature_group_count ({groups}) input "
                                 f"features and the result's {ys[oi['f']]} output features",
                                 f"{ic} and {oc}")
        stride = self.window(op, ["stride", "window_strides"], [1, 1])
        dil = self.window(op, ["rhs_dilate", "rhs_dilation"], [1, 1])
        lhs_dil = self.window(op, ["lhs_dilate", "lhs_dilation"], [1, 1])
        pad = self.window(op, ["pad", "padding"], [0, 0, 0, 0], 4)
        if lhs_dil != [1, 1]:
            raise Unsupported(f"lhs_dilate {lhs_dil} (a transposed convolution)")
        if re.search(r"\breverse\s*=\s*\[[^\]]*1", op.text) or re.search(r"window_reversal\s*=\s*array<i1:[^>]*true",
                                                                          op.text):
            raise Unsupported("a reversed window")
        if stride[0] != stride[1]:
            raise Unsupported(f"strides {stride} differ by dimension (conv2d has one stride)")
        if dil[0] != dil[1]:
            raise Unsupported(f"rhs_dilate {dil} differs by dimension (conv2d has one dilation)")
        ekh, ekw = dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1
        p, exact = sym_padding(pad, [h, wd], [ekh, ekw], stride[0], [oh, ow])
        keys = dict(in_h=h, in_w=wd, in_c=c, out_c=oc)
        if kh == kw:
            keys["kernel"] = kh
        else:
            keys.update(kernel_h=kh, kernel_w=kw)
        keys.update(stride=stride[0], padding=p)
        if dil[0] != 1:
            keys["dilation"] = dil[0]
        if groups != 1:
            keys["groups"] = groups
        layer = self.add_layer(op, label, "conv2d", keys, [x], [c * h * wd], oh * ow * oc)
        if not exact:
            layer.notes.append(f"pad [[{pad[0]}, {pad[1]}], [{pad[2]}, {pad[3]}]] as padding {p}: the same output size")

    def window(self, op, names, default, n=2):
        v, dense = self.dims_attr(op, names, default)
        if dense and len(v) == 1:
            v = v * n                         # a splat: dense<1> : tensor<2x2xi64>
        if len(v) != n or any(x < 0 for x in v) or (n == 2 and 0 in v):
            raise self.src.error(op.pos_off, f"{op.name} {names[0]}", f"{n} {'sizes' if n == 4 else 'positive integers'}",
                                 f"{v}")
        return v

    def reduce_kind(self, op):
        body = [short(b) for b in op.body]
        if len(body) != 1 or body[0] not in REDUCE_BODY:
            raise Unsupported(f"a {short(op.name)} whose body is {' and '.join(body) or 'empty'} (a vector op's is "
                              f"one of {', '.join(sorted(REDUCE_BODY))})")
        return body[0]

    def reduce(self, op, label, ins):
        body = self.reduce_kind(op)
        if len(ins) != 2 or len(op.results) != 1:
            raise Unsupported(f"a reduce of {len(ins) // 2} operands at once")
        x = ins[0]
        if x.kind != "act" or ins[1].kind != "const":
            raise Unsupported("a reduce whose initial value is computed at run time")
        e = self.per_sample(x.elems, "the input")
        layer = self.add_layer(op, label, "relu", dict(elements=e), [x], [e], e)
        text = f"a reduce ({body}) counted as relu: one lane op per element it reads"
        layer.notes.append(text)
        self.note("counted as", op, label, text)

    def reduce_window(self, op, label, ins):
        body = self.reduce_kind(op)
        if body not in ("add", "maximum") or len(ins) != 2 or ins[0].kind != "act":
            raise Unsupported(f"a reduce_window of {body} (pool is max or avg)")
        x = ins[0]
        xs, ys = x.ty.shape, op.out_types[0].shape
        if len(xs) != 4:
            raise Unsupported(f"a {len(xs) - 2}-D pooling (pool is 2-D)")
        win = self.dims_attr(op, ["window_dimensions"])[0]
        strides = self.dims_attr(op, ["window_strides"], [1] * 4)[0]
        pads, dense = self.dims_attr(op, ["padding"], [0] * 8)
        pads = pads * 8 if dense and len(pads) == 1 else pads
        dil = self.dims_attr(op, ["window_dilations"], [1] * 4)[0] + self.dims_attr(op, ["base_dilations"], [1] * 4)[0]
        if len(win) != 4 or len(strides) != 4 or len(pads) != 8 or min(win + strides) < 1 or min(pads) < 0:
            raise self.src.error(op.pos_off, op.name, "a positive window and stride and a padding for each of 4 "
                                 "dimensions", f"{win}, {strides} and {pads}")
        if len(ys) != 4:
            raise self.src.error(op.pos_off, op.name, "a 4-D result for a 4-D input", op.out_types[0].text)
        spatial = [d for d in range(1, 4) if win[d] != 1 or strides[d] != 1]
        if xs[0] != self.mb or win[0] != 1 or strides[0] != 1 or spatial not in ([1, 2], [2, 3]) or dil != [1] * 8:
            raise Unsupported(f"a window {win} with strides {strides} that is no 2-D pooling of NHWC or NCHW")
        hd, wdim = spatial
        cdim = ({1, 2, 3} - set(spatial)).pop()
        if win[hd] != win[wdim] or strides[hd] != strides[wdim]:
            raise Unsupported(f"a window {win} with strides {strides} that is not square (pool has one kernel size)")
        lohi = [pads[2 * hd], pads[2 * wdim], pads[2 * hd + 1], pads[2 * wdim + 1]]
        h, w, c = xs[hd], xs[wdim], xs[cdim]
        p, exact = sym_padding(lohi, [h, w], [win[hd]] * 2, strides[hd], [ys[hd], ys[wdim]])
        mode = "max" if body == "maximum" else "avg"
        keys = dict(in_h=h, in_w=w, in_c=c, kernel=win[hd], stride=strides[hd], padding=p, mode=mode)
        layer = self.add_layer(op, label, "pool", keys, [x], [c * h * w], prod(ys) // self.mb)
        if mode == "avg":
            layer.notes.append("a windowed sum: the divide after it is a constant scale, folded")
        if not exact:
            layer.notes.append(f"padding {lohi} as padding {p}: the same output size")

    def elementwise(self, op, kind, label, ins, acts):
        one, two = ELEMENTWISE[kind]
        if kind == "select":                    # the values it picks from first, then the predicate
            acts = [v for v in ins[1:] if v.kind == "act"] + [v for v in ins[:1] if v.kind == "act"]
        out = op.out_types[0]
        if len(acts) == 1 and one is None:
            v = acts[0]
            whole = v.src is not None and v.elems == out.elems
            self.vals[op.results[0]] = Val("act", out, src=v.src if whole else None, gin=v.gin if whole else None,
                                           via=v.via)
            self.note("folded", op, label, "a constant operand, into " +
                      (f"'{v.src.name}'" if v.src else f"argument {v.gin}" if v.gin else "no layer"))
            return
        ltype = one if len(acts) == 1 else two
        if ltype is None:
            raise Unsupported(f"{op.name} of {len(acts)} activations")
        e = self.per_sample(out.elems, "the output")
        reads = acts[:2] if ltype in ("add", "mul") else acts[:1]
        layer = self.add_layer(op, label, ltype, dict(elements=e), reads, [e] * len(reads), e)
        exact = (kind == ltype or (kind == "maximum" and ltype == "relu" and any(v.zero for v in ins))
                 or (kind, ltype) in (("multiply", "mul"),))
        if not exact:
            text = f"{op.name} counted as {ltype}"
            layer.notes.append(text)
            self.note("counted as", op, label, text)
