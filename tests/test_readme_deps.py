#!/usr/bin/python3
"""test_readme_deps.py - what the README says about the build is the Makefile's,
and the numbers it quotes are the tool's.

The Makefile owns the package lists: one variable per group, DEB_<group> :=
names (DEB_build for make, DEB_<target> for make <target>). The README's Quick
start repeats them as one bullet per target, "- `make X` ...: `names`", and
elsewhere it may say "Debian `name`, which `make X` installs". The Quick start
also names the binary make builds (the Makefile's BIN). The energy table
("Whole networks, batch 1, cycle engine") is rerun with the tool ($TPUSIM, or
build/tpusim) and compared as printed, and so is the TPU v1 table (the rows
scripts/tpuv1_table.py --ideal-memory prints) and the area and power table
(scripts/area_table.py), the validation table (scripts/validate.py, which
must pass), and the worked sweep's answer (docs/sweep/budget.yaml
swept again, the rows scripts/sweep_best.py prints). Fails with every difference.

  /usr/bin/python3 tests/test_readme_deps.py [Makefile README.md]
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def makefile_groups(text):
    """{group: [packages]} from the DEB_<group> := ... lines (no references to other variables)."""
    groups = {}
    for m in re.finditer(r"^DEB_(\w+)\s*:=(.*)$", text, re.M):
        names = m.group(2).split()
        bad = [n for n in names if "$" in n]
        if bad:
            raise SystemExit(f"Makefile: DEB_{m.group(1)}: expected package names, found {' '.join(bad)}")
        groups[m.group(1)] = names
    return groups


def readme_groups(text):
    """{group: [packages]} from the bullets of the Quick start section, before its first code block."""
    start = text.find("## Quick start")
    if start < 0:
        raise SystemExit("README.md: expected a Quick start section, found none")
    end = text.find("```", start)
    section = text[start:end]
    groups = {}
    # A bullet runs until the next bullet or a blank line; its first backquoted text is the target.
    for m in re.finditer(r"^- (.*?)(?=^- |^\s*$)", section, re.M | re.S):
        item = " ".join(m.group(1).split())
        t = re.match(r"`make( [\w-]+)?`[^`]*?: `([^`]+)`", item)
        if not t:
            continue
        group = t.group(1).strip() if t.group(1) else "build"
        if group in groups:
            raise SystemExit(f"README.md: make {group}: listed twice")
        groups[group] = t.group(2).split()
    return groups


def makefile_bin(text):
    """The binary make builds, $(BIN) with $(BUILD) as the plain (not SAN=1) build sets it."""
    build = [m.group(1) for m in re.finditer(r"^\s*BUILD\s*:=\s*(\S+)\s*$", text, re.M)]
    b = re.search(r"^BIN\s*:=\s*(\S+)\s*$", text, re.M)
    if not b or "build" not in build:
        raise SystemExit("Makefile: expected BUILD := build and BIN := ..., found neither")
    return b.group(1).replace("$(BUILD)", "build")


def quick_start(text):
    start = text.find("## Quick start")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def package_mentions(text):
    """[(package, group)] from "Debian `a`, which `make X` installs" anywhere in the README."""
    found = []
    for m in re.finditer(r"Debian ((?:`[^`]+`(?:,? and |, )?)+),?\s+which\s+`make( [\w-]+)?`\s+installs", text):
        group = m.group(2).strip() if m.group(2) else "build"
        found += [(p, group) for p in re.findall(r"`([^`]+)`", m.group(1))]
    return found


def energy_rows(text):
    """The rows of the whole-network energy table: (line, cells)."""
    at = text.find("Whole networks, batch 1, cycle engine")
    if at < 0:
        raise SystemExit("README.md: expected the table \"Whole networks, batch 1, cycle engine\", found none")
    rows = []
    line = text.count("\n", 0, at) + 1
    for n, l in enumerate(text[at:].split("\n")[2:], line + 2):
        if not l.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        if cells[0] == "network" or set(cells[0]) <= set("-"):
            continue
        rows.append((n, cells))
    return rows


def energy_problems(rd_path, text, binary):
    """The table's cells against a run of each row: energy, pJ/MAC, TOPS/W and the largest part, as printed."""
    problems = []
    for line, cells in energy_rows(text):
        where = f"{rd_path}:{line}"
        names = [re.findall(r"`([^`]+)`", c) for c in cells[:2]]
        if len(cells) != 6 or not names[0] or not names[1]:
            problems.append(f"{where}: expected | network (`workload`) | `preset` ... | energy | pJ/MAC | TOPS/W | "
                            f"largest part |, found {' | '.join(cells)}")
            continue
        workload, preset = f"configs/workloads/{names[0][0]}.yaml", names[1][0]
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([binary, "run", "-c", preset, "-w", workload, "-o", d], check=True,
                           stdout=subprocess.DEVNULL)
            with open(os.path.join(d, "summary.json")) as f:
                summary = json.load(f)
        t = summary["total"]
        pj = t["energy_pj"] / t["macs"]
        if abs(pj - t["pj_per_mac"]) > 1e-9 * pj or abs(2 / pj - t["tops_per_w"]) > 1e-9 * t["tops_per_w"]:
            problems.append(f"{where}: the tool's pj_per_mac {t['pj_per_mac']} and tops_per_w {t['tops_per_w']} "
                            f"are not energy_pj / macs = {pj} and 2 / that")
        part, pj_part = max(t["energy_pj_by_component"].items(), key=lambda kv: kv[1])
        memory = "DRAM" if summary["config"]["hbm"]["type"] in ("ddr3", "lpddr4") else "HBM"
        want = [f"{t['energy_pj'] / 1e9:.1f} mJ", f"{pj:.2f}", f"{2 / pj:.2f}",
                f"{memory if part == 'hbm' else '`' + part + '`'} {pj_part / 1e9:.1f} mJ"]
        for col, (have, should) in enumerate(zip(cells[2:], want)):
            if have != should:
                problems.append(f"{where}: {names[0][0]} on {preset}: {['energy', 'pJ/MAC', 'TOPS/W', 'largest part'][col]}: "
                                f"the README says {have}, tpusim says {should}")
    return problems


def table_problems(rd_path, text, binary, script, args, title):
    """A README table that a script in scripts/ prints: every row it prints, as printed."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", script)
    out = subprocess.run([sys.executable, script, *args, "--tpusim", binary], check=True,
                         capture_output=True, text=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("|")]
    problems = [] if len(rows) > 2 else [f"{script}: expected a table, found {out!r}"]
    lines = text.splitlines()
    for row in rows:
        if row not in lines:
            name = row.split("|")[1].strip()
            have = next((f"{i + 1}: {l}" for i, l in enumerate(lines) if l.startswith(f"| {name} |")), "no such row")
            problems.append(f"{rd_path}: {title} table: expected {row}, found at line {have}")
    return problems


def budget_problems(rd_path, text, binary):
    """The worked sweep's answer: docs/sweep/budget.yaml swept again, and every row scripts/sweep_best.py prints."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "budget")
        subprocess.run([binary, "sweep", os.path.join(root, "docs", "sweep", "budget.yaml"), "-o", out, "-j", "2"],
                       cwd=root, check=True, stdout=subprocess.DEVNULL)
        best = subprocess.run([sys.executable, os.path.join(root, "scripts", "sweep_best.py"), out, "--max",
                               "area_mm2=100"], check=True, capture_output=True, text=True).stdout
    rows = [line for line in best.splitlines() if line.startswith("|")]
    problems = [] if len(rows) == 4 else [f"sweep_best.py: expected a table of two networks, found {best!r}"]
    lines = text.splitlines()
    for row in rows:
        if row not in lines:
            problems.append(f"{rd_path}: the worked sweep's answer: expected {row}, found no such row")
    return problems


def main():
    mk_path, rd_path = (sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else ("Makefile", "README.md")
    with open(mk_path) as f:
        mk_text = f.read()
    mk = makefile_groups(mk_text)
    with open(rd_path) as f:
        rd_text = f.read()
    rd = readme_groups(rd_text)
    problems = []
    if not mk:
        problems.append(f"{mk_path}: expected DEB_<group> lists, found none")
    for g in sorted(set(mk) | set(rd)):
        target = "make" if g == "build" else f"make {g}"
        if g not in rd:
            problems.append(f"{rd_path}: `{target}`: not listed (the Makefile's DEB_{g}: {' '.join(mk[g])})")
            continue
        if g not in mk:
            problems.append(f"{rd_path}: `{target}`: listed, but the Makefile has no DEB_{g}")
            continue
        missing = [p for p in mk[g] if p not in rd[g]]
        extra = [p for p in rd[g] if p not in mk[g]]
        if missing or extra:
            problems.append(f"{rd_path}: `{target}`: differs from the Makefile's DEB_{g}: "
                            f"missing {' '.join(missing) or 'nothing'}; extra {' '.join(extra) or 'nothing'}")
    for p, g in package_mentions(rd_text):
        target = "make" if g == "build" else f"make {g}"
        if p not in mk.get(g, []):
            owner = [h for h in mk if p in mk[h]]
            problems.append(f"{rd_path}: Debian `{p}`, which `{target}` installs: not in the Makefile's DEB_{g}"
                            + (f" (it is in DEB_{owner[0]})" if owner else ""))
    binary = makefile_bin(mk_text)
    if f"`{binary}`" not in quick_start(rd_text):
        problems.append(f"{rd_path}: Quick start: expected the binary make builds, `{binary}`, found no mention")
    problems += energy_problems(rd_path, rd_text, os.environ.get("TPUSIM", binary))
    tool = os.path.abspath(os.environ.get("TPUSIM", binary))
    problems += table_problems(rd_path, rd_text, tool, "tpuv1_table.py", ["--ideal-memory"], "TPU v1")
    problems += table_problems(rd_path, rd_text, tool, "area_table.py", [], "area and power")
    problems += table_problems(rd_path, rd_text, tool, "validate.py", [], "validation")
    problems += budget_problems(rd_path, rd_text, tool)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"readme deps: {len(mk)} groups, {sum(len(v) for v in mk.values())} packages, the same in both files; "
          f"the Quick start names {binary}; the energy, TPU v1, area, validation and worked sweep's tables are the tool's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
