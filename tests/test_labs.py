#!/usr/bin/python3
"""
test_labs.py - every number in the answers of docs/labs/ is checked.

Each answer in bold is compared with a value this test computes on its own
from the lab's shapes (fold counts, the fold timing rules of models/array.h
walked fold by fold, byte counts), and with what tpusim reports for the
command the lab gives. Every arithmetic step written "expression = value" in
an answer is evaluated. Numbers only the cycle engine can give (memory
latency and queueing) are compared with tpusim alone, and say so in the lab.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")
LAB = "configs/lab_4x4.yaml"
R = C = 4
failures = []


def check(what, got, want, tol=0.0):
    ok = abs(got - want) <= tol if isinstance(want, float) or tol else got == want
    if not ok:
        failures.append(f"{what}: got {got}, want {want}")


def run(workload, *args):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([TPUSIM, "run", "-c", LAB, "-w", workload, "-o", d, *args], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "summary.json")) as f:
            return json.load(f)["total"]


def answers(doc):
    with open(doc) as f:
        text = f.read()
    text = text[text.index("## Answers"):]
    return re.sub(r"\s*\n\s*", " ", text)


def number(s):
    return float(s.replace(",", ""))


def bold(doc):
    """The bold answers of a lab, in order: a number (with its unit word) or a matrix element."""
    out = []
    for b in re.findall(r"\*\*([^*]+)\*\*", answers(doc)):
        m = re.match(r"([AB])\[(\d+)\]\[(\d+)\]$", b)
        if m:
            out.append((m.group(1), int(m.group(2)), int(m.group(3))))
            continue
        m = re.match(r"([0-9][0-9,]*(?:\.[0-9]+)?)(%?)", b)
        assert m, f"{doc}: bold answer without a number: {b!r}"
        out.append(number(m.group(1)))
    return out


def arithmetic(doc):
    """Every 'expression = value' in the answers holds, to the digits the value shows."""
    text = answers(doc).replace("**", "")
    n = 0
    for m in re.finditer(r"((?:[0-9][0-9,]*(?:\.[0-9]+)?|[()])(?:[ ]*(?:[x+\-/()]|[0-9][0-9,]*(?:\.[0-9]+)?))*)"
                         r" = ([0-9][0-9,]*(?:\.([0-9]+))?)(%?)", text):
        expr = m.group(1).replace(",", "").replace("x", "*")
        if not re.search(r"[*+\-/]", expr):
            continue
        while expr.count("(") > expr.count(")") and expr.startswith("("):
            expr = expr[1:]
        value = eval(expr, {"__builtins__": {}})
        if m.group(4):
            value *= 100
        shown = number(m.group(2))
        digits = len(m.group(3) or "")
        check(f"{doc}: {m.group(0)}", round(value, digits), shown, 0.5 * 10 ** -digits + 1e-9)
        n += 1
    return n


def blocks(n, size):
    return [min(size, n - i) for i in range(0, n, size)]


def fold_cycles(df, M, K, N, dbuf):
    """The array's cycles by the rules of models/array.h, fold by fold (column blocks outside row blocks)."""
    if df == "os":
        rows, cols, T = blocks(M, R), blocks(N, C), K
    elif df == "ws":
        rows, cols, T = blocks(K, R), blocks(N, C), M
    else:
        rows, cols, T = blocks(K, R), blocks(M, C), N
    folds = [(sr, sc) for sc in cols for sr in rows]
    end, e, s, prev_sr = 0, 0, 0, 0
    for f, (sr, sc) in enumerate(folds):
        if df == "os":
            start = e
            if f and not dbuf:
                start = max(start, e + prev_sr - 1)
            if f and dbuf:
                start = max(start, e + prev_sr - T)
            e = start + T
            end = max(end, e + sr + sc - 2 + R)
        else:
            # Serial: the chain writes a weight register in the cycle the last input reads it (e - 1).
            load = 0 if f == 0 else (s if dbuf else e - 1)
            start = max(e, load + sr)
            s, e = start, start + T
            end = max(end, e + R + sc - 2)
        prev_sr = sr
    return len(folds), end, T * len(folds)


def lab1():
    doc = "docs/labs/1-dataflows.md"
    M, K, N = 10, 6, 5
    want = []
    runs = {}
    for df in ("ws", "os", "is"):
        runs[df, True] = run("docs/labs/gemm_10x6x5.yaml", "--ideal-memory", "--dataflow", df)
        runs[df, False] = run("docs/labs/gemm_10x6x5.yaml", "--ideal-memory", "--dataflow", df,
                              "--set", "array.weight_double_buffer=false")
    for df in ("ws", "os", "is"):
        folds, _, _ = fold_cycles(df, M, K, N, True)
        check(f"lab 1 {df} folds", runs[df, True]["folds"], folds)
        want.append(folds)
    for dbuf in (True, False):
        for df in ("ws", "os", "is"):
            _, cycles, _ = fold_cycles(df, M, K, N, dbuf)
            check(f"lab 1 {df} cycles (dbuf {dbuf})", runs[df, dbuf]["cycles"], cycles)
            want.append(cycles)
    for df in ("ws", "os", "is"):
        u = M * K * N / (runs[df, True]["cycles"] * R * C)
        check(f"lab 1 {df} utilization", runs[df, True]["utilization"], u, 1e-12)
        want.append(round(100 * u, 1))
    # Question 5: ws fold 0 starts streaming after its 4-row shift; PE (i, j) holds B[i][j] and sees row t = c - s - i - j.
    s, c, i, j = 4, 9, 1, 2
    want += [("B", i, j), ("A", c - s - i - j, i), c - 1 - s - i - j]
    check("lab 1 bold answers", bold(doc), want)
    # The categories the answers name.
    check("lab 1 ws categories", [runs["ws", True]["cycles_by_category"][k] for k in ("compute", "weight_shift", "fill_drain")],
          [40, 4, 3])
    check("lab 1 is categories", [runs["is", True]["cycles_by_category"][k] for k in ("compute", "weight_shift", "fill_drain")],
          [30, 4, 4])
    check("lab 1 serial shifts", [runs["ws", False]["cycles_by_category"]["weight_shift"],
                                  runs["is", False]["cycles_by_category"]["weight_shift"]], [4 + 1 + 3 + 1, 4 + 1 + 3 + 1 + 3 + 1])
    lab1_registers(c, i, j)
    return arithmetic(doc)


def lab1_registers(c, i, j):
    """`tpusim lab` shows question 5's registers: the same values as A and B at the positions the answer gives."""
    out = subprocess.run([TPUSIM, "lab", "-c", LAB, "--gemm", "10x6x5", "--dataflow", "ws", "--cycles", f"{c}..{c}",
                          "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"tpusim lab --format json: {out.stderr.strip()}")
        return
    d = json.loads(out.stdout)
    pe = d["cycles"][0]["pe"][i][j]
    A, B, s = d["A"], d["B"], 4
    check("lab 1 PE weight", pe["w"], B[i][j])
    check("lab 1 PE input", pe["x"], A[c - s - i - j][i])
    # The partial sum register: row t = c - 1 - s - i - j's sum over array rows 0..i, computed the cycle before.
    t = c - 1 - s - i - j
    check("lab 1 PE partial sum", pe["p"], sum(A[t][k] * B[k][j] for k in range(i + 1)))
    nxt = subprocess.run([TPUSIM, "lab", "-c", LAB, "--gemm", "10x6x5", "--dataflow", "ws", "--cycles",
                          f"{c + 1}..{c + 1}", "--format", "json"], capture_output=True, text=True, check=True)
    check("lab 1 PE partial sum a cycle later", json.loads(nxt.stdout)["cycles"][0]["pe"][i][j]["p"],
          sum(A[t + 1][k] * B[k][j] for k in range(i + 1)))


def lab2():
    doc = "docs/labs/2-folds.md"
    M, K, N = 64, 20, 12
    ws = run("docs/labs/gemm_64x20x12.yaml", "--ideal-memory")
    os_ = run("docs/labs/gemm_64x20x12.yaml", "--ideal-memory", "--dataflow", "os")
    folds, cycles, _ = fold_cycles("ws", M, K, N, True)
    kf = math.ceil(K / R)
    want = [folds, kf, cycles, round(100 * M * K * N / (cycles * R * C), 1),
            M * N * 4 * kf, M * N * 4 * (kf - 1) + M * N]
    ofolds, ocycles, _ = fold_cycles("os", M, K, N, True)
    want += [ofolds, ocycles, M * N * 4, K * N * math.ceil(M / R), M * K * math.ceil(N / C), M * K + K * N, M * N]
    got = [ws["folds"], kf, ws["cycles"], round(100 * ws["utilization"], 1), ws["sram_write_bytes"]["outputs"],
           ws["sram_read_bytes"]["outputs"], os_["folds"], os_["cycles"], os_["sram_write_bytes"]["outputs"],
           os_["sram_read_bytes"]["weights"], ws["sram_read_bytes"]["inputs"], ws["hbm_read_bytes"],
           ws["hbm_write_bytes"]]
    check("lab 2 against tpusim", got, want)
    check("lab 2 os HBM", [os_["hbm_read_bytes"], os_["hbm_write_bytes"], os_["sram_read_bytes"]["outputs"]],
          [M * K + K * N, M * N, M * N])
    check("lab 2 bold answers", bold(doc), want)
    return arithmetic(doc)


def lab3():
    doc = "docs/labs/3-roofline.md"
    F = 64
    b1 = run("docs/labs/roofline.yaml", "--batch", "1")
    b64 = run("docs/labs/roofline.yaml", "--batch", "64")
    slow = run("docs/labs/roofline.yaml", "--batch", "1", "--set", "hbm.gbps=1")
    peak, bw = R * C * 2 * 1.0, 8.0          # GOPS, GB/s at 1 GHz
    ops1, bytes1 = 2 * F * F, F + F * F + F
    ops64, bytes64 = 64 * ops1, 3 * 64 * F
    # Batch 1: 256 folds of one row, each behind a 4-cycle shift (models/array.h, pipelined ws).
    _, array1, _ = fold_cycles("ws", 1, F, F, True)
    _, array64, _ = fold_cycles("ws", 64, F, F, True)
    want = [peak, peak / bw, ops1, bytes1, round(ops1 / bytes1, 2), round(ops1 / bytes1 * bw, 1), bytes1 / bw,
            array1, b1["cycles"], round(b1["achieved_ops_per_s"] / 1e9, 1), round(ops64 / bytes64, 1), array64,
            round(b64["achieved_ops_per_s"] / 1e9, 1), slow["cycles"]]
    check("lab 3 against tpusim", [b1["ops"], b1["hbm_read_bytes"] + b1["hbm_write_bytes"], b1["memory_cycles"],
                                   b1["compute_cycles"], b64["ops"], b64["hbm_read_bytes"] + b64["hbm_write_bytes"],
                                   b64["compute_cycles"], b64["memory_cycles"], slow["memory_cycles"]],
          [ops1, bytes1, bytes1 / bw, array1, ops64, bytes64, array64, bytes64 / bw, bytes1])
    check("lab 3 attainable", b1["attainable_ops_per_s"], ops1 / bytes1 * bw * 1e9, 1e-3)
    check("lab 3 peak", b64["attainable_ops_per_s"], peak * 1e9, 1e-3)
    check("lab 3 bold answers", bold(doc), want)
    return arithmetic(doc)


def main():
    n = lab1() + lab2() + lab3()
    if n < 20:
        failures.append(f"only {n} arithmetic steps found in the answers")
    for f in failures:
        print("FAIL", f)
    print(f"labs: {n} arithmetic steps, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
