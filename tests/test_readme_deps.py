#!/usr/bin/python3
"""test_readme_deps.py - the README's Debian packages are the Makefile's.

The Makefile owns the lists: one variable per group, DEB_<group> := names
(DEB_build for make, DEB_<target> for make <target>). The README's Quick
start repeats them as one bullet per target, "- `make X` ...: `names`". This
test reads both files and fails with the difference, group by group.

  /usr/bin/python3 tests/test_readme_deps.py [Makefile README.md]
"""
import re
import sys


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


def main():
    mk_path, rd_path = (sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else ("Makefile", "README.md")
    with open(mk_path) as f:
        mk = makefile_groups(f.read())
    with open(rd_path) as f:
        rd = readme_groups(f.read())
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
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"readme deps: {len(mk)} groups, {sum(len(v) for v in mk.values())} packages, the same in both files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
