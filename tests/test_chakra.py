#!/usr/bin/python3
"""
test_chakra.py - tpusim run --chakra PREFIX (Chakra execution traces, one a
rank) and -w FILE.et (a trace read back as a workload).

The files are decoded here by the protobuf wire format alone (varints and
length-delimited fields, by hand), against the field numbers of MLCommons
Chakra's et_def.proto: GlobalMetadata.version 1; Node.id 1, name 2, type 3,
ctrl_deps 4, data_deps 5, duration_micros 7, inputs 8 (IOInfo.shapes 2),
attr 10; AttributeProto.name 1, int32_val 7, int64_val 9, uint64_val 13,
bool_val 27, bool_list 28, string_val 29. Checked by hand:
  - the scaling book's all-gather on v5e 8x4: 32 files, hard links of one;
    one COMM_COLL_NODE (7), comm_type ALL_GATHER (2), comm_size 2048 x 8192
    x 2 B, involved_dim y only, duration_micros its cycles at 1.5 GHz;
  - the MLP (784-512-256-10 at batch 16) on tpu_v1: fc1, fc2, fc3 are
    COMP_NODEs (4) of num_ops 2 x 16 x 784 x 512 and so on, shapes
    [[16,784],[784,512]]; each relu depends on the fc before it, and each
    compute node after the one before it (ctrl_deps);
  - read back with -w: the all-gather takes the cycles it took written, and
    the MLP its MACs; a node of unknown shape is left out with a warning;
    a cut file and a file of another kind are refused with exit status 2;
  - a pipeline of 4 stages on a line of 4 chips, 2 microbatches: 4 files of
    their own; rank k runs its stage's fc twice, each after a receive from
    rank k - 1 and before a send of 2 x 64 x 256 B to rank k + 1 (tags 0, 2).
"""
import os
import struct
import subprocess
import sys
import tempfile

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one message's bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        out.append((num, wt, v))
    return out


def messages(path):
    b = open(path, "rb").read()
    i, out = 0, []
    while i < len(b):
        n, i = varint(b, i)
        out.append(b[i:i + n])
        i += n
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def node(m):
    f = fields(m)
    n = {"id": 0, "attr": {}, "data_deps": [], "ctrl_deps": [], "type": 0, "duration": 0, "shapes": ""}
    for num, wt, v in f:
        if num == 1:
            n["id"] = v
        elif num == 2:
            n["name"] = v.decode()
        elif num == 3:
            n["type"] = v
        elif num in (4, 5):
            key = "ctrl_deps" if num == 4 else "data_deps"
            if wt == 2:        # packed
                j = 0
                while j < len(v):
                    d, j = varint(v, j)
                    n[key].append(d)
            else:
                n[key].append(v)
        elif num == 7:
            n["duration"] = v
        elif num == 8:
            for k, _, s in fields(v):
                if k == 2:
                    n["shapes"] = s.decode()
        elif num == 10:
            name, val = None, None
            for k, w2, x in fields(v):
                if k == 1:
                    name = x.decode()
                elif k in (7, 9):
                    val = signed(x)
                elif k == 13:
                    val = x
                elif k == 27:
                    val = bool(x)
                elif k == 29:
                    val = x.decode()
                elif k == 28:
                    vals = []
                    for k2, w3, y in fields(x):
                        if w3 == 2:
                            vals += list(y)
                        else:
                            vals.append(y)
                    val = [bool(z) for z in vals]
            n["attr"][name] = val
    return n


def run(*args):
    return subprocess.run([TPUSIM, "run", *args], capture_output=True, text=True, cwd=ROOT)


def cycles_of(out):
    for line in out.splitlines():
        if " cycles = " in line:
            return int(line.split()[0])
    return None


with tempfile.TemporaryDirectory() as d:
    # The all-gather.
    ag = os.path.join(d, "ag")
    r = run("-c", "configs/pods/v5e_8x4.yaml", "-w", "configs/workloads/allgather_2048x8192.yaml", "--chakra", ag)
    check("all-gather run", r.returncode, 0)
    check("all-gather message", f"wrote 32 Chakra traces, {ag}.0.et to {ag}.31.et" in r.stdout, True)
    cycles = cycles_of(r.stdout)
    st = [os.stat(f"{ag}.{k}.et") for k in range(32)]
    check("one file, 32 links", {(s.st_ino, s.st_nlink) for s in st}, {(st[0].st_ino, 32)})
    check("no rank 32", os.path.exists(f"{ag}.32.et"), False)
    ms = messages(f"{ag}.0.et")
    meta = fields(ms[0])
    check("version", [v for n, _, v in meta if n == 1], [b"0.0.4"])
    nodes = [node(m) for m in ms[1:]]
    check("all-gather nodes", len(nodes), 1)
    n = nodes[0]
    check("type", n["type"], 7)
    check("comm_type", n["attr"].get("comm_type"), 2)
    check("comm_size", n["attr"].get("comm_size"), 2048 * 8192 * 2)
    check("involved_dim", n["attr"].get("involved_dim"), [False, True, False, False])
    check("tpusim.cycles", n["attr"].get("tpusim.cycles"), cycles)
    clock = None
    for num, wt, v in meta:
        if num == 2:
            a = {k: x for k, _, x in fields(v)}
            if a.get(1) == b"tpusim.clock_ghz":
                clock = struct.unpack("<d", a[3])[0]
    check("clock", clock, 1.503)                        # configs/tpu_v5e.yaml
    check("duration_micros", n["duration"], int(cycles / (1.503 * 1e3) + 0.5))
    check("is_cpu_op", n["attr"].get("is_cpu_op"), False)
    r2 = run("-c", "configs/pods/v5e_8x4.yaml", "-w", f"{ag}.0.et")
    check("all-gather read back", (r2.returncode, cycles_of(r2.stdout)), (0, cycles))

    # The MLP.
    mlp = os.path.join(d, "mlp")
    r = run("-c", "configs/tpu_v1.yaml", "-w", "configs/workloads/mlp.yaml", "--chakra", mlp, "--model", "analytic")
    check("mlp run", r.returncode, 0)
    check("mlp one rank", r.stdout.count("wrote 1 Chakra trace,"), 1)
    nodes = [node(m) for m in messages(f"{mlp}.0.et")[1:]]
    by = {x["name"]: x for x in nodes}
    check("mlp nodes", sorted(by), ["fc1", "fc2", "fc3", "relu1", "relu2"])
    for name, (k, nn) in {"fc1": (784, 512), "fc2": (512, 256), "fc3": (256, 10)}.items():
        x = by.get(name, {"attr": {}, "type": 0, "shapes": ""})
        check(name + " type", x["type"], 4)
        check(name + " num_ops", x["attr"].get("num_ops"), 2 * 16 * k * nn)
        check(name + " shapes", x["shapes"], f"[[16,{k}],[{k},{nn}]]")
    ids = [x["id"] for x in nodes]
    check("relu1 reads fc1", by["relu1"]["data_deps"], [by["fc1"]["id"]])
    check("program order", [x["ctrl_deps"] for x in nodes], [[]] + [[i] for i in ids[:-1]])
    r2 = run("-c", "configs/tpu_v1.yaml", "-w", f"{mlp}.0.et", "--model", "analytic")
    check("mlp read back", r2.returncode, 0)
    check("mlp MACs", f" {16 * (784 * 512 + 512 * 256 + 256 * 10)} MACs" in r2.stdout, True)

    # A trace of another tool's: a GEMM by its shapes, a node of no known shape (left out), a collective.
    def msg(b):
        out, n = b"", len(b)
        while True:
            out += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)])
            n >>= 7
            if not n:
                return out + b

    def fld(num, v):
        if isinstance(v, int):
            return varint_bytes(num << 3) + varint_bytes(v)
        return varint_bytes(num << 3 | 2) + varint_bytes(len(v)) + v

    def varint_bytes(n):
        out = b""
        while True:
            out += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)])
            n >>= 7
            if not n:
                return out

    def attr(name, num, v):
        return fld(10, fld(1, name.encode()) + fld(num, v))

    other = os.path.join(d, "other.et")
    with open(other, "wb") as f:
        f.write(msg(fld(1, b"0.0.4")))
        f.write(msg(fld(1, 1) + fld(2, b"aten::mm") + fld(3, 4) + fld(7, 12) + fld(8, fld(2, b"[[64, 256], [256, 128]]"))))
        f.write(msg(fld(1, 2) + fld(2, b"aten::gelu") + fld(3, 4) + fld(7, 3)))
        f.write(msg(fld(1, 3) + fld(2, b"ar") + fld(3, 7) + attr("comm_type", 9, 0) + attr("comm_size", 9, 1 << 20)))
    r = run("-c", "configs/pods/v5e_8x4.yaml", "-w", other, "--model", "analytic")
    check("other trace", r.returncode, 0)
    check("other MACs", f" {64 * 256 * 128} MACs" in r.stdout, True)
    check("other collective", "collectives 1," in r.stdout, True)
    check("left out", "1 node of unknown shape left out (their traced time 3 us)" in r.stderr, True)
    # Cut short, and not a trace.
    with open(os.path.join(d, "cut.et"), "wb") as f:
        f.write(open(other, "rb").read()[:-5])
    r = run("-c", "configs/tpu_v1.yaml", "-w", os.path.join(d, "cut.et"))
    check("cut: status", r.returncode, 2)
    check("cut: message", "runs past the end of the file" in r.stderr, True)
    with open(os.path.join(d, "text.et"), "w") as f:
        f.write("name: not a trace\n")
    r = run("-c", "configs/tpu_v1.yaml", "-w", os.path.join(d, "text.et"))
    check("text: status", r.returncode, 2)
    # A pipeline of 4 stages (one instance each), 2 microbatches of 2: a file each rank, its peers its own.
    blk = os.path.join(d, "blk.yaml")
    with open(blk, "w") as f:
        f.write("name: blk\nbatch: 4\nlayers:\n  - block:\n      name: b\n      repeat: 4\n      layers:\n"
                "        - {name: fc, type: linear, tokens: 64, in_features: 256, out_features: 256}\n")
    pp = os.path.join(d, "pp")
    r = run("-c", "configs/edge_32x32.yaml", "-w", blk, "--model", "analytic", "--chakra", pp, "--set", "pod.x=4",
            "--set", "mesh.pipeline=4", "--set", "mesh.microbatches=2")
    check("pipeline run", (r.returncode, r.stderr), (0, ""))
    check("pipeline files", sorted(f for f in os.listdir(d) if f.startswith("pp.")), [f"pp.{k}.et" for k in range(4)])
    check("own files", len({os.stat(f"{pp}.{k}.et").st_ino for k in range(4)}), 4)
    eb = 1          # configs/edge_32x32.yaml: int8
    for k in range(4):
        nodes = [node(m) for m in messages(f"{pp}.{k}.et")[1:]]
        kinds = [x["type"] for x in nodes]
        sends = [x for x in nodes if x["type"] == 5]
        recvs = [x for x in nodes if x["type"] == 6]
        comps = [x for x in nodes if x["type"] == 4]
        check(f"rank {k}: forwards", [x["name"] for x in comps], [f"b.{k}.fc"] * 2)
        check(f"rank {k}: sends", [(x["attr"]["comm_dst"], x["attr"]["comm_tag"], x["attr"]["comm_size"]) for x in sends],
              [(k + 1, 0, 2 * 64 * 256 * eb), (k + 1, 2, 2 * 64 * 256 * eb)] if k < 3 else [])
        check(f"rank {k}: receives", [(x["attr"]["comm_src"], x["attr"]["comm_tag"]) for x in recvs],
              [(k - 1, 0), (k - 1, 2)] if k > 0 else [])
        # receive, compute, send for each microbatch; the compute reads the receive, the send the compute
        check(f"rank {k}: order", kinds, (([6] if k else []) + [4] + ([5] if k < 3 else [])) * 2)
        for j, x in enumerate(comps):
            if k:
                check(f"rank {k}: fc {j} after its receive", recvs[j]["id"] in x["data_deps"], True)
            if k < 3:
                check(f"rank {k}: send {j} after its fc", sends[j]["data_deps"], [x["id"]])

if failures:
    print("test_chakra: %d failure(s)" % len(failures))
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("test_chakra: ok")
