"""
workload_out.py - what the importers (onnx2workload.py, hlo2workload.py)
share: the bounds of a workload (limit.h's; tests/test_onnx.py checks them),
layer names, the `inputs` of a layer, the padding of a window, and writing the
YAML once `tpusim lower` took it. Standard library only.

A layer here is any object with name, type, keys, notes, reads (a value per
activation operand: elems, src, gin, via), read_sizes, out_elems and
replaced_by; BadInput is bad input (exit status 2), Unsupported an op with no
workload layer.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

NAME_MAX = 63                         # CFG_STR_MAX - 1: the longest layer name a workload takes
DIM_MAX = 1 << 40                     # workload.c: the largest value of a layer's key
COUNT_MAX = 10 ** 9                   # workload.c: the most repeat and groups
BATCH_MAX = 1 << 20                   # workload.c: the largest batch


class BadInput(Exception):
    """The model cannot be read or its shapes are not known: exit 2."""


class Unsupported(Exception):
    """This node has no workload layer: the reason."""


def sanitize(name):
    """name in the characters a plain YAML scalar keeps; when too long, its last path parts, or its tail."""
    parts = re.sub(r"[^A-Za-z0-9_./-]", "_", name).strip("/").split("/")
    while len(parts) > 1 and len("/".join(parts)) > NAME_MAX:
        parts.pop(0)
    s = "/".join(parts)[-NAME_MAX:].lstrip("/.-_")
    return s or "layer"


def unique(names, label):
    """label sanitised and made unique among names (a set, which it joins)."""
    base = sanitize(label)
    name, i = base, 2
    while name in names:
        suffix = f"_{i}"
        name = base[:NAME_MAX - len(suffix)] + suffix
        i += 1
    names.add(name)
    return name


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def prod(v):
    return math.prod(v) if v else 1


def matmul_layer(conv, at, label, m, k, n, rep, ra, rb, reads, sizes):
    """A matmul layer of m x k x n, repeated rep times, operands a and b in roles ra and rb, through the
    converter's add_layer (at: the node or op it comes from). Shared by the importers."""
    keys = dict(m=m, k=k, n=n, a=ra, b=rb)
    if rep != 1:
        keys["repeat"] = rep
    return conv.add_layer(at, label, "matmul", keys, reads, sizes, m * n * rep)


def activations_matmul(conv, at, label, m, k, n, pb, a, b, rows):
    """A matmul of two activations, pb products of m x k x n in the whole batch, repeated per sample: the batch
    must divide the products (the heads of Q.K^T). Otherwise each sample's rows would meet every sample's rhs:
    the product mixes the samples, which a workload's per-sample layers cannot hold (rows: what to call the
    lhs's rows in the error)."""
    if pb % conv.mb:
        raise Unsupported(f"a matmul of two activations that mixes the samples: {pb} product{'s' * (pb != 1)} of "
                          f"{m} x {k} x {n} for a batch of {conv.mb}, so {rows} of every sample meet the whole rhs "
                          f"(tpusim's layers are per sample)")
    rep = pb // conv.mb
    return matmul_layer(conv, at, label, m, k, n, rep, "activation", "activation", [a, b], [m * k * rep, k * n * rep])


def check_keys(ltype, keys):
    """A layer's integer keys within what a workload takes."""
    for k, v in keys.items():
        top = COUNT_MAX if k in ("repeat", "groups") else DIM_MAX
        if isinstance(v, int) and not 1 <= v <= top and not (v == 0 and k == "padding"):
            raise Unsupported(f"{ltype} {k} {v}, beyond what a workload takes (1 to {top})")


def sym_padding(pads, dims, kernels, stride, outs):
    """The one padding p whose output size, (n + 2p - k) / s + 1, is the model's in both dimensions."""
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


def final(layer):
    while layer.replaced_by is not None:
        layer = layer.replaced_by
    return layer


def resolve_inputs(l, prev, mb, report, seen):
    """
    l.inputs: the names of the layers l reads, when every operand is the
    whole output of one; else none, and tpusim's default rule applies
    (operand 0: the previous layer's output when it has the size read,
    else a new input; any other operand a new input). A note (and a line of
    report) says where that rule reads something else than the model, and
    where a network input that an earlier layer read is read again as a new
    one (seen: the network inputs read so far, by name; updated).
    """
    want = []
    for v, size in zip(l.reads, l.read_sizes):
        src = final(v.src) if v.src is not None else None
        if src is not None and v.elems == size * mb and src.out_elems == size:
            want.append(("layer", src, f"'{src.name}'"))
        elif v.gin is not None and v.src is None and v.elems == size * mb:
            want.append(("input", None, f"network input '{v.gin}'"))
        elif src is not None and v.elems == src.out_elems * mb:
            want.append(("none", None, f"'{src.name}', broadcast"))
        else:
            want.append(("none", None, f"what {v.via} writes" if v.via else "a tensor that no layer writes"))
    l.inputs = [w[1].name for w in want] if all(w[0] == "layer" for w in want) else None
    if l.inputs is not None:
        return
    for j, (kind, what, shown) in enumerate(want):
        gets = prev if j == 0 and prev is not None and prev.out_elems == l.read_sizes[0] else None
        if kind == "input" and gets is None:
            gin = l.reads[j].gin
            if gin in seen:
                text = (f"operand {j} is {shown}, which an earlier layer reads too, but tpusim reads a new input "
                        f"(a workload cannot name a network input twice: its bytes count again)")
                l.notes.append(text)
                report.append(("dataflow", l.type, l.name, text))
            seen.add(gin)
            continue
        if kind == "layer" and gets is what:
            continue
        reads = f"'{gets.name}'" if gets is not None else "a new input"
        why = {"layer": "another operand has no layer to name", "input": "`inputs` names layers only",
               "none": "no layer writes it whole"}[kind]
        text = f"operand {j} is {shown}, but tpusim reads {reads} ({why})"
        l.notes.append(text)
        report.append(("dataflow", l.type, l.name, text))


# ---------------------------------------------------------------------------- writing

def printable(s):
    """s with every character outside printable ASCII shown as ?: for comments and messages."""
    return "".join(c if " " <= c <= "~" else "?" for c in s)


def yaml_name(s):
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", s) and s.lower() not in ("true", "false", "null", "yes", "no",
                                                                            "on", "off", "y", "n"):
        return s
    return '"' + s + '"'


def layer_lines(layers):
    """The YAML lines of the layers: each as one flow mapping, after a comment of its notes."""
    lines = []
    for l in layers:
        if l.notes:
            lines.append("  # " + "; ".join(l.notes))
        items = [f"name: {yaml_name(l.name)}", f"type: {l.type}"] + [f"{k}: {v}" for k, v in l.keys.items()]
        if l.inputs:
            items.append("inputs: [" + ", ".join(yaml_name(n) for n in l.inputs) + "]")
        lines.append("  - {" + ", ".join(items) + "}")
    return lines


def report_counts(report):
    """The header lines that count the report: one per category, its ops and how often."""
    counts = {}
    for cat, op, _, _ in report:
        counts.setdefault(cat, {}).setdefault(op, 0)
        counts[cat][op] += 1
    return [f"# {cat}: " + ", ".join(f"{op} x{n}" for op, n in sorted(counts[cat].items())) for cat in sorted(counts)]


def find_tpusim():
    """The tpusim that checks what is written: $TPUSIM, else build/tpusim beside this script, else tpusim on PATH."""
    if os.environ.get("TPUSIM"):
        return os.environ["TPUSIM"]
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tpusim")
    return built if os.access(built, os.X_OK) else shutil.which("tpusim")


def check_with_tpusim(prog, model_path, path, shown):
    """`tpusim lower` on path (shown as shown): what tpusim refuses is bad input, with tpusim's reason."""
    tpusim = find_tpusim()
    if not tpusim:
        print(f"{prog}: note: no tpusim found (set TPUSIM): the workload is not checked against its limits",
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


def write_checked(prog, model_path, out, text):
    """text to out (None: standard output) once tpusim took it, from a temporary file beside out; nothing left on error."""
    d = os.path.dirname(os.path.abspath(out)) if out else None
    tmpdir = None
    try:
        if out is None:
            tmpdir = tempfile.TemporaryDirectory(prefix=f"{prog}.")
            d = tmpdir.name
        fd, tmp = tempfile.mkstemp(prefix=f".{prog}.", suffix=".yaml", dir=d)
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
        check_with_tpusim(prog, model_path, tmp, out or "<standard output>")
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


def print_report(report, quiet):
    """The report on stderr, one line per op that is not a layer of its own (only the unsupported ones if quiet)."""
    width = max([len(op) for _, op, _, _ in report] + [8])
    for cat, op, label, detail in report:
        if quiet and cat != "unsupported":
            continue
        print(printable(f"  {cat:<13} {op:<{width}} {label}" + (f"  ({detail})" if detail else "")), file=sys.stderr)


def positive(text):
    """An argparse type: a batch, 1 to BATCH_MAX."""
    import argparse
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= BATCH_MAX:
        raise argparse.ArgumentTypeError(f"expected an integer in [1, {BATCH_MAX}], found {text!r}")
    return v
