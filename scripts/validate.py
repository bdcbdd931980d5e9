#!/usr/bin/python3
"""Every published figure tpusim is compared with, in one table (make validate).

Each row: the figure, its source, the published value, tpusim's, their ratio,
the band a verified figure must stay in, and what tpusim models differently.
A figure is verified when its source was read and tpusim models what it
measures; an unverified one is shown and never fails. The exit status is 1
when a verified figure is outside its band, else 0.

The figures:
  - TPU v1's six apps, measured TOPS (Jouppi et al., "In-Datacenter
    Performance Analysis of a Tensor Processing Unit", ISCA 2017, Table 3,
    row 9) against the cycle model on configs/tpu_v1.yaml
    (scripts/tpuv1_table.py runs them);
  - the chips' peak rates, from their papers and the Cloud TPU
    documentation, against clock x MACs x 2 of the presets;
  - the area and power figures of scripts/area_table.py.

Usage (standard library only; build first with `make`):

    /usr/bin/python3 scripts/validate.py [--tpusim build/tpusim]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import area_table  # noqa: E402
import tpuv1_table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
V1 = "Jouppi et al., ISCA 2017"

# The apps' bands: within 25% of the paper, but LSTM1, which the paper measured at less than half its own roofline
# bound (2.8 against 6.5 TOPS): tpusim reaches its bound, and the band holds it there.
APP_BANDS = {"LSTM1": (1.5, 2.2)}
APP_BAND = (0.8, 1.25)
APP_NOTE = ("no host, PCIe or instruction time; the apps' layers are built to Table 1's totals, not the production "
            "models")

# Peak rates: (preset, figure, source, published TOPS, verified, note)
PEAKS = [
    ("tpu_v1", "TPU v1 peak, int8", f"{V1}, Table 2", 92, True, ""),
    ("tpu_v4", "TPU v4 peak, bf16", "Cloud TPU documentation, TPU v4", 275, True, ""),
    ("tpu_v4i", "TPU v4i peak, bf16", "Jouppi et al., ISCA 2021", 138, True, ""),
    ("tpu_v5e", "TPU v5e peak, bf16", "Cloud TPU documentation, TPU v5e", 197, True, ""),
    ("tpu_v5e", "TPU v5e peak, int8", "Cloud TPU documentation, TPU v5e", 393, False,
     "unverified: tpusim runs every dtype at the bf16 rate (no per-dtype MXU rates yet)"),
]
PEAK_BAND = (0.99, 1.01)


def summary(binary, preset, workload):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        p = subprocess.run([binary, "run", "-c", preset, "-w", workload, "-o", out, "--model", "analytic"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            sys.exit(f"validate.py: {preset} on {workload}: {p.stderr.strip()}")
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)


def share_band(published):
    """A share of the die within 6 points of the floorplan's, as a ratio."""
    return max(0.0, (published - 6) / published), (published + 6) / published


def rows(binary):
    """(figure, source, published, tpusim, ratio, band, verified, note) for every figure."""
    out = []
    args = SimpleNamespace(tpusim=binary, config=os.path.join(ROOT, "configs", "tpu_v1.yaml"), set=[])
    for name, _, _, _, _, _, tops in tpuv1_table.APPS:
        t = tpuv1_table.run(args, name, False)["achieved_ops_per_s"] / 1e12
        out.append((f"TPU v1 {name}, TOPS", f"{V1}, Table 3", tops, t, t / tops, APP_BANDS.get(name, APP_BAND), True,
                    APP_NOTE))
    for preset, figure, source, tops, verified, note in PEAKS:
        peak = summary(binary, preset, "mlp")["peak_ops_per_s"] / 1e12
        out.append((figure, source, tops, peak, peak / tops, PEAK_BAND, verified, note or "clock x MACs x 2"))
    for row, published, value, kind in area_table.figures(binary):
        figure, source, _, _, note = row
        # TPU v1's die within 20% under its bound; the others' bounds are all their papers give
        band = {"bound": (0.8 if "v1" in figure else 0.0, 1.0), "share": share_band(published),
                "value": (0.7, 1.3)}[kind]
        if figure.endswith("TDP") or figure.endswith("max power"):
            band = (0.7, 1.5)     # the peak is every action at once, a bound above what the chip is cooled for
        note = re.sub(r"^[0-9.]+(x| of the bound)(; )?", "", note)
        if not note and band[1] == 1.5:
            note = "the peak: every PE, SRAM port and the memory busy at once, above what a chip is cooled for"
        elif not note and "power" in figure:
            note = "a compute-bound GEMM against the mean over the chip's workloads"
        note = note or "-"
        out.append((figure, source, published, value, value / published, band, True, note))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    binary = os.path.abspath(ap.parse_args().tpusim)
    table = rows(binary)
    print("| figure | source | published | tpusim | ratio | band | verified | what tpusim models differently |")
    print("|---|---|---|---|---|---|---|---|")
    bad = []
    for figure, source, published, value, ratio, band, verified, note in table:
        inside = band[0] <= ratio <= band[1]
        if verified and not inside:
            bad.append(f"{figure}: ratio {ratio:.3f} outside [{band[0]:.2f}, {band[1]:.2f}]")
        print(f"| {figure} | {source} | {published:g} | {value:.4g} | {ratio:.2f} | {band[0]:.2f}-{band[1]:.2f} | "
              f"{'yes' if verified else 'no'} | {note} |")
    for b in bad:
        print(f"validate.py: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
