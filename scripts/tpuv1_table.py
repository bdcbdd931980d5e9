#!/usr/bin/python3
"""The TPU v1 paper's benchmark apps on tpusim, beside the paper's own numbers.

Runs the cycle model of the TPU v1 preset on each app of Jouppi et al., "In-
Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017
(configs/workloads/tpuv1_*.yaml, shapes built to Table 1's totals) and prints
a markdown table: measured TOPS (Table 3, row 9) against tpusim's; the
bandwidth bound, once as the paper's roofline gives it (ops per weight byte
x 2 ops per MAC x 34 GB/s, at most the 92 TOPS peak) and once as tpusim's
roofline gives it for the bytes the run moved (attainable_ops_per_s); and
the share of cycles in Table 3's rows 1, 4, 5 and 6 against tpusim's.

tpusim's cycle categories map onto those rows as
    array active   compute
    weight stall   weights
    weight shift   weight_shift, when the run reports it (else 0)
    non-matrix     every other category, whatever they are
each as a share of the sum of all categories.

Usage, from anywhere (standard library only; build first with `make`):

    /usr/bin/python3 scripts/tpuv1_table.py [--tpusim build/tpusim]
        [--config configs/tpu_v1.yaml] [--ideal-memory] [--set KEY=VALUE]...

--ideal-memory adds a column: tpusim's TOPS with ideal memory. --set is
passed to every run (e.g. --set chip.keep_activations=true). Each run writes
to a temporary directory that is removed afterwards. Exit status 0, or 1
when a run fails (its message is shown).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PEAK_TOPS = 92.0                # Jouppi et al.: 92 TOPS peak (65,536 MACs x 2 ops x 0.7 GHz)
DDR3_BYTES_PER_S = 34e9         # Sec. 2: 34 GB/s of weight memory

# Table 1: ops per weight byte (one op per MAC). Table 3: rows 1, 4, 5, 6 (% of
# cycles) and row 9 (TOPS).
APPS = [
    # name,  ops/weight byte, active, weight stall, weight shift, non-matrix, TOPS
    ("MLP0", 200, 12.7, 53.9, 15.9, 17.5, 12.3),
    ("MLP1", 168, 10.6, 44.2, 13.4, 31.9, 9.7),
    ("LSTM0", 64, 8.2, 58.1, 15.8, 17.9, 3.7),
    ("LSTM1", 96, 10.5, 62.1, 17.1, 10.3, 2.8),
    ("CNN0", 2888, 78.2, 0.0, 0.0, 21.8, 86.0),
    ("CNN1", 1750, 46.2, 28.1, 7.0, 18.7, 14.1),
]

MATRIX_CATEGORIES = ("compute", "weights", "weight_shift")


def run(args, app, ideal):
    """summary.json's total for one app, or exits with the run's message."""
    workload = os.path.join(ROOT, "configs", "workloads", f"tpuv1_{app.lower()}.yaml")
    with tempfile.TemporaryDirectory(prefix="tpuv1_table-") as tmp:
        out = os.path.join(tmp, "out")
        cmd = [args.tpusim, "run", "-c", args.config, "-w", workload, "--model", "cycle", "-o", out]
        for s in args.set:
            cmd += ["--set", s]
        if ideal:
            cmd.append("--ideal-memory")
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"tpuv1_table: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)["total"]


def shares(total):
    """(active, weight stall, weight shift, non-matrix) in % of the cycles, and the non-matrix categories."""
    cats = total["cycles_by_category"]
    whole = sum(cats.values())
    rest = sorted(c for c in cats if c not in MATRIX_CATEGORIES)
    if whole == 0:
        return (0.0, 0.0, 0.0, 0.0), rest
    pct = [100.0 * cats.get(c, 0) / whole for c in MATRIX_CATEGORIES]
    pct.append(100.0 * sum(cats[c] for c in rest) / whole)
    return tuple(pct), rest


def fmt_shares(p):
    return " / ".join(f"{x:.1f}" for x in p)


def main():
    ap = argparse.ArgumentParser(description="The TPU v1 paper's apps on tpusim, as a markdown table.")
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"), help="the tpusim binary")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "tpu_v1.yaml"), help="the chip preset")
    ap.add_argument("--ideal-memory", action="store_true", help="add a column: TOPS with ideal memory")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="passed to every run")
    args = ap.parse_args()
    args.tpusim = os.path.abspath(args.tpusim)
    args.config = os.path.abspath(args.config)

    head = ["app", "paper TOPS", "tpusim TOPS"]
    if args.ideal_memory:
        head.append("tpusim TOPS, ideal memory")
    head += ["bound TOPS (paper roofline)", "bound TOPS (tpusim roofline)", "ops/weight byte (paper)",
             "tpusim MACs/HBM byte", "paper % active / w. stall / w. shift / non-matrix",
             "tpusim % active / w. stall / w. shift / non-matrix"]
    rows = []
    others = set()
    for name, opwb, act, stall, shift, nonm, tops in APPS:
        t = run(args, name, False)
        p, rest = shares(t)
        others.update(rest)
        hbm = t["hbm_read_bytes"] + t["hbm_write_bytes"]
        row = [name, f"{tops:.1f}", f"{t['achieved_ops_per_s'] / 1e12:.1f}"]
        if args.ideal_memory:
            row.append(f"{run(args, name, True)['achieved_ops_per_s'] / 1e12:.1f}")
        row += [f"{min(PEAK_TOPS, opwb * 2 * DDR3_BYTES_PER_S / 1e12):.1f}",
                f"{t['attainable_ops_per_s'] / 1e12:.1f}", f"{opwb}",
                f"{t['macs'] / hbm:.0f}" if hbm else "-",
                fmt_shares((act, stall, shift, nonm)), fmt_shares(p)]
        rows.append(row)

    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    print(f"Paper: Jouppi et al., ISCA 2017, Tables 1 and 3. tpusim: {os.path.relpath(args.config, ROOT)}, "
          f"--model cycle{''.join(' --set ' + s for s in args.set)}.")
    print("Paper roofline bound: min(92, ops per weight byte x 2 x 34 GB/s) TOPS. "
          "Non-matrix here: " + (", ".join(sorted(others)) if others else "nothing") + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
