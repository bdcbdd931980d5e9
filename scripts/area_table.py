#!/usr/bin/python3
"""Area and power of the TPU presets beside the published figures.

Prints a markdown table, one row per published figure: the source, what it
says, tpusim's value and how the two compare. The figures:

  TPU v1   Jouppi et al., "In-Datacenter Performance Analysis of a Tensor
           Processing Unit", ISCA 2017: a die under half of Haswell's 662
           mm2 (Table 2); the floorplan of Fig. 2 (buffers 37%, compute 30%,
           I/O 10%, control 2%, the Unified Buffer 29%, the matrix unit 24%);
           measured 28 W idle and 40 W busy (Table 2), here on its six apps
           weighted as deployed (Table 1: MLPs 61%, LSTMs 29%, CNNs 5%).
  TPU v4i  Jouppi et al., "Ten Lessons From Three Generations Shaped Google's
           TPUv4i", ISCA 2021: a die under 400 mm2; 175 W TDP.
  TPU v4   Jouppi et al., ISCA 2023: a die under 600 mm2; measured power
           min / mean / max 90 / 170 / 192 W (Cloud TPU documentation,
           "TPU v4"), the mean here against a compute-bound 8192^3 bf16 GEMM.

Usage (standard library only; build first with `make`):

    /usr/bin/python3 scripts/area_table.py [--tpusim build/tpusim]

Each run writes to a temporary directory that is removed afterwards; the
analytic model times the runs (the cycle model's power is within 1% on
these). Exit status 0, or 1 when a run fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
V1 = "Jouppi et al., ISCA 2017"
APPS = {"mlp": ["tpuv1_mlp0", "tpuv1_mlp1"], "lstm": ["tpuv1_lstm0", "tpuv1_lstm1"],
        "cnn": ["tpuv1_cnn0", "tpuv1_cnn1"]}
DEPLOYED = {"mlp": 61, "lstm": 29, "cnn": 5}       # Table 1, % of the deployed workload
GEMM = "name: gemm8k\nlayers:\n  - {name: g, type: matmul, m: 8192, k: 8192, n: 8192}\n"


def run(binary, preset, workload):
    with tempfile.TemporaryDirectory() as d:
        if workload.startswith("name:"):
            path = os.path.join(d, "w.yaml")
            with open(path, "w") as f:
                f.write(workload)
            workload = path
        out = os.path.join(d, "out")
        p = subprocess.run([binary, "run", "-c", preset, "-w", workload, "-o", out, "--model", "analytic"],
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            sys.exit(f"area_table.py: {preset} on {workload}: {p.stderr.strip()}")
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)


def share(s, *parts):
    return 100 * sum(s["area_mm2_by_component"][p] for p in parts) / s["area_mm2"]


def figures(binary):
    """The rows of the table, and for scripts/validate.py each one's numbers: (row, published, tpusim, kind), kind
    "bound" (tpusim under the published bound), "share" (percent of the die) or "value"."""
    v1 = run(binary, "tpu_v1", APPS["mlp"][0])
    power = {kind: sum(run(binary, "tpu_v1", a)["total"]["power_w"] for a in apps) / len(apps)
             for kind, apps in APPS.items()}
    busy = sum(DEPLOYED[k] * power[k] for k in power) / sum(DEPLOYED.values())
    v4i = run(binary, "tpu_v4i", APPS["mlp"][0])
    v4 = run(binary, "tpu_v4", GEMM)

    rows = [
        ("TPU v1 die", f"{V1}, Table 2", "< 331 mm2 (half of Haswell's 662)", f"{v1['area_mm2']:.0f} mm2",
         f"{v1['area_mm2'] / 331:.2f} of the bound; follows from the fits below"),
        ("TPU v1 buffers", f"{V1}, Fig. 2", "37%",
         f"{share(v1, 'sram_weights', 'sram_inputs', 'sram_outputs', 'sram_activations'):.1f}%",
         "the Unified Buffer fitted, the rest follows"),
        ("TPU v1 compute", f"{V1}, Fig. 2", "30%", f"{share(v1, 'pe_array', 'vector'):.1f}%",
         "the matrix unit fitted, the vector unit follows"),
        ("TPU v1 I/O", f"{V1}, Fig. 2", "10%", f"{share(v1, 'memory_phy', 'io'):.1f}%",
         "set from it: the DDR3 PHY area and io_mm2"),
        ("TPU v1 control", f"{V1}, Fig. 2", "2%", f"{share(v1, 'control'):.1f}%", "set from it: control_fraction"),
        ("TPU v1 Unified Buffer", f"{V1}, Fig. 2", "29%", f"{share(v1, 'sram_inputs'):.1f}%", "fitted: sram_overhead 3.75"),
        ("TPU v1 matrix unit", f"{V1}, Fig. 2", "24%", f"{share(v1, 'pe_array'):.1f}%", "fitted: logic_overhead 4.5"),
        ("TPU v1 idle power", f"{V1}, Table 2", "28 W", f"{v1['idle_power_w']:.1f} W", "fitted: the 28 nm idle density"),
        ("TPU v1 busy power, apps as deployed", f"{V1}, Tables 1, 2", "40 W", f"{busy:.1f} W",
         f"{busy / 40:.2f}x; MLPs {power['mlp']:.1f}, LSTMs {power['lstm']:.1f}, CNNs {power['cnn']:.1f} W"),
        ("TPU v1 TDP", f"{V1}, Table 2", "75 W", f"peak {v1['peak_power_w']:.1f} W", f"{v1['peak_power_w'] / 75:.2f}x"),
        ("TPU v4i die", "Jouppi et al., ISCA 2021", "< 400 mm2", f"{v4i['area_mm2']:.0f} mm2",
         f"{v4i['area_mm2'] / 400:.2f} of the bound"),
        ("TPU v4i TDP", "Jouppi et al., ISCA 2021", "175 W", f"peak {v4i['peak_power_w']:.1f} W",
         f"{v4i['peak_power_w'] / 175:.2f}x"),
        ("TPU v4 die", "Jouppi et al., ISCA 2023", "< 600 mm2", f"{v4['area_mm2']:.0f} mm2",
         f"{v4['area_mm2'] / 600:.2f} of the bound; the 7 nm idle density is fitted to its 90 W minimum"),
        ("TPU v4 power, mean over its workloads; here an 8192^3 bf16 GEMM", "Cloud TPU documentation, TPU v4", "170 W",
         f"{v4['total']['power_w']:.1f} W", f"{v4['total']['power_w'] / 170:.2f}x"),
        ("TPU v4 max power", "Cloud TPU documentation, TPU v4", "192 W", f"peak {v4['peak_power_w']:.1f} W",
         f"{v4['peak_power_w'] / 192:.2f}x"),
    ]
    buffers = share(v1, 'sram_weights', 'sram_inputs', 'sram_outputs', 'sram_activations')
    numbers = [(331, v1["area_mm2"], "bound"), (37, buffers, "share"), (30, share(v1, 'pe_array', 'vector'), "share"),
               (10, share(v1, 'memory_phy', 'io'), "share"), (2, share(v1, 'control'), "share"),
               (29, share(v1, 'sram_inputs'), "share"), (24, share(v1, 'pe_array'), "share"),
               (28, v1["idle_power_w"], "value"), (40, busy, "value"), (75, v1["peak_power_w"], "value"),
               (400, v4i["area_mm2"], "bound"), (175, v4i["peak_power_w"], "value"), (600, v4["area_mm2"], "bound"),
               (170, v4["total"]["power_w"], "value"), (192, v4["peak_power_w"], "value")]
    return [(r, *n) for r, n in zip(rows, numbers)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpusim", default=os.path.join(ROOT, "build", "tpusim"))
    binary = os.path.abspath(ap.parse_args().tpusim)
    print("| figure | source | published | tpusim | ratio, note |")
    print("|---|---|---|---|---|")
    for r, *_ in figures(binary):
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
