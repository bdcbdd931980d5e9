#!/usr/bin/python3
"""Regenerates tests/golden/presets.csv: the totals of every shipped preset on
every shipped workload, as the e2e suite runs them (analytic ws, os, is; the
cycle engine on ws where the program has at most 20 M folds).

With --train, tests/golden/train.csv instead: training steps (TRAIN_PRESETS
x TRAIN_WORKLOADS x the analytic and cycle models, ws, AdamW, no
recomputation) with their cycles by phase, which the train suite checks.

The file is a regression fence, not a proof of correctness: a change that
moves a number on purpose regenerates it and says which numbers moved and why.

    scripts/golden.py [build/tpusim] > tests/golden/presets.csv
    scripts/golden.py --train [build/tpusim] > tests/golden/train.csv
"""
import json
import os
import subprocess
import sys
import tempfile

PRESETS = ["tpu_v1", "tpu_v4_mxu", "gemmini", "edge_32x32", "lab_4x4", "tpu_v4", "tpu_v4i", "tpu_v5e", "tpu_v5p",
           "tpu_v6e", "tpu_v7"]
WORKLOADS = [
    "configs/workloads/resnet50.yaml", "configs/workloads/mobilenet_v2.yaml",
    "configs/workloads/bert_base.yaml", "configs/workloads/llm7b_prefill.yaml",
    "configs/workloads/llm7b_decode.yaml", "configs/workloads/mlp.yaml",
    "configs/workloads/vit_b16.yaml", "configs/workloads/gpt2_decode.yaml",
    "traces/alexnet.csv", "traces/gemm_example.csv",
]
BUFS = ["weights", "inputs", "outputs"]
TRAIN_PRESETS = ["tpu_v4", "tpu_v5p", "tpu_v4_mxu"]
TRAIN_WORKLOADS = ["configs/workloads/mlp.yaml", "configs/workloads/resnet50.yaml", "configs/workloads/bert_base.yaml"]
PHASES = ["forward", "backward", "recompute", "optimizer", "bubble"]
ENGINE_MAX_FOLDS = 20_000_000


def run(binary, preset, wl, model, df, *more):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([binary, "run", "-c", f"configs/{preset}.yaml", "-w", wl, "-o", d,
                        "--model", model, "--dataflow", df, *more],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "summary.json")) as f:
            return json.load(f)


def row(preset, wl, model, df, summary):
    t = summary["total"]
    cols = [preset, wl, model, df, t["cycles"], t["hbm_read_bytes"], t["hbm_write_bytes"], t["folds"]]
    cols += list(t["cycles_by_category"].values())
    cols += [t["sram_read_bytes"][b] for b in BUFS] + [t["sram_write_bytes"][b] for b in BUFS]
    cols += ["%.17g" % t["energy_pj"], "%.17g" % summary["area_mm2"]]
    return ",".join(str(c) for c in cols)


def train_main(binary):
    print("preset,workload,model,cycles,hbm_read_bytes,hbm_write_bytes,macs,"
          + ",".join("cycles_" + p for p in PHASES) + ",saved_activation_bytes,hbm_bytes_needed")
    for p in TRAIN_PRESETS:
        for wl in TRAIN_WORKLOADS:
            for model in ["analytic", "cycle"]:
                s = run(binary, p, wl, model, "ws", "--train")
                t = s["total"]
                cols = [p, wl, model, t["cycles"], t["hbm_read_bytes"], t["hbm_write_bytes"], t["macs"]]
                cols += [s["cycles_by_phase"][ph] for ph in PHASES]
                cols += ["%.17g" % s["saved_activation_bytes"], "%.17g" % s["hbm_bytes_needed"]["total"]]
                print(",".join(str(c) for c in cols))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--train":
        train_main(args[1] if len(args) > 1 else "build/tpusim")
        return
    binary = args[0] if args else "build/tpusim"
    header = False
    for p in PRESETS:
        for wl in WORKLOADS:
            folds = 0
            for df in ["os", "is", "ws"]:
                t = run(binary, p, wl, "analytic", df)
                if not header:
                    # the categories in the order the simulator reports them
                    cats = list(t["total"]["cycles_by_category"])
                    print("preset,workload,model,dataflow,cycles,hbm_read_bytes,hbm_write_bytes,folds,"
                          + ",".join("cycles_" + c for c in cats) + ","
                          + ",".join("sram_%s_read_bytes" % b for b in BUFS) + ","
                          + ",".join("sram_%s_write_bytes" % b for b in BUFS) + ",energy_pj,area_mm2")
                    header = True
                print(row(p, wl, "analytic", df, t))
                folds = t["total"]["folds"]
            if folds <= ENGINE_MAX_FOLDS:
                print(row(p, wl, "cycle", "ws", run(binary, p, wl, "cycle", "ws")))


if __name__ == "__main__":
    main()
