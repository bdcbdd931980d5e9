#!/usr/bin/python3
"""Runs the libFuzzer harnesses (make fuzz-short, make fuzz-long).

For each target: first every input in tests/fuzz/regress/<target>/ once (a
fixed input that once crashed must not crash again), then the fuzzer for
--time seconds over the seeds in tests/fuzz/corpus/<target>/ (read only) and
what earlier long runs added in BUILD/corpus/<target>/ (--short starts from
the seeds alone, in BUILD/short/<target>/). A crash, leak, timeout or
memory blow-up fails the run, unless its reproducer is listed in
tests/fuzz/open (a finding written down in FINDINGS.md, not yet fixed): those
are expected to crash, and a rediscovery of the same finding is reported, not
failed. At the end one row per target: executions, exec/s, coverage (cov, ft
from libFuzzer's final stats), corpus size, new units, findings.

  run.py --build build/fuzz --time 12 --short config workload csv request
  run.py --build build/fuzz --time 3600 --jobs 2 config ...   (the long campaign)
  run.py --build build/fuzz --merge config ...   (adds inputs that reach new code to the seeds)
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OPEN_LIST = os.path.join(HERE, "open")

# Per input: seconds, and memory; both are findings when exceeded.
TIMEOUT_S = 10
RSS_MB = 2048
# --short: at most this many executions per target, whatever the time.
SHORT_RUNS = 3000000
# A run that rediscovers an open finding is restarted at most this often.
MAX_RESTARTS = 5

ENV = dict(os.environ,
           ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:symbolize=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")


def read_open():
    """{(target, file name): signature} from tests/fuzz/open ("target/file signature...")."""
    known = {}
    if not os.path.exists(OPEN_LIST):
        return known
    with open(OPEN_LIST) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            path, _, sig = line.partition(" ")
            target, _, name = path.partition("/")
            known[(target, name)] = sig.strip()
    return known


def crash_signature(log):
    """The line that names a crash: the sanitizer's SUMMARY, a broken contract, or libFuzzer's verdict."""
    for pat in (r"fuzz contract broken: [^\n]*", r"SUMMARY: [^\n]*", r"ERROR: libFuzzer: [^\n]*",
                r"==\d+==ERROR: [^\n]*"):
        m = re.search(pat, log)
        if m:
            return m.group(0)
    return "exit status without a sanitizer report"


def matches(sig, known_sig):
    return bool(known_sig) and re.search(known_sig, sig) is not None


def run(cmd, log_path):
    with open(log_path, "w") as log:
        p = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=log, stderr=subprocess.STDOUT)
        rc = p.wait()
    # A harness that crashed left its scratch files (fuzz.c names them by pid).
    for d in ("/dev/shm", os.environ.get("TMPDIR") or "/tmp"):
        for f in glob.glob(os.path.join(d, "tpusim-fuzz-%d.*" % p.pid)):
            os.unlink(f)
    with open(log_path, errors="replace") as log:
        return rc, log.read()


class Result:
    def __init__(self, target):
        self.target = target
        self.execs = 0
        self.exec_s = 0
        self.cov = self.ft = 0
        self.corpus = 0
        self.new = 0
        self.findings = []    # (kind, text)
        self.failed = False
        self.notes = []


def regress(binary, target, known, logs, res):
    d = os.path.join(HERE, "regress", target)
    files = sorted(f for f in os.listdir(d) if not f.startswith(".") and not f.endswith(".md")) if os.path.isdir(d) else []
    fixed = [f for f in files if (target, f) not in known]
    if fixed:
        rc, log = run([binary, "-timeout=%d" % TIMEOUT_S, "-rss_limit_mb=%d" % RSS_MB] +
                      [os.path.join(d, f) for f in fixed], os.path.join(logs, target + ".regress.log"))
        if rc != 0:
            res.failed = True
            m = re.findall(r"Running: (\S+)", log)
            res.findings.append(("regression", "%s crashes again: %s" % (m[-1] if m else d, crash_signature(log))))
    for (t, f), sig in sorted(known.items()):
        if t != target:
            continue
        path = os.path.join(d, f)
        if not os.path.exists(path):
            res.notes.append("tests/fuzz/open lists %s/%s, which is not in tests/fuzz/regress/" % (t, f))
            continue
        rc, log = run([binary, "-timeout=%d" % TIMEOUT_S, "-rss_limit_mb=%d" % RSS_MB, path],
                      os.path.join(logs, "%s.open.%s.log" % (target, f)))
        if rc == 0:
            res.notes.append("%s/%s no longer crashes: take it out of tests/fuzz/open and mark it fixed in "
                             "FINDINGS.md" % (t, f))
        elif not matches(crash_signature(log), sig):
            res.notes.append("%s/%s crashes another way now: %s" % (t, f, crash_signature(log)))


def fuzz(binary, target, args, known, build, logs, res):
    # make test's short run starts from the seeds every time (the same work on a fresh checkout as
    # here); the long campaign keeps what earlier campaigns found.
    scratch = os.path.join(build, "short" if args.short else "corpus", target)
    if args.short:
        shutil.rmtree(scratch, ignore_errors=True)
    artifacts = os.path.join(build, "artifacts", target) + "/"
    seeds = os.path.join(HERE, "corpus", target)
    os.makedirs(scratch, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    deadline = time.time() + args.time
    runs_left = SHORT_RUNS
    for attempt in range(MAX_RESTARTS + 1):
        left = int(deadline - time.time())
        if left < 1:
            break
        cmd = [binary, scratch, seeds, "-max_total_time=%d" % left, "-timeout=%d" % TIMEOUT_S,
               "-rss_limit_mb=%d" % RSS_MB, "-malloc_limit_mb=%d" % RSS_MB, "-print_final_stats=1",
               "-artifact_prefix=" + artifacts]
        if args.short:
            cmd.append("-runs=%d" % runs_left)
        d = os.path.join(HERE, target + ".dict")
        if os.path.exists(d):
            cmd.append("-dict=" + d)
        log_path = os.path.join(logs, "%s.fuzz%s.log" % (target, "" if not attempt else ".%d" % attempt))
        rc, log = run(cmd, log_path)
        stat = dict(re.findall(r"stat::(\w+):\s*(\d+)", log))
        res.execs += int(stat.get("number_of_executed_units", 0))
        runs_left = max(1, runs_left - int(stat.get("number_of_executed_units", 0)))
        res.new += int(stat.get("new_units_added", 0))
        last = re.findall(r"#\d+\s+\w+\s+cov: (\d+) ft: (\d+)", log)
        if last:
            res.cov, res.ft = max(res.cov, int(last[-1][0])), max(res.ft, int(last[-1][1]))
        if rc == 0:
            break
        sig = crash_signature(log)
        art = re.findall(r"Test unit written to (\S+)", log)
        art = art[-1] if art else "(no reproducer written)"
        hit = [f for (t, f), s in known.items() if t == target and matches(sig, s)]
        if hit:
            res.findings.append(("known", "%s again (%s)" % (hit[0], art)))
            continue
        res.failed = True
        res.findings.append(("NEW", "%s: %s" % (art, sig)))
        tail = log.strip().splitlines()[-60:]
        sys.stderr.write("\n---- %s: a new finding; the end of %s ----\n%s\n----\n"
                         "Reproduce: %s %s\nThen add it to tests/fuzz/regress/%s/ and FINDINGS.md.\n"
                         % (target, log_path, "\n".join(tail), binary, art, target))
        break
    spent = max(1.0, args.time - max(0.0, deadline - time.time()))
    res.exec_s = int(res.execs / spent)
    res.corpus = sum(len(os.listdir(p)) for p in (scratch, seeds))


def merge(binary, target, build, logs):
    """Adds to the seeds the inputs of the scratch corpus that reach code the seeds do not."""
    seeds = os.path.join(HERE, "corpus", target)
    scratch = os.path.join(build, "corpus", target)     # what fuzz-long found
    if not os.path.isdir(scratch):
        sys.exit("%s: no corpus of a long run to merge; run make fuzz-long" % scratch)
    before = len(os.listdir(seeds))
    rc, log = run([binary, "-merge=1", seeds, scratch], os.path.join(logs, target + ".merge.log"))
    print("%s: merge exit %d, seeds %d -> %d" % (target, rc, before, len(os.listdir(seeds))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build/fuzz")
    ap.add_argument("--time", type=int, default=12, help="seconds of fuzzing per target")
    ap.add_argument("--short", action="store_true", help="make test's run: an execution cap as well")
    ap.add_argument("--jobs", type=int, default=1, help="targets fuzzed at once")
    ap.add_argument("--merge", action="store_true", help="merge the scratch corpus into the seeds, then stop")
    ap.add_argument("targets", nargs="+")
    args = ap.parse_args()
    build = os.path.join(ROOT, args.build)
    logs = os.path.join(build, "logs")
    os.makedirs(logs, exist_ok=True)
    binaries = {t: os.path.join(build, "fuzz_" + t) for t in args.targets}
    for t, b in binaries.items():
        if not os.access(b, os.X_OK):
            sys.exit("%s: no fuzzer; run make fuzz" % b)
    if args.merge:
        for t in args.targets:
            merge(binaries[t], t, build, logs)
        return
    known = read_open()
    results = {t: Result(t) for t in args.targets}

    def one(t):
        regress(binaries[t], t, known, logs, results[t])
        fuzz(binaries[t], t, args, known, build, logs, results[t])

    pending = list(args.targets)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                t = pending.pop(0)
            one(t)

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    print("fuzz: %d s per target; logs in %s" % (args.time, os.path.relpath(logs, ROOT)))
    print("%-10s %10s %8s %6s %7s %7s %5s  %s" % ("target", "execs", "exec/s", "cov", "ft", "corpus", "new",
                                                  "findings"))
    failed = False
    for t in args.targets:
        r = results[t]
        f = "; ".join("%s: %s" % k for k in r.findings) or "none"
        print("%-10s %10d %8d %6d %7d %7d %5d  %s" % (t, r.execs, r.exec_s, r.cov, r.ft, r.corpus, r.new, f))
        for n in r.notes:
            print("  note: " + n)
        failed |= r.failed
    open_n = len(known)
    if open_n:
        print("open findings expected to crash (tests/fuzz/open, FINDINGS.md): %d" % open_n)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
