#!/usr/bin/python3
"""
test_vcd_gtkwave.py - GTKWave reads tpusim's VCDs as they were written.

GTKWave's own converters (vcd2fst, then fst2vcd, Debian package gtkwave)
read the engine's timeline and a functional run's per-PE registers; every
signal, with its scope, and every value change at every time must come back
as tpusim wrote it (vectors compared as numbers, reals to 9 digits, strings
as text). A file GTKWave misread (a bad identifier, a vector it cut, a
string type it dropped) fails here.
"""
import os
import subprocess
import sys
import tempfile

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")


def parse(path):
    """{scope.name: [(time, value), ...]} and the timescale, from a VCD."""
    names, changes, scope, now, timescale = {}, {}, [], 0, None
    with open(path) as f:
        tokens = f.read().split()
    i, in_defs = 0, True
    while i < len(tokens):
        t = tokens[i]
        if in_defs:
            if t == "$scope":
                scope.append(tokens[i + 2])
                i += 4
            elif t == "$upscope":
                scope.pop()
                i += 2
            elif t == "$var":
                kind, ident, name = tokens[i + 1], tokens[i + 3], tokens[i + 4]
                full = ".".join(scope + [name])
                names.setdefault(ident, []).append((full, kind))
                changes[full] = []
                i = tokens.index("$end", i) + 1
            elif t == "$timescale":
                j = tokens.index("$end", i)
                timescale = "".join(tokens[i + 1:j])
                i = j + 1
            elif t == "$enddefinitions":
                in_defs = False
                i += 2
            elif t.startswith("$"):
                i = tokens.index("$end", i) + 1
            else:
                raise ValueError(f"{path}: unexpected {t!r} among the definitions")
            continue
        if t in ("$dumpvars", "$end"):
            i += 1
            continue
        if t.startswith("#"):
            now = int(t[1:])
            i += 1
            continue
        if t[0] in "bBrRsS":
            value, ident = t[1:], tokens[i + 1]
            i += 2
        else:
            value, ident = t[0], t[1:]
            i += 1
        for full, kind in names[ident]:
            changes[full].append((now, normal(kind, t[0].lower(), value)))
    return timescale, changes, now


def normal(kind, tag, value):
    if kind == "string":
        return value
    if tag == "r":
        return float("%.9g" % float(value))
    if set(value) <= {"0", "1"}:
        return int(value, 2)
    return "x" if "x" in value.lower() else value


def settled(changes):
    """The value each signal holds after each time: the last change at a time wins, and repeats drop."""
    out = {}
    for name, ch in changes.items():
        last, seq = {}, []
        for t, v in ch:
            last[t] = v
        prev = object()
        for t in sorted(last):
            if last[t] != prev and last[t] != "x":
                seq.append((t, last[t]))
            prev = last[t]
        out[name] = seq
    return out


def check(vcd, failures):
    fst = vcd + ".fst"
    back = vcd + ".back.vcd"
    subprocess.run(["vcd2fst", vcd, fst], check=True, stdout=subprocess.DEVNULL)
    with open(back, "w") as f:
        subprocess.run(["fst2vcd", fst], check=True, stdout=f)
    ts0, ours, end0 = parse(vcd)
    ts1, theirs, end1 = parse(back)
    if ts0 != "1ps" or ts1 != "1ps":
        failures.append(f"{vcd}: timescale {ts0} / {ts1}")
    if end0 != end1:
        failures.append(f"{vcd}: last time {end0}, GTKWave {end1}")
    if sorted(ours) != sorted(theirs):
        failures.append(f"{vcd}: signals differ: {sorted(set(ours) ^ set(theirs))[:5]}")
        return 0
    a, b = settled(ours), settled(theirs)
    n = 0
    for name in a:
        if a[name] != b[name]:
            failures.append(f"{vcd}: {name}: ours {a[name][:4]}..., GTKWave {b[name][:4]}...")
        n += len(a[name])
    return n


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        runs = [
            ("engine", ["-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml"]),
            ("chip", ["-c", "configs/lab_4x4.yaml", "-w", "configs/workloads/mlp.yaml", "--set", "chip.cores=2",
                      "--set", "chip.arrays_per_core=2"]),
            ("pe_ws", ["-c", "configs/lab_4x4.yaml", "-w", "docs/labs/gemm_10x6x5.yaml", "--model", "functional"]),
            ("pe_os_bf16", ["-c", "configs/lab_4x4.yaml", "-w", "docs/labs/gemm_10x6x5.yaml", "--model", "functional",
                            "--dataflow", "os", "--set", "array.dtype=bf16"]),
        ]
        total = 0
        for name, args in runs:
            base = os.path.join(d, name)
            subprocess.run([TPUSIM, "run", *args, "--vcd", base, "-o", os.path.join(d, name + "_out")], check=True,
                           stdout=subprocess.DEVNULL)
            n = check(base + ".vcd", failures)
            if n < 20:
                failures.append(f"{name}: only {n} value changes")
            total += n
    for f in failures:
        print("FAIL", f)
    print(f"vcd through GTKWave: {total} value changes compared, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
