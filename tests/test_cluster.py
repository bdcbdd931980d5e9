#!/usr/bin/python3
"""
test_cluster.py - a sweep sent out to the engines people run, then merged,
equals the same sweep run in one process, byte for byte.

  test_cluster.py parallel   the jobs of --emit parallel run by GNU parallel
                             -j2 from another directory; parallel and every
                             process under it killed with SIGKILL once some
                             points exist; --merge then lists exactly the
                             points without a file (found here on its own:
                             each point file of the in-process run says its
                             axis values, and the spec's order gives their
                             index); the same parallel command again with
                             --resume; --merge gives the in-process sweep.csv.
                             Then hostile paths: a DIR named $(touch PWNED)
                             runs under parallel and makes no PWNED; a line
                             break in DIR or the working directory is refused.
  test_cluster.py slurm      a one-node Slurm cluster on this machine and
                             nowhere else: munged with a key of its own,
                             slurmctld and slurmd on free ports, every file in
                             a temporary directory; the --emit slurm job array
                             submitted with sbatch, every task completed;
                             --merge gives the in-process sweep.csv. Torn down
                             whatever happens.

This process is made a child subreaper: whatever the engines start (parallel's
jobs, slurmstepd, a job's workers) stays under it, and is killed by pid.
Run from the repository's root (the spec's paths are relative to it); KEEP=1
keeps the temporary directory (the daemons' logs) and prints its path.
"""
import ctypes
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TPUSIM = os.path.abspath(os.environ.get("TPUSIM", "build/tpusim"))
ROWS = [4, 8, 16, 32]
DATAFLOWS = ["ws", "os", "is"]
BATCHES = [512, 1024, 2048]
NPOINTS = len(ROWS) * len(DATAFLOWS) * len(BATCHES)
WORKLOAD = "configs/workloads/mlp.yaml"
SPEC = ("configs: [configs/lab_4x4.yaml]\n"
        f"workloads: [{WORKLOAD}]\n"
        "axes:\n"
        f"  array.rows: [{', '.join(map(str, ROWS))}]\n"
        f"  dataflow: [{', '.join(DATAFLOWS)}]\n"
        f"  batch: [{', '.join(map(str, BATCHES))}]\n")
LIST_MAX = 20           # SWEEP_MERGE_LIST in sim/tools/sweep.h

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}{': ' + detail if detail else ''}")
    return ok


# ---- processes ----

def proc_table():
    """{pid: (ppid, state)} of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rindex(")") + 2:].split()
        out[int(d)] = (int(rest[1]), rest[0])
    return out


def descendants():
    """{pid: state} of every process under this one."""
    table, out, todo = proc_table(), {}, [os.getpid()]
    while todo:
        p = todo.pop()
        for c, (pp, state) in table.items():
            if pp == p and c not in out:
                out[c] = state
                todo.append(c)
    return out


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all():
    """SIGKILL every process under this one, again until none is left, and reap them."""
    deadline = time.time() + 30
    while True:
        live = [p for p, state in descendants().items() if state != "Z"]
        if not live:
            break
        if time.time() > deadline:
            raise RuntimeError(f"processes that would not die: {live}")
        for p in live:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
        reap()
    reap()


def tpusim(*args, cwd=None):
    r = subprocess.run([TPUSIM, *args], cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# ---- the sweep ----

def in_process(tmp):
    """The spec's path, and the sweep.csv and point files of one in-process run."""
    spec = os.path.join(tmp, "spec.yaml")
    with open(spec, "w") as f:
        f.write(SPEC)
    one = os.path.join(tmp, "one")
    rc, out, err = tpusim("sweep", spec, "-o", one, "-j", "2")
    if rc != 0:
        raise RuntimeError(f"in-process sweep: exit {rc}: {err}")
    with open(os.path.join(one, "sweep.csv"), "rb") as f:
        csv = f.read()
    return spec, one, csv


def point_index(one):
    """{point file stem: (index, rows, dataflow, batch)} from the in-process run's summary.json files."""
    out = {}
    for name in os.listdir(os.path.join(one, "points")):
        if not name.endswith(".json") or name.startswith("."):
            continue
        with open(os.path.join(one, "points", name)) as f:
            s = json.load(f)
        r, df, b = s["set"]["array.rows"], s["dataflow"], s["batch"]
        i = (ROWS.index(r) * len(DATAFLOWS) + DATAFLOWS.index(df)) * len(BATCHES) + BATCHES.index(b)
        out[name[:-5]] = (i, r, df, b)
    if sorted(v[0] for v in out.values()) != list(range(NPOINTS)):
        raise RuntimeError("the in-process run's point files are not one per point")
    return out


def point_files(d):
    """The point files in d/points, and the temporary files anywhere in d."""
    names = os.listdir(os.path.join(d, "points"))
    done = {n for n in names if not n.startswith(".")}
    tmp = [n for n in names if n.startswith(".")] + [n for n in os.listdir(d) if n.startswith(".")]
    return done, tmp


def check_merge_complete(d, want):
    rc, out, err = tpusim("sweep", "--merge", d, cwd="/")
    check("merge of a complete sweep: exit 0", rc == 0, f"exit {rc}, {err}")
    check("merge of a complete sweep: its line", out == f"wrote {d}/sweep.csv: {NPOINTS} points, {NPOINTS} ok, "
          f"0 failed, 0 missing\n", out)
    with open(os.path.join(d, "sweep.csv"), "rb") as f:
        got = f.read()
    check("merged sweep.csv equals the in-process one byte for byte", got == want,
          f"{len(got)} bytes vs {len(want)}")


def check_cmd(line, spec_dir, k, chunk):
    """A job's command: absolute paths, a cd to the working directory, the k-th chunk of points."""
    m = re.fullmatch(r"cd '([^']*)' && '([^']*)' sweep '([^']*)' -o '([^']*)' --points (\d+)-(\d+)", line)
    if not check(f"job {k}: its command", m is not None, line):
        return
    check(f"job {k}: cd to the working directory", m.group(1) == os.path.realpath(os.getcwd()), m.group(1))
    check(f"job {k}: this tpusim, absolute", m.group(2) == os.path.realpath(TPUSIM), m.group(2))
    check(f"job {k}: the recorded spec", m.group(3) == os.path.join(spec_dir, "sweep.yaml"), m.group(3))
    check(f"job {k}: -o DIR, absolute", m.group(4) == spec_dir, m.group(4))
    first, last = int(m.group(5)), int(m.group(6))
    check(f"job {k}: its points", (first, last) == (k * chunk, min(k * chunk + chunk - 1, NPOINTS - 1)),
          f"{first}-{last}")


# ---- GNU parallel ----

def test_parallel(tmp):
    spec, one, want = in_process(tmp)
    index = point_index(one)
    d = os.path.join(tmp, "par")
    chunk = 2
    rc, out, err = tpusim("sweep", spec, "-o", d, "--emit", "parallel", "--chunk-size", str(chunk))
    check("--emit parallel: exit 0", rc == 0, err)
    njobs = (NPOINTS + chunk - 1) // chunk
    check("--emit parallel: what it wrote", f"wrote {d}/jobs.txt: {NPOINTS} points in {njobs} jobs of up to {chunk} "
          "points\n" in out, out)
    check("--emit parallel: the local command", re.search(rf"\n  parallel --joblog {d}/joblog --resume -j \d+ < "
                                                          rf"{d}/jobs.txt\n", out) is not None, out)
    check("--emit parallel: the many-hosts command",
          f"\n  parallel --joblog {d}/joblog --resume --sshloginfile hosts.txt < {d}/jobs.txt\n" in out, out)
    check("--emit parallel: the merge command", out.endswith(f"\n  {os.path.realpath(TPUSIM)} sweep --merge {d}\n"), out)
    check("--emit parallel: ran nothing", point_files(d)[0] == set())
    with open(os.path.join(d, "jobs.txt")) as f:
        jobs = f.read().splitlines()
    check("jobs.txt: one command per chunk", len(jobs) == njobs, str(len(jobs)))
    for k, line in enumerate(jobs):
        check_cmd(line, os.path.realpath(d), k, chunk)

    # Run it from another directory; kill everything once some points exist.
    elsewhere = os.path.join(tmp, "elsewhere")
    os.mkdir(elsewhere)
    cmd = ["parallel", "--will-cite", "--joblog", os.path.join(d, "joblog"), "--resume", "-j2"]
    with open(os.path.join(d, "jobs.txt")) as jf:
        p = subprocess.Popen(cmd, stdin=jf, cwd=elsewhere, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(point_files(d)[0]) < NPOINTS // 4 and p.poll() is None and time.time() < deadline:
        time.sleep(0.002)
    kill_all()
    done, _ = point_files(d)
    if not check("killed mid-way: some points done, not all", 0 < len(done) < NPOINTS, f"{len(done)} done"):
        return
    print(f"killed with {len(done)} of {NPOINTS} points done")
    stems = {n.rsplit(".", 1)[0] for n in done}
    missing = sorted(v[0] for s, v in index.items() if s not in stems)
    by_index = {v[0]: (s, v) for s, v in index.items()}

    rc, out, err = tpusim("sweep", "--merge", d, cwd=elsewhere)
    m = len(missing)
    check("merge with points missing: exit 4", rc == 4, f"exit {rc}")
    check("merge with points missing: stderr", err == f"sweep: expected every point to have a result, found {m} of "
          f"{NPOINTS} missing (run their jobs, then merge again)\n", err)
    lines = [f"wrote {d}/sweep.csv: {NPOINTS} points, {NPOINTS - m} ok, 0 failed, {m} missing",
             "missing (index from 0, as the rows of sweep.csv: workload and axes, point file):"]
    for i in missing[:LIST_MAX]:
        s, (_, r, df, b) = by_index[i]
        lines.append(f"  {i}: workload={WORKLOAD} array.rows={r} dataflow={df} batch={b} ({s})")
    if m > LIST_MAX:
        lines.append(f"  ... and {m - LIST_MAX} more")
    check("merge lists exactly the points without a file", out.splitlines() == lines,
          "\n" + out + "--- want ---\n" + "\n".join(lines))
    # The partial sweep.csv: the in-process rows where a point is done, "missing" rows where not.
    with open(os.path.join(d, "sweep.csv"), "rb") as f:
        part = f.read().decode().splitlines()
    whole = want.decode().splitlines()
    check("partial sweep.csv: rows", len(part) == NPOINTS + 1 and part[0] == whole[0], str(len(part)))
    for i in range(min(NPOINTS, len(part) - 1)):
        if i in missing:
            keys = ",".join(whole[i + 1].split(",")[:4])
            # every column after the axes empty (point too) but status: as many fields as the header has
            empty = "," * (len(whole[0].split(",")) - 4)
            check(f"partial sweep.csv: row {i} missing", part[i + 1] == keys + empty + "missing", part[i + 1])
        else:
            check(f"partial sweep.csv: row {i}", part[i + 1] == whole[i + 1], part[i + 1])

    # The same command again resumes it.
    with open(os.path.join(d, "jobs.txt")) as jf:
        r = subprocess.run(cmd, stdin=jf, cwd=elsewhere, capture_output=True, text=True, timeout=120)
    check("parallel --resume: exit 0", r.returncode == 0, r.stderr)
    done, tmpfiles = point_files(d)
    check("every point file there", len(done) == NPOINTS, str(len(done)))
    check("no temporary file left", tmpfiles == [], str(tmpfiles))
    with open(os.path.join(d, "joblog")) as f:
        log = [l.split("\t") for l in f.read().splitlines()[1:]]
    check("joblog: every job once, exit 0", sorted(int(l[0]) for l in log) == list(range(1, njobs + 1)) and
          all(l[6] == "0" and l[7] == "0" for l in log), str(log))
    check_merge_complete(d, want)
    hostile_paths(tmp, spec, want)


def pwned(tmp):
    """Every file named PWNED under tmp and in the working directory: what a command in a path would make."""
    found = [os.path.join(r, "PWNED") for r, _, files in os.walk(tmp) if "PWNED" in files]
    return found + (["./PWNED"] if os.path.exists("PWNED") else [])


def hostile_paths(tmp, spec, want):
    """A DIR named as a command is only a name to the jobs; a line break in DIR or the working directory is refused."""
    d = os.path.join(tmp, "$(touch PWNED)")
    rc, out, err = tpusim("sweep", spec, "-o", d, "--emit", "parallel", "--chunk-size", "5")
    check("--emit parallel into $(touch PWNED): exit 0", rc == 0, err)
    with open(os.path.join(d, "jobs.txt")) as f:
        jobs = f.read().splitlines()
    check("jobs.txt under $(touch PWNED): one line per job", len(jobs) == (NPOINTS + 4) // 5, str(len(jobs)))
    for k, line in enumerate(jobs):
        check_cmd(line, os.path.realpath(d), k, 5)
    elsewhere = os.path.join(tmp, "elsewhere2")
    os.mkdir(elsewhere)
    with open(os.path.join(d, "jobs.txt")) as jf:
        r = subprocess.run(["parallel", "--will-cite", "-j2"], stdin=jf, cwd=elsewhere, capture_output=True, text=True,
                           timeout=120)
    check("parallel under $(touch PWNED): exit 0", r.returncode == 0, r.stderr)
    check("parallel under $(touch PWNED): no command ran", pwned(tmp) == [], str(pwned(tmp)))
    check_merge_complete(d, want)

    nl = os.path.join(tmp, "x\n$(touch PWNED)\ny")
    rc, out, err = tpusim("sweep", spec, "-o", nl, "--emit", "parallel")
    shown = nl.replace("\n", "\\x0a")
    check("--emit parallel, a line break in DIR: exit 2", rc == 2, f"exit {rc}")
    check("--emit parallel, a line break in DIR: the message", err == "-o: expected a directory whose absolute path "
          f"fits on a line of jobs.txt (no line break or other control character), found \"{shown}\"\n", err)
    check("--emit parallel, a line break in DIR: nothing made", not os.path.exists(nl) and out == "", out)

    wd = os.path.join(tmp, "w\nd")
    os.mkdir(wd)
    with open(spec) as f:
        text = f.read().replace("configs/", os.path.join(os.getcwd(), "configs") + "/")
    absspec = os.path.join(tmp, "abs.yaml")
    with open(absspec, "w") as f:
        f.write(text)
    o = os.path.join(tmp, "par3")
    rc, out, err = tpusim("sweep", absspec, "-o", o, "--emit", "parallel", cwd=wd)
    check("--emit parallel, a line break in the working directory: exit 2", rc == 2, f"exit {rc}: {err}")
    check("--emit parallel, a line break in the working directory: the message", err == "sweep: expected a working "
          "directory whose path fits on a line of jobs.txt (no line break or other control character), found "
          f"\"{wd.replace(chr(10), chr(92) + 'x0a')}\"\n", err)
    check("--emit parallel, a line break in the working directory: nothing made", not os.path.exists(o))
    check("no command ran", pwned(tmp) == [], str(pwned(tmp)))


# ---- Slurm ----

def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return str(e)


def wait_for(what, ok, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if ok():
            return True
        time.sleep(0.1)
    raise RuntimeError(f"{what}: not within {seconds} s")


def slurm_conf(t, node, user, ctld_port, d_port):
    return f"""# A one-node cluster for tests/test_cluster.py, every file under {t}.
ClusterName=tpusimtest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
AuthInfo=socket={t}/munge.sock
CredType=cred/munge
StateSaveLocation={t}/state
SlurmdSpoolDir={t}/spool
SlurmctldPidFile={t}/slurmctld.pid
SlurmdPidFile={t}/slurmd.pid
SlurmctldLogFile={t}/slurmctld.log
SlurmdLogFile={t}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def test_slurm(tmp):
    for tool in ("mungekey", "munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            raise RuntimeError(f"{tool} not found: the Debian packages slurm-wlm and munge (make deps)")
    spec, one, want = in_process(tmp)
    t = os.path.join(tmp, "slurm")
    for sub in ("", "state", "spool"):
        os.makedirs(os.path.join(t, sub), exist_ok=True)
    os.chmod(tmp, 0o755)
    os.chmod(t, 0o755)
    node = socket.gethostname().split(".")[0]
    user = pwd.getpwuid(os.getuid()).pw_name
    ctld_port, d_port = free_ports(2)
    conf = os.path.join(t, "slurm.conf")
    with open(conf, "w") as f:
        f.write(slurm_conf(t, node, user, ctld_port, d_port))
    os.environ["SLURM_CONF"] = conf
    os.environ["PATH"] += ":/usr/sbin:/sbin"
    logs = [os.path.join(t, n) for n in ("munged.log", "slurmctld.log", "slurmd.log", "daemons.out")]
    out = open(os.path.join(t, "daemons.out"), "w")
    daemons = []
    t_up = time.time()
    try:
        subprocess.run(["mungekey", "--create", "--keyfile", os.path.join(t, "munge.key")], check=True)
        sock = os.path.join(t, "munge.sock")
        daemons.append(subprocess.Popen(["munged", "--foreground", "--force", "--key-file", os.path.join(t, "munge.key"),
                                         "--socket", sock, "--pid-file", os.path.join(t, "munged.pid"),
                                         "--log-file", logs[0], "--seed-file", os.path.join(t, "munged.seed")],
                                        stdout=out, stderr=out))
        wait_for("munged's socket", lambda: os.path.exists(sock), 15)
        daemons.append(subprocess.Popen(["slurmctld", "-D", "-f", conf], stdout=out, stderr=out))
        daemons.append(subprocess.Popen(["slurmd", "-D", "-f", conf, "-N", node], stdout=out, stderr=out))
        wait_for("the node idle in sinfo", lambda: subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True).stdout.strip() == "idle", 60)
        print(f"cluster up in {time.time() - t_up:.1f} s")

        d = os.path.join(tmp, "slurm_out")
        chunk = 10              # 4 tasks, the last with 6 points
        ntasks = (NPOINTS + chunk - 1) // chunk
        rc, so, se = tpusim("sweep", spec, "-o", d, "--emit", "slurm", "--chunk-size", str(chunk))
        check("--emit slurm: exit 0", rc == 0, se)
        check("--emit slurm: what it wrote", so.startswith(f"wrote {d}/sweep.sbatch: {NPOINTS} points in {ntasks} "
                                                          f"array tasks of up to {chunk} points, logs in {d}/logs/\n"), so)
        check("--emit slurm: sbatch, then merge", f"\n  sbatch {d}/sweep.sbatch\n" in so and
              so.endswith(f"\n  {os.path.realpath(TPUSIM)} sweep --merge {d}\n"), so)
        with open(os.path.join(d, "sweep.sbatch")) as f:
            script = f.read()
        check("sweep.sbatch: the array", f"\n#SBATCH --array=0-{ntasks - 1}\n" in script, script)
        check("sweep.sbatch: logs under DIR/logs", f"\n#SBATCH --output={os.path.realpath(d)}/logs/%A_%a.out\n" in script,
              script)
        check("--emit slurm: ran nothing", point_files(d)[0] == set())

        r = subprocess.run(["sbatch", "--parsable", os.path.join(d, "sweep.sbatch")], cwd=t, capture_output=True,
                           text=True)
        if not check("sbatch: exit 0", r.returncode == 0, r.stderr):
            raise RuntimeError("sbatch failed")
        job = r.stdout.strip().split(";")[0]
        t_job = time.time()
        wait_for(f"job array {job} done", lambda: subprocess.run(
            ["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip() == "", 120)
        print(f"job array of {ntasks} tasks done in {time.time() - t_job:.1f} s")
        show = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True).stdout
        states = {}
        for line in show.splitlines():
            task = re.search(r"\bArrayTaskId=(\d+)\b", line)
            state = re.search(r"\bJobState=(\S+)", line)
            code = re.search(r"\bExitCode=(\S+)", line)
            if task and state and code:
                states[int(task.group(1))] = (state.group(1), code.group(1))
        check("every array task COMPLETED, exit 0", states == {k: ("COMPLETED", "0:0") for k in range(ntasks)},
              str(states))
        for k in range(ntasks):
            first, last = k * chunk, min(k * chunk + chunk - 1, NPOINTS - 1)
            log = tail(os.path.join(d, "logs", f"{job}_{k}.out"), 1)
            check(f"task {k}: its log", log == f"ran points {first}-{last} of {NPOINTS} into {os.path.realpath(d)}/points; "
                  f"tpusim sweep --merge {os.path.realpath(d)} builds sweep.csv\n", log)
        done, tmpfiles = point_files(d)
        check("every point file there", len(done) == NPOINTS, str(len(done)))
        check("no temporary file left", tmpfiles == [], str(tmpfiles))
        check_merge_complete(d, want)
    except Exception:
        for p in logs:
            print(f"--- {p} (last lines)\n{tail(p)}", file=sys.stderr)
        raise
    finally:
        for p in reversed(daemons):
            if p.poll() is None:
                p.terminate()
        deadline = time.time() + 10
        while any(p.poll() is None for p in daemons) and time.time() < deadline:
            time.sleep(0.05)
        t_down = time.time()
        kill_all()
        out.close()
        print(f"cluster down in {time.time() - t_down:.1f} s")
    if failures:
        for p in logs:
            print(f"--- {p} (last lines)\n{tail(p)}", file=sys.stderr)


def main():
    what = sys.argv[1] if len(sys.argv) == 2 else ""
    if what not in ("parallel", "slurm"):
        print("usage: test_cluster.py parallel|slurm", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:     # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="tpusim-cluster-")
    try:
        (test_parallel if what == "parallel" else test_slurm)(tmp)
    finally:
        kill_all()
        if not os.environ.get("KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(tmp)
    for f in failures:
        print("FAIL", f)
    print(f"sweep on {'GNU parallel' if what == 'parallel' else 'Slurm'}: {NPOINTS} points, "
          f"{len(failures)} failures, {time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
