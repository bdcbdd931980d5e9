#!/usr/bin/python3
"""Checks the include graph of sim/ and models/: no include cycle between
modules, and no stage that includes a header of a stage above it.

A module is a .c/.h pair (sim/plan/plan.c and sim/plan/plan.h are the module sim/plan/plan);
an internal header with no .c of its own, named after a module and a suffix
(sim/tools/sweep_int.h), belongs to that module.
Module A depends on module B when a file of A includes a header of B. A stage
includes only headers of stages below it, so the graph must have no cycle:
this prints every cycle it finds (each as the modules around it) and exits 1,
or prints the number of modules and edges and exits 0.

The stages, lowest first, are the folders of STAGES (README: Layout); the
public header sim/tpusim.h includes nothing and counts as the lowest.

Usage: scripts/check_includes.py [ROOT]   (ROOT: the checkout, default .)
"""
import os
import re
import sys

STAGES = ['sim', 'sim/base', 'models', 'sim/input', 'sim/lower', 'sim/plan', 'sim/trace', 'sim/exec', 'sim/run',
          'sim/report', 'sim/api', 'sim/tools', 'sim/cli']

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    files = []
    for top in ('sim', 'models'):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in names if n.endswith(('.c', '.h', '.cpp'))]
    return files


def graph(root):
    files = modules(root)
    raw = lambda f: os.path.relpath(os.path.splitext(f)[0], root)
    with_code = {raw(f) for f in files if not f.endswith('.h')}
    owner = {}
    for f in files:
        m = raw(f)
        if m not in with_code:
            # an internal header: the longest module whose name and '_' start it
            parts = m.split('_')
            for k in range(len(parts) - 1, 0, -1):
                if '_'.join(parts[:k]) in with_code:
                    m = '_'.join(parts[:k])
                    break
        owner[raw(f)] = m
    stem = lambda f: owner[raw(f)]
    mods = set(owner.values())
    by_base = {}
    for m in owner:
        by_base.setdefault(os.path.basename(m), []).append(m)
    edges = {m: set() for m in mods}
    for f in files:
        with open(f, errors='replace') as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(raw(f)), os.path.splitext(inc)[0]))
            if target not in owner:
                # -Isim -Imodels and the folders of sim/: a header found by its name.
                cands = by_base.get(os.path.basename(os.path.splitext(inc)[0]), [])
                target = cands[0] if len(cands) == 1 else None
            target = owner.get(target, target)
            if target and target != stem(f):
                edges[stem(f)].add(target)
    return edges


def cycles(edges):
    """Every strongly connected component of more than one module (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def upward(edges):
    """(module, header's module) where a module includes one of a higher stage, or of no stage."""
    rank = lambda m: STAGES.index(os.path.dirname(m)) if os.path.dirname(m) in STAGES else None
    out = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if rank(a) is None or rank(b) is None or rank(b) > rank(a):
                out.append((a, b))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    edges = graph(root)
    found = cycles(edges)
    for comp in found:
        print('include cycle among: ' + ', '.join(comp))
    up = upward(edges)
    for a, b in up:
        print('%s includes %s, of a stage above it (or of no stage: STAGES)' % (a, b))
    if found or up:
        return 1
    print('include graph: %d modules, %d edges, no cycle' % (len(edges), sum(len(v) for v in edges.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main())
