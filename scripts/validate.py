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
  - the chips' peak rates at each dtype, from their papers and the Cloud
    TPU documentation, against clock x MACs x rate x 2 of the presets;
  - the area and power figures of scripts/area_table.py;
  - MLPerf Inference results per chip (MLCommons, inference_results_v4.0,
    closed division, Google's submissions), unverified: tpusim runs what it
    can of the benchmark (docs/validation/*.yaml say what is assumed).

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

# Peak rates: (preset, dtype, figure, source, published TOPS, verified, note)
CLOUD = "Cloud TPU documentation"
# A clock no source gives is derived from the bf16 peak: that row checks only that the preset's MACs and rate agree
# with the clock it derived (it moves when they change), and the chip's other rates are the test.
DERIVED = "the clock is derived from this figure: a check of the preset's MACs against it"
PEAKS = [
    ("tpu_v1", "int8", "TPU v1 peak, int8", f"{V1}, Table 2", 92, True, ""),
    ("tpu_v4", "bf16", "TPU v4 peak, bf16", f"{CLOUD}, TPU v4", 275, True, ""),
    ("tpu_v4", "int8", "TPU v4 peak, int8", f"{CLOUD}, TPU v4", 275, True, "int8 at the bf16 rate"),
    ("tpu_v4i", "bf16", "TPU v4i peak, bf16", "Jouppi et al., ISCA 2021", 138, True, ""),
    ("tpu_v4i", "int8", "TPU v4i peak, int8", "Jouppi et al., ISCA 2021", 138, True, "int8 at the bf16 rate"),
    ("tpu_v5e", "bf16", "TPU v5e peak, bf16", f"{CLOUD}, TPU v5e", 197, True, DERIVED),
    ("tpu_v5e", "int8", "TPU v5e peak, int8", f"{CLOUD}, TPU v5e", 393, True, "int8 packs 2 of K per PE"),
    ("tpu_v5p", "bf16", "TPU v5p peak, bf16", f"{CLOUD}, TPU v5p", 459, True, DERIVED),
    ("tpu_v5p", "int8", "TPU v5p peak, int8", "Austin et al., How to Scale Your Model (2025), part 2", 918, True,
     "int8 packs 2 of K per PE"),
    ("tpu_v5p", "fp8", "TPU v5p peak, fp8", f"{CLOUD}, TPU v5p", 459, True, "fp8 at the bf16 rate"),
    ("tpu_v6e", "bf16", "TPU v6e peak, bf16", f"{CLOUD}, TPU v6e", 918, True,
     DERIVED + "; 4 MXUs (one revision of the page says 2)"),
    ("tpu_v6e", "int8", "TPU v6e peak, int8", f"{CLOUD}, TPU v6e", 1836, True, "int8 packs 2 of K per PE"),
    ("tpu_v6e", "fp8", "TPU v6e peak, fp8", f"{CLOUD}, TPU7x", 918, True, "fp8 at the bf16 rate"),
    ("tpu_v7", "bf16", "TPU7x peak, bf16", f"{CLOUD}, TPU7x", 2307, True,
     DERIVED + "; the MXUs assumed as v6e's"),
    ("tpu_v7", "fp8", "TPU7x peak, fp8", f"{CLOUD}, TPU7x", 4614, True, "fp8 packs 2 of K per PE"),
]
PEAK_BAND = (0.99, 1.01)

# MLPerf Inference v4.0, closed, datacenter: GPT-J 6B (gptj-99), Offline, on Google's tpu-v5e-4 (4 chips, int8,
# batch 32): 10.1502 samples/s (results/tpu_v5e_x4/gptj-99/offline/performance/run_1/mlperf_log_summary.txt),
# 2.54 per chip. tpusim: one chip, a replica of batch 8 (32 over the 4 chips, assumed), the 800-token prefill
# and 128 decode steps of docs/validation/gptj_*.yaml.
MLPERF_GPTJ = ("MLPerf Inference v4.0 GPT-J 99 Offline, tpu_v5e, samples/s per chip",
               "MLCommons inference_results_v4.0, closed/Google, tpu_v5e_x4", 10.1502 / 4)
GPTJ_OUT_TOKENS = 128
GPTJ_NOTE = ("unverified: one replica of batch 8 per chip, an 800-token prompt and 128 tokens out assumed (not the "
             "dataset's lengths); no host, serving or sampling time; attention and MLP run one after the other")


def summary(binary, preset, workload, sets=()):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        extra = [a for s in sets for a in ("--set", s)]
        p = subprocess.run([binary, "run", "-c", preset, "-w", workload, "-o", out, "--model", "analytic"] + extra,
                           cwd=ROOT,
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
    for preset, dtype, figure, source, tops, verified, note in PEAKS:
        peak = summary(binary, preset, "mlp", [f"array.dtype={dtype}"])["peak_ops_per_s"] / 1e12
        out.append((figure, source, tops, peak, peak / tops, PEAK_BAND, verified, note or "clock x MACs x 2"))
    figure, source, published = MLPERF_GPTJ
    runs = {}
    for step in ("prefill", "decode"):
        s = summary(binary, "tpu_v5e", os.path.join("docs", "validation", f"gptj_{step}.yaml"), ["array.dtype=int8"])
        runs[step] = (s["total"]["cycles"] / (s["clock_ghz"] * 1e9), s["batch"])
    seconds = runs["prefill"][0] + GPTJ_OUT_TOKENS * runs["decode"][0]
    value = runs["prefill"][1] / seconds
    out.append((figure, source, published, value, value / published, (0.5, 2.0), False, GPTJ_NOTE))
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
