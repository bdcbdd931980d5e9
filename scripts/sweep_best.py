#!/usr/bin/python3
"""The best point of a finished sweep for each workload, under budgets.

Reads DIR/sweep.csv (tpusim sweep SPEC -o DIR) and prints a markdown table:
for each workload (and batch and model, when they are swept), the ok point
with the least --by column among those within every --max budget, with its
axes' values and its cycles, area, energy and power; and how many points
were within the budgets. A workload with no point within them gets a row
that says so.

    /usr/bin/python3 scripts/sweep_best.py DIR [--max area_mm2=100]... [--by cycles]

Standard library only. Exit status 0, or 2 on a bad argument or a sweep.csv
without the columns named.
"""
import argparse
import csv
import os
import sys

SHOWN = ["cycles", "area_mm2", "energy_pj", "power_w"]
GROUPS = ["batch", "model"]


def budget(text):
    col, sep, value = text.partition("=")
    try:
        return col, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected COLUMN=NUMBER, found {text!r}") from None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--max", type=budget, action="append", default=[], metavar="COLUMN=NUMBER")
    ap.add_argument("--by", default="cycles")
    a = ap.parse_args()
    path = os.path.join(a.dir, "sweep.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            header = rows[0].keys() if rows else []
    except OSError as e:
        print(f"{path}: expected a sweep.csv, found {e.strerror}", file=sys.stderr)
        return 2
    metrics = set(SHOWN) | {a.by} | {c for c, _ in a.max}
    missing = sorted(c for c in metrics if c not in header)
    if missing:
        print(f"{path}:1: expected the columns {', '.join(missing)}, found none of that name", file=sys.stderr)
        return 2
    names = list(header)
    axes = names[1:names.index("cycles")]
    groups = [g for g in GROUPS if g in axes]
    shown = [x for x in axes if x not in groups]
    ok = [r for r in rows if r["status"] == "ok"]
    keys = []
    for r in ok:
        k = (r["workload"],) + tuple(r[g] for g in groups)
        if k not in keys:
            keys.append(k)
    print("| " + " | ".join(["workload"] + groups + shown + ["cycles", "area mm2", "energy mJ", "power W",
                                                             "points within"]) + " |")
    print("|" + "---|" * (len(groups) + len(shown) + 6))
    for k in keys:
        mine = [r for r in ok if (r["workload"],) + tuple(r[g] for g in groups) == k]
        fit = [r for r in mine if all(float(r[c]) <= v for c, v in a.max)]
        name = os.path.splitext(os.path.basename(k[0]))[0]
        if not fit:
            print("| " + " | ".join([name, *k[1:]] + ["none"] * (len(shown) + 4) + [f"0 of {len(mine)}"]) + " |")
            continue
        best = min(fit, key=lambda r: (float(r[a.by]), mine.index(r)))
        cells = [name, *k[1:]] + [best[x] for x in shown]
        cells += [best["cycles"], f"{float(best['area_mm2']):.1f}", f"{float(best['energy_pj']) / 1e9:.2f}",
                  f"{float(best['power_w']):.1f}", f"{len(fit)} of {len(mine)}"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
