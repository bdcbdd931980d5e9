#!/usr/bin/python3
"""
test_lab_page.py - the page of `tpusim lab --html` in a real browser.

Writes the page for the 10x6x5 GEMM on lab_4x4 (A 10 x 6, B 6 x 5, int8),
opens it in headless Chromium at file:///...#cycle=N (the page's own step()
moves it there, one cycle at a time) and reads the PE cells it shows for ws,
os and is. They must equal

  - the values worked out here from A and B by the rules of sim/exec/functional.h
    (the fold order and start cycles are derived by hand in the comments, as
    in tests/test_lab.c), and
  - what `tpusim lab --cycles N..N --dataflow DF` prints for the same seed,
    every register of every PE;

and at the last cycle each dataflow's C must equal a plain GEMM of A and B.
The controls (step, back, the scrub bar, play and pause) are clicked from a
page that frames the lab page, with virtual time. `--format json` must show
the same registers as the terminal.
Chromium missing is a failure: the Makefile installs it (Debian chromium).
Run by make test with TPUSIM naming the binary.
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")
CHROMIUM = "/usr/bin/chromium"
CONFIG = "configs/lab_4x4.yaml"
M, K, N = 10, 6, 5
SEED = "11"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def tpusim(*args):
    p = subprocess.run([TPUSIM, "lab", "-c", CONFIG, "--gemm", "%dx%dx%d" % (M, K, N), "--seed", SEED] + list(args),
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("tpusim lab %s: status %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


class Cells(html.parser.HTMLParser):
    """The text of every element with an id (the page puts no elements inside a register's span)."""

    def __init__(self):
        super().__init__()
        self.text, self.open = {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.open.append(a.get("id"))
        if a.get("id"):
            self.text[a["id"]] = ""

    def handle_endtag(self, tag):
        if self.open:
            self.open.pop()

    def handle_data(self, data):
        for i in self.open:
            if i:
                self.text[i] += data


def browse(page, cycle, profile):
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit("test_lab_page: %s is missing (Debian package chromium; make installs it)" % CHROMIUM)
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                        "--dump-dom", "file://%s#cycle=%d" % (page, cycle)],
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0 or "<html" not in p.stdout:
        sys.exit("chromium: status %d: %s" % (p.returncode, p.stderr[-2000:]))
    c = Cells()
    c.feed(p.stdout)
    return c.text


# The controls, driven from a page that holds the lab page in a frame (file:// pages may reach each other only
# with --allow-file-access-from-files); the log goes into its own DOM, read with --dump-dom.
CONTROLS = """<html><body><pre id="out"></pre><iframe id="f" src="lab.html#cycle=2"></iframe><script>
const log = [];
document.getElementById('f').addEventListener('load', () => {
  const d = document.getElementById('f').contentWindow.document, cyc = () => d.getElementById('cycle').textContent;
  log.push(cyc());
  d.getElementById('step').click(); d.getElementById('step').click(); log.push(cyc());
  d.getElementById('back').click(); log.push(cyc());
  const s = d.getElementById('scrub'); s.value = 30; s.dispatchEvent(new Event('input'));
  log.push(cyc() + ': ' + d.getElementById('ws-fold').textContent);
  d.getElementById('play').click(); log.push(d.getElementById('play').textContent);
  setTimeout(() => {
    d.getElementById('play').click(); log.push(d.getElementById('play').textContent + ' at ' + cyc());
    document.getElementById('out').textContent = log.join('|');
  }, 2100);
});
</script></body></html>"""


def controls(tmp, profile):
    with open(os.path.join(tmp, "controls.html"), "w") as f:
        f.write(CONTROLS)
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                        "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom",
                        "file://%s/controls.html" % tmp], capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="out">(.*?)</pre>', p.stdout, re.S)
    return m.group(1).split("|") if m else []


def terminal_grid(out, cycle, df):
    """{(i, j, reg): text} from the grid lab prints for cycle."""
    lines = out.split("\n")
    at = [k for k, l in enumerate(lines) if l.startswith("cycle %d of " % cycle)]
    check(len(at) == 1, "%s: cycle %d printed %d times" % (df, cycle, len(at)))
    k = at[0] + 2
    regs = ["a", "b", "acc", "out"] if df == "os" else ["w", "x", "p"]
    cells = {}
    for i in range(4):
        for l, r in enumerate(regs):
            row = lines[k + i * len(regs) + l][6:].split(" | ")
            check(len(row) == 4, "%s: %d cells in a grid line" % (df, len(row)))
            for j, cell in enumerate(row):
                m = re.fullmatch(r"\s*(\w+)\s+(\S+)(?:\s+\[\s*(\S+)\])?\s*", cell)
                check(m is not None and m.group(1) == r, "%s: cell %r is not %s" % (df, cell, r))
                cells[(i, j, r)] = m.group(2)
                if r == "w":
                    cells[(i, j, "s")] = m.group(3)
    return cells


def main():
    tmp = tempfile.mkdtemp(prefix="tpusim-lab-page-")
    try:
        page = os.path.join(tmp, "lab.html")
        wrote = tpusim("--html", page)
        check("ws 47 cycles" in wrote and "os 41 cycles" in wrote and "is 38 cycles" in wrote, "cycles: " + wrote)
        text = open(page).read()
        data = json.loads(re.search(r'<script type="application/json" id="lab-data">\n(.*?)\n</script>', text, re.S).group(1))
        A = data["A"]
        B = data["B"]
        C = [[sum(A[i][k] * B[k][j] for k in range(K)) for j in range(N)] for i in range(M)]
        # The operands are the ones lab prints for the same seed.
        out = tpusim("--cycles", "0..0")
        for name, mat in (("A", A), ("B", B)):
            got = out.split("\n%s =\n" % name)[1].split("\n")[:len(mat)]
            check([[int(v) for v in l.split()] for l in got] == mat, "%s differs between the page and the terminal" % name)

        profile = os.path.join(tmp, "profile")
        # Each case: dataflow, cycle, the fold line, and {(i, j, reg): value} by hand from the rules.
        cases = []

        # ws: folds (K 0..3, N 0..3), (K 4..5, N 0..3), (K 0..3, N 4), (K 4..5, N 4); s = 4, 14, 24, 34.
        # Cycle 22: fold 1 streams (step 22 - 14 = 8; steps, like folds and cycles, count from 0); its first input reached every PE (14 + i + j <= 22),
        # so the bank in use holds B[4 + i][j] (i < 2). Input row t meets PE(i, j) at 14 + t + i + j:
        # x = A[t][4 + i]; p holds what the MAC of the cycle before wrote, row t = 22 - 1 - 14 - i - j summed
        # over rows 0..i (rows below fold 1's two pass it on). Fold f's tile goes to bank f mod 2 and a PE
        # shows first the bank of the last input that reached it: fold 2's tile (column 0, in place from
        # L_2 + 0 + 4 = 13 + 4: fold 0's last input read its bank at 13) is in the other bank of rows 0 and 1 (last input: fold 1), the first of rows 2 and 3
        # (last input: fold 0, bank 0).
        exp = {}
        for i in range(4):
            for j in range(4):
                if i < 2:
                    exp[(i, j, "w")] = B[4 + i][j]
                    exp[(i, j, "x")] = A[22 - 14 - i - j][4 + i]
                t = 22 - 1 - 14 - i - j
                if 0 <= t < 10:
                    exp[(i, j, "p")] = sum(A[t][4 + r] * B[4 + r][j] for r in range(min(i, 1) + 1))
            exp[(i, 0, "s" if i < 2 else "w")] = B[i][4]
        cases.append(("ws", 22, "fold 1 of 4 (M 0..9, K 4..5, N 0..3) streaming, step 8 of 10", exp))

        # os: folds M 0..3, 4..7, 8..9 (N 0..3), then the same for N 4; T = K = 6; s = 0, 6, 12, ...
        # Cycle 10: fold 1 (M 4..7, N 0..3) streams, step 10 - 6 = 4; element t of row i meets column j at
        # 6 + t + i + j: a = A[4 + i][t], b = B[t][j] where that wave has arrived (i + j <= 4), and
        # fold 0's wave (t = 10 - i - j) elsewhere. acc holds the t MACs before this cycle's.
        exp = {}
        for i in range(4):
            for j in range(4):
                f, t = (1, 4 - i - j) if i + j <= 4 else (0, 10 - i - j)
                if 0 <= t < 6:
                    exp[(i, j, "a")] = A[4 * f + i][t]
                    exp[(i, j, "b")] = B[t][j]
                if 0 < t < 6:
                    exp[(i, j, "acc")] = sum(A[4 * f + i][u] * B[u][j] for u in range(t))
        cases.append(("os", 10, "fold 1 of 6 (M 4..7, K 0..5, N 0..3) streaming, step 4 of 6", exp))

        # is: folds (M 0..3: K 0..3, K 4..5), (M 4..7: ...), (M 8..9: ...); T = N = 5; s = 4, 9, 14, 19, 24, 29.
        # Cycle 17: fold 2 (K 0..3, M 4..7) streams, step 17 - 14 = 3; PEs its first input reached (i + j <= 3) hold
        # A[4 + j][i]; column t of B meets PE(i, j) at 14 + t + i + j: x = B[i][t]; p, from the cycle
        # before, column t = 17 - 1 - 14 - i - j summed over rows 0..i.
        exp = {}
        for i in range(4):
            for j in range(4 - i):
                exp[(i, j, "w")] = A[4 + j][i]
                exp[(i, j, "x")] = B[i][17 - 14 - i - j]
                t = 17 - 1 - 14 - i - j
                if t >= 0:
                    exp[(i, j, "p")] = sum(B[r][t] * A[4 + j][r] for r in range(i + 1))
        cases.append(("is", 17, "fold 2 of 6 (M 4..7, K 0..3, N 0..4) streaming, step 3 of 5", exp))

        for df, cycle, fold, exp in cases:
            shown = browse(page, cycle, profile)
            check(shown.get("cycle") == "cycle %d of 0..46" % cycle, "%s: the page is at %r" % (df, shown.get("cycle")))
            check(shown.get(df + "-fold") == fold, "%s: fold line %r, expected %r" % (df, shown.get(df + "-fold"), fold))
            for (i, j, r), v in exp.items():
                got = shown.get("%s-%d-%d-%s" % (df, i, j, r))
                check(got == str(v), "%s cycle %d PE(%d,%d) %s: page shows %r, expected %d" % (df, cycle, i, j, r, got, v))
            term = terminal_grid(tpusim("--dataflow", df, "--cycles", "%d..%d" % (cycle, cycle)), cycle, df)
            for (i, j, r), v in term.items():
                got = shown.get("%s-%d-%d-%s" % (df, i, j, r))
                check(got == v, "%s cycle %d PE(%d,%d) %s: page shows %r, the terminal %r" % (df, cycle, i, j, r, got, v))
            check(len(term) == 64, "%s: %d registers in the terminal grid, expected 4 x 4 x 4" % (df, len(term)))
            # --format json: the same registers, null for ".".
            js = json.loads(tpusim("--dataflow", df, "--cycles", "%d..%d" % (cycle, cycle), "--format", "json"))
            check([x["cycle"] for x in js["cycles"]] == [cycle], "%s: json cycles %r" % (df, [x["cycle"] for x in js["cycles"]]))
            pe = js["cycles"][0]["pe"]
            for (i, j, r), v in term.items():
                got = pe[i][j]["w_other" if r == "s" else r]
                check(("." if got is None else str(got)) == v, "%s cycle %d PE(%d,%d) %s: json %r, the terminal %r" % (df, cycle, i, j, r, got, v))
            check(js["A"] == A and js["B"] == B and js["C"] == C, "%s: json operands or reference differ" % df)

        # Step, back, the scrub bar, play (2.1 s of virtual time at the default 400 ms a cycle: 5 cycles), pause.
        # Cycle 30 in ws: fold 2 (K 0..3, N 4) started at 24, step 30 - 24 = 6.
        got = controls(tmp, profile)
        want = ["cycle 2 of 0..46", "cycle 4 of 0..46", "cycle 3 of 0..46",
                "cycle 30 of 0..46: fold 2 of 4 (M 0..9, K 0..3, N 4..4) streaming, step 6 of 10", "pause",
                "play at cycle 35 of 0..46"]
        check(got == want, "controls: %r, expected %r" % (got, want))

        # The last cycle: every dataflow's C is the plain GEMM.
        shown = browse(page, 46, profile)
        for df in ("ws", "os", "is"):
            got = [[shown.get("%s-C-%d-%d" % (df, i, j)) for j in range(N)] for i in range(M)]
            check(got == [[str(v) for v in row] for row in C], "%s: C at the end is %r, A B is %r" % (df, got, C))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("test_lab_page: FAIL:", f, file=sys.stderr)
    print("test_lab_page: %d checks failed" % len(failures) if failures else "test_lab_page: ok", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
