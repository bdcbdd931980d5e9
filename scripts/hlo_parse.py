"""
hlo_parse.py - a StableHLO module in MLIR's text form, as
jax.jit(f).lower(...).as_text() prints it, read into functions of ops, for
hlo_lower.py. Standard library only: no MLIR here, so the text is tokenized
and split into ops by hand, which is enough for what an importer needs of an
op (its name, results, operands, result types, attributes, the op names in
its regions, its position and its source location).

The pretty form (`%0 = stablehlo.add %a, %b : tensor<8xf32>`) and the generic
form (`%0 = "stablehlo.add"(%a, %b) : (tensor<8xf32>, tensor<8xf32>) ->
tensor<8xf32>`) both read. An op ends at the end of its line unless a bracket
is open, or the next line goes on with a region (`reducer`, `cond`, `do`).
A `{...}` whose first token starts a new line (or is a block label `^bb0`) is
a region, any other an attribute dictionary. Positions are line:col, from 1.
Errors are BadInput with `path:line:col: ...: expected ..., found ...`.
"""
import bisect
import re

from workload_out import BadInput, prod

TOKEN = re.compile(r"""
    (?P<nl>\n) | (?P<ws>[ \t\r\f]+) | (?P<comment>//[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<val>%[A-Za-z0-9_.$-]+(?:\#\d+)?)
  | (?P<sym>@[A-Za-z0-9_.$-]+|@"(?:[^"\\\n]|\\.)*")
  | (?P<hash>\#[A-Za-z0-9_.$-]+)
  | (?P<bang>![A-Za-z0-9_.$-]+)
  | (?P<blk>\^[A-Za-z0-9_.$-]+)
  | (?P<arrow>->)
  | (?P<num>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?))
  | (?P<id>[A-Za-z_][A-Za-z0-9_.$]*)
  | (?P<punct>[()\[\]{},:=*?+<>-])
""", re.X)
OPEN, CLOSE = "([{", ")]}"
RESULTS_MAX = 1 << 16                       # results of one op (%0:N): more is no program a tracer writes
CONTINUES = ("reducer", "cond", "do")       # a line that goes on with the op before: its regions
DTYPE = re.compile(r"(?:bf16|f16|f32|f64|tf32|f8E\w+|f4E\w+|f6E\w+|[su]?i\d+|ui\d+|index|complex<\w+>)")


class Tok:
    __slots__ = ("kind", "text", "off", "end", "nl", "arg", "match")

    def __init__(self, kind, text, off, end, nl):
        self.kind, self.text, self.off, self.end, self.nl = kind, text, off, end, nl
        self.arg = None               # the text inside the <...> that follows it without a space
        self.match = None             # for a bracket: the index of its partner


class Type:
    """A tensor type: its sizes and element type (None for a type that is no tensor, as !stablehlo.token)."""

    def __init__(self, shape, dtype, text):
        self.shape, self.dtype, self.text = shape, dtype, text

    @property
    def elems(self):
        return prod(self.shape) if self.shape is not None else None


class Op:
    def __init__(self):
        self.name = None              # "stablehlo.add", "func.call", "func.return"
        self.results = []             # value names, "%0" or "%0#1" for each of %0:2
        self.operands = []            # value names
        self.callee = None            # @name of a call
        self.out_types = []           # Type per result
        self.in_types = []            # (Type, offset) per operand, when the signature lists them
        self.body = []                # op names in its regions, in order (a reduce's stablehlo.add)
        self.text = ""                # the op's text, its regions blanked: where attributes are found
        self.off = 0                  # the file offset of text
        self.loc = None               # the text inside its trailing loc(...)
        self.pos_off = 0              # the file offset of its name, where messages point


class Func:
    def __init__(self, name, args, arg_types, arg_names, ops, off):
        self.name, self.args, self.arg_types, self.arg_names, self.ops, self.off = \
            name, args, arg_types, arg_names, ops, off


class Module:
    def __init__(self, name, funcs, locs):
        self.name = name              # @jit_f, or None
        self.funcs = funcs            # name: Func, in the file's order
        self.locs = locs              # #locN: the text inside its loc(...)
        self.src = None               # the Source, for positions


class Source:
    """The text, its tokens and the offsets of its lines, for positions."""

    def __init__(self, text, path):
        self.text, self.path = text, path
        self.lines = [0] + [m.end() for m in re.finditer("\n", text)]
        self.toks = tokenize(self)

    def pos(self, off):
        i = bisect.bisect_right(self.lines, off) - 1
        return f"{self.path}:{i + 1}:{off - self.lines[i] + 1}"

    def error(self, off, what, expected, found):
        return BadInput(f"{self.pos(off)}: {what}: expected {expected}, found {found}")


def angle_end(src, i):
    """The offset past the > that closes the < at i; -> and strings inside do not count."""
    s, depth, j = src.text, 0, i
    while j < len(s):
        c = s[j]
        if c == '"':
            m = re.compile(r'"(?:[^"\\\n]|\\.)*"').match(s, j)
            if not m:
                break
            j = m.end()
            continue
        if c == "-" and s.startswith("->", j):
            j += 2
            continue
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return j + 1
        elif c == "\n" and depth > 0 and s[i - 6:i] == "tensor":
            break
        j += 1
    raise src.error(i, "'<'", "a '>' to close it", "none")


def tokenize(src):
    s, toks, i, nl, stack = src.text, [], 0, True, []
    while i < len(s):
        m = TOKEN.match(s, i)
        if not m:
            raise src.error(i, "the text", "MLIR tokens", f"the character {s[i]!r}")
        kind, text = m.lastgroup, m.group()
        i = m.end()
        if kind == "nl":
            nl = True
            continue
        if kind in ("ws", "comment"):
            continue
        t = Tok(kind, text, m.start(), i, nl)
        nl = False
        if kind in ("id", "hash", "bang") and s.startswith("<", i):
            end = angle_end(src, i)
            t.arg, t.end, i = s[i + 1:end - 1], end, end
        if text in OPEN and kind == "punct":
            stack.append(len(toks))
        elif text in CLOSE and kind == "punct":
            if not stack or s[toks[stack[-1]].off] != OPEN[CLOSE.index(text)]:
                raise src.error(t.off, f"'{text}'", "a bracket that closes one opened before" if not stack else
                                f"'{CLOSE[OPEN.index(s[toks[stack[-1]].off])]}' to close the "
                                f"'{s[toks[stack[-1]].off]}' at {src.pos(toks[stack[-1]].off).split(':', 1)[1]}",
                                f"'{text}'")
            j = stack.pop()
            toks[j].match, t.match = len(toks), j
        toks.append(t)
    if stack:
        t = toks[stack[-1]]
        raise src.error(t.off, f"'{t.text}'", f"a '{CLOSE[OPEN.index(t.text)]}' to close it", "the end of the file")
    return toks


def parse_type(src, t):
    """A Type from a type token: tensor<8x784xf32>, tensor<f32>, !stablehlo.token."""
    if t.kind == "bang":
        return Type(None, None, t.text)
    if t.kind != "id" or t.text != "tensor" or t.arg is None:
        raise src.error(t.off, "a type", "a tensor type like tensor<8x784xf32>", f"'{t.text}'")
    body = t.arg.split(",")[0].strip()     # after a comma: an encoding (bounds, sparsity)
    parts = body.split("x")
    dims, dtype = parts[:-1], parts[-1].strip()
    shown = f"tensor<{t.arg}>"
    if not DTYPE.fullmatch(dtype):
        raise src.error(t.off, shown, "sizes and an element type (f32, bf16, i8, ...) separated by x",
                        f"'{dtype}' where the element type goes")
    shape = []
    for d in dims:
        d = d.strip()
        if d == "?":
            raise src.error(t.off, shown, "static sizes", "a dynamic size ?")
        if not re.fullmatch(r"\d+", d):
            raise src.error(t.off, shown, "sizes that are integers", f"'{d}'")
        shape.append(int(d))
    return Type(shape, dtype, shown)


class Parser:
    def __init__(self, src):
        self.src, self.toks = src, src.toks

    def tok(self, i, what):
        if i >= len(self.toks):
            end = len(self.src.text)
            raise self.src.error(end, what, "more text", "the end of the file")
        return self.toks[i]

    def expect(self, i, text, what):
        t = self.tok(i, what)
        if t.text != text:
            raise self.src.error(t.off, what, f"'{text}'", f"'{t.text}'")
        return i + 1

    # -- the module

    def module(self):
        i, name, funcs, locs = 0, None, {}, {}
        while i < len(self.toks):
            t = self.toks[i]
            if t.text == "module":
                i += 1
                if self.tok(i, "module").kind == "sym":
                    name, i = self.toks[i].text, i + 1
                if self.tok(i, "module").text == "attributes":
                    i = self.skip_group(i + 1, "{", "the module's attributes")
                t = self.tok(i, "module")
                if t.text != "{":
                    raise self.src.error(t.off, "module", "'{' and the module's functions", f"'{t.text}'")
                end = t.match
                i += 1
                while i < end:
                    i = self.top_item(i, funcs, locs)
                i = end + 1
            else:
                i = self.top_item(i, funcs, locs)
        if not funcs:
            raise self.src.error(0, "the module", "a func.func with a body", "none")
        mod = Module(name, funcs, locs)
        mod.src = self.src
        return mod

    def top_item(self, i, funcs, locs):
        t = self.toks[i]
        if t.text == "loc" and i + 1 < len(self.toks) and self.toks[i + 1].text == "(":
            return self.toks[i + 1].match + 1      # the location of the module or of a function
        if t.text == "func.func":
            f, i = self.func(i + 1)
            if f is not None:
                if f.name in funcs:
                    raise self.src.error(t.off, f"func.func {f.name}", "one function of each name", "a second")
                funcs[f.name] = f
            return i
        if t.kind == "hash" and i + 1 < len(self.toks) and self.toks[i + 1].text == "=":
            j = i + 2
            if self.tok(j, t.text).text == "loc" and self.tok(j + 1, t.text).text == "(":
                close = self.toks[j + 1].match
                locs[t.text] = self.src.text[self.toks[j + 1].end:self.toks[close].off]
                return close + 1
            return self.skip_line(j)
        raise self.src.error(t.off, "the module", "func.func, or a #name = ... alias", f"'{t.text}'")

    def skip_group(self, i, opener, what):
        t = self.tok(i, what)
        if t.text != opener:
            raise self.src.error(t.off, what, f"'{opener}'", f"'{t.text}'")
        return t.match + 1

    def skip_line(self, i):
        """Past the tokens of one line at this depth (an alias's value)."""
        while i < len(self.toks):
            t = self.toks[i]
            if t.nl:
                break
            i = t.match + 1 if t.match is not None and t.text in OPEN else i + 1
        return i

    def func(self, i):
        while self.tok(i, "func.func").text in ("public", "private", "nested"):
            i += 1
        t = self.tok(i, "func.func")
        if t.kind != "sym":
            raise self.src.error(t.off, "func.func", "its name, @name", f"'{t.text}'")
        name = t.text
        args, types, names, i = self.func_args(i + 1, name)
        if self.tok(i, name).kind == "arrow":
            i += 1
            i = self.toks[i].match + 1 if self.tok(i, name).text == "(" else i + 1
        if i < len(self.toks) and self.toks[i].text == "attributes":
            i = self.skip_group(i + 1, "{", f"the attributes of {name}")
        if i >= len(self.toks) or self.toks[i].text != "{":
            return None, i                    # a declaration: no body to run
        end = self.toks[i].match
        ops, j = [], i + 1
        while j < end:
            op, j = self.op(j, end, name)
            ops.append(op)
        return Func(name, args, types, names, ops, t.off), end + 1

    def func_args(self, i, fname):
        i = self.expect(i, "(", f"the arguments of {fname}")
        close = self.toks[i - 1].match
        args, types, names = [], [], []
        while i < close:
            t = self.toks[i]
            if t.kind != "val":
                raise self.src.error(t.off, f"the arguments of {fname}", "%name: type", f"'{t.text}'")
            i = self.expect(i + 1, ":", f"argument {t.text} of {fname}")
            args.append(t.text)
            types.append(parse_type(self.src, self.tok(i, t.text)))
            i += 1
            names.append(None)
            if self.tok(i, fname).text == "{":
                m = re.search(r'jax\.arg_info\s*=\s*"((?:[^"\\]|\\.)*)"',
                              self.src.text[self.toks[i].off:self.toks[self.toks[i].match].end])
                names[-1] = m.group(1) if m else None
                i = self.toks[i].match + 1
            if self.tok(i, fname).text == "loc" and self.tok(i + 1, fname).text == "(":
                i = self.toks[i + 1].match + 1
            if self.tok(i, fname).text == ",":
                i += 1
        return args, types, names, close + 1

    # -- one op

    def op_end(self, i, end):
        """The index past the last token of the op that starts at i."""
        j = i
        while j < end:
            t = self.toks[j]
            if j > i and t.nl and t.text not in CONTINUES and t.text != "}":
                break
            if t.text in OPEN and t.kind == "punct":
                j = t.match
            j += 1
        return j

    def op(self, i, end, fname):
        j = self.op_end(i, end)
        op = Op()
        toks = self.toks
        k = i
        while k < j and toks[k].kind == "val":      # results: %0, %0:2, %a, %b
            r = toks[k].text
            k += 1
            if k < j and toks[k].text == ":" and k + 1 < j and toks[k + 1].kind == "num":
                n = toks[k + 1].text
                if not n.isdigit() or not 1 <= int(n) <= RESULTS_MAX:
                    raise self.src.error(toks[k + 1].off, f"{r}:{n}", f"a count of results, 1 to {RESULTS_MAX}",
                                         f"'{n}'")
                op.results += [f"{r}#{x}" for x in range(int(n))]
                k += 2
            else:
                op.results.append(r)
            if k < j and toks[k].text == ",":
                k += 1
        if op.results:
            if k >= j or toks[k].text != "=":
                t = toks[k] if k < j else toks[j - 1]
                raise self.src.error(t.off, f"the op at {op.results[0]}", "'=' after its results", f"'{t.text}'")
            k += 1
        if k >= j:
            raise self.src.error(toks[i].off, "an op", "its name after '='", "none")
        t = toks[k]
        if t.kind == "str":
            op.name = t.text[1:-1]
        elif t.kind == "id":
            op.name = t.text
        else:
            raise self.src.error(t.off, "an op", "an op name (stablehlo.add, \"stablehlo.add\")", f"'{t.text}'")
        op.off, op.pos_off = toks[i].off, t.off
        self.op_parts(op, k + 1, j)
        return op, j

    def op_parts(self, op, k, j):
        """Operands, regions, attributes, the type signature and the loc of the op in toks[k:j]."""
        toks, text = self.toks, self.src.text
        blank = []                              # (start, end) offsets of its regions
        colon = None
        locs = None
        cont = False                            # in a region that goes on from the next line (reducer)
        depth = 0
        inits = []                              # reduce's (%x init: %c): the inputs come first, then the inits
        m = k
        while m < j:
            t = toks[m]
            if t.text in CONTINUES and t.nl and depth == 0:
                cont = True
            if t.text == "{" and t.kind == "punct":
                inner = toks[m + 1] if m + 1 < t.match else None
                if inner is not None and (inner.nl or inner.kind == "blk"):
                    blank.append((t.off, toks[t.match].end))
                    op.body += [x.text.strip('"') for x in toks[m + 1:t.match]
                                if x.kind in ("id", "str") and x.text.strip('"').startswith(("stablehlo.", "chlo.", "mhlo."))
                                and not x.text.strip('"').endswith(".return")]
                m = t.match + 1                 # an attribute dictionary's text stays, for the attributes
                continue
            if t.text == "loc" and m + 1 < j and toks[m + 1].text == "(":
                close = toks[m + 1].match
                if not cont:
                    locs = text[toks[m + 1].end:toks[close].off]
                blank.append((t.off, toks[close].end))
                m = close + 1
                continue
            if cont:
                pass
            elif t.kind == "punct" and t.text in "([":
                depth += 1
            elif t.kind == "punct" and t.text in ")]":
                depth -= 1
            elif t.text == ":" and depth == 0:
                colon = m
            elif t.kind == "val" and colon is None and not (m + 1 < j and toks[m + 1].text == "="):
                (inits if m > k + 1 and toks[m - 2].text == "init" else op.operands).append(t.text)
            elif t.kind == "sym" and op.callee is None:
                op.callee = t.text
            elif t.text == "applies" and m + 1 < j:
                op.body.append(toks[m + 1].text)    # reduce's pretty form: applies stablehlo.add across ...
            m += 1
        op.loc = locs
        op.operands += inits
        start = toks[k].off if k < j else toks[j - 1].end
        stop = toks[j - 1].end
        body = list(text[start:stop])
        for a, b in blank:
            for x in range(max(a, start), min(b, stop)):
                if body[x - start] != "\n":
                    body[x - start] = " "
        op.text, op.off = "".join(body), start
        op.out_types = self.signature(op, colon, j) if colon is not None else []
        op.operands = [v for v in op.operands if v not in op.results]

    def signature(self, op, colon, j):
        """The result types after the op's top-level ':': (T, T) -> T, (T) -> (T, T), T, or T, T (the last)."""
        toks = self.toks
        m = colon + 1
        stop = m
        while stop < j and not (toks[stop].text in ("loc", "{") or toks[stop].text in CONTINUES and toks[stop].nl):
            stop += 1
        seq = toks[m:stop]
        if not seq:
            raise self.src.error(toks[colon].off, op.name, "a type after ':'", "none")
        arrow = next((x for x, t in enumerate(seq) if t.kind == "arrow"), None)
        if arrow is not None:
            ins = seq[1:arrow - 1] if seq[0].text == "(" else seq[:arrow]
            op.in_types = [(parse_type(self.src, t), t.off) for t in ins if t.text != ","]
            outs = seq[arrow + 1:]
            if outs and outs[0].text == "(":
                outs = outs[1:-1]
            return [parse_type(self.src, t) for t in outs if t.text != ","]
        if seq[0].text == "(":
            raise self.src.error(seq[0].off, op.name, "'->' and the result types after the operand types", "none")
        types = [t for t in seq if t.text != ","]
        op.in_types = [(parse_type(self.src, t), t.off) for t in types[:-1]]
        return [parse_type(self.src, types[-1])] * max(1, len(op.results))


def parse(text, path):
    """The Module of the text of path; BadInput when it is not one."""
    return Parser(Source(text, path)).module()
