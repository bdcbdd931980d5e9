#!/usr/bin/python3
"""Checks the include graph of sim/ and models/: no include cycle between modules.

A module is a .c/.h pair (sim/plan.c and sim/plan.h are the module sim/plan).
Module A depends on module B when a file of A includes a header of B. A stage
includes only headers of stages below it, so the graph must have no cycle:
this prints every cycle it finds (each as the modules around it) and exits 1,
or prints the number of modules and edges and exits 0.

Usage: scripts/check_includes.py [ROOT]   (ROOT: the checkout, default .)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    files = []
    for top in ('sim', 'models'):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in names if n.endswith(('.c', '.h', '.cpp'))]
    return files


def graph(root):
    files = modules(root)
    stem = lambda f: os.path.relpath(os.path.splitext(f)[0], root)
    mods = {stem(f) for f in files}
    by_base = {}
    for m in mods:
        by_base.setdefault(os.path.basename(m), []).append(m)
    edges = {m: set() for m in mods}
    for f in files:
        with open(f, errors='replace') as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(stem(f)), os.path.splitext(inc)[0]))
            if target not in mods:
                # -Isim -Imodels and the folders of sim/: a header found by its name.
                cands = by_base.get(os.path.basename(os.path.splitext(inc)[0]), [])
                target = cands[0] if len(cands) == 1 else None
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    edges = graph(root)
    found = cycles(edges)
    for comp in found:
        print('include cycle among: ' + ', '.join(comp))
    if found:
        return 1
    print('include graph: %d modules, %d edges, no cycle' % (len(edges), sum(len(v) for v in edges.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main())
