#!/usr/bin/python3
"""
test_onnx.py - scripts/onnx2workload.py on ONNX graphs built here with onnx.helper.

Two networks, each also written by hand as a workload YAML below: a small CNN
with residual adds (convolutions, one depthwise with asymmetric pads,
BatchNorm, ReLU, max and average pooling, a Gemm) and a transformer encoder
layer (Q/K/V projections as MatMuls with initializers, Q.K^T, Softmax, P.V,
the output projection, residual adds, LayerNormalization, an MLP with the
Erf form of GELU). For each, the MACs that `tpusim lower --csv` gives for the
converted YAML must equal those of the hand-written YAML, op by op, and the
total must equal the MACs computed by hand in this file; the dataflow (what
each op reads and writes, from `tpusim lower`) must match too. Then: an
unsupported op is reported by name, with exit status 1 and no file; a file
that is no ONNX model is exit status 2 with one clear line and no file.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "onnx2workload.py")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def init(name, *shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def const(name, value):
    return numpy_helper.from_array(np.array(value, np.float32), name)


def ints(name, value):
    return numpy_helper.from_array(np.array(value, np.int64), name)


def model(nodes, name, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="test_onnx")


# ---------------------------------------------------------------------------- (a) a small CNN

B_CNN = 2


def cnn():
    n = helper.make_node
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [B_CNN, 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [B_CNN, 10])
    inits = [init("w_stem", 16, 3, 3, 3), init("b_stem", 16),
             init("bn_s", 16), init("bn_b", 16), init("bn_m", 16), init("bn_v", 16),
             init("w_b1c1", 16, 16, 3, 3), init("w_b1c2", 16, 16, 3, 3),
             init("w_b2c1", 32, 16, 3, 3), init("w_b2c2", 32, 32, 3, 3), init("w_b2ds", 32, 16, 1, 1),
             init("w_dw", 32, 1, 3, 3), init("w_fc", 10, 32), init("b_fc", 10)]
    nodes = [
        n("Conv", ["x", "w_stem", "b_stem"], ["c1"], name="stem.conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["c1n"], name="stem.bn"),
        n("Relu", ["c1n"], ["r1"], name="stem.relu"),
        n("MaxPool", ["r1"], ["p1"], name="stem.pool", kernel_shape=[2, 2], strides=[2, 2]),
        # block 1: two 3x3 convolutions and the identity shortcut
        n("Conv", ["p1", "w_b1c1"], ["b1a"], name="block1.conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["b1a"], ["b1ar"], name="block1.relu1"),
        n("Conv", ["b1ar", "w_b1c2"], ["b1b"], name="block1.conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Add", ["b1b", "p1"], ["b1s"], name="block1.add"),
        n("Relu", ["b1s"], ["b1o"], name="block1.relu2"),
        # block 2: stride 2 and a 1x1 downsampling shortcut
        n("Conv", ["b1o", "w_b2c1"], ["b2a"], name="block2.conv1", kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1]),
        n("Relu", ["b2a"], ["b2ar"], name="block2.relu1"),
        n("Conv", ["b2ar", "w_b2c2"], ["b2b"], name="block2.conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Conv", ["b1o", "w_b2ds"], ["b2d"], name="block2.downsample", kernel_shape=[1, 1], strides=[2, 2]),
        n("Add", ["b2b", "b2d"], ["b2s"], name="block2.add"),
        n("Relu", ["b2s"], ["b2o"], name="block2.relu2"),
        # a depthwise 3x3 with all its padding at the end (pads 0,0,2,2: the output size of padding 1)
        n("Conv", ["b2o", "w_dw"], ["dw"], name="dw.conv", kernel_shape=[3, 3], group=32, pads=[0, 0, 2, 2]),
        n("AveragePool", ["dw"], ["ap"], name="head.avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["ap"], ["gap"], name="head.gap"),
        n("Flatten", ["gap"], ["flat"], name="head.flatten"),
        n("Gemm", ["flat", "w_fc", "b_fc"], ["y"], name="head.fc", transB=1),
    ]
    return model(nodes, "small_cnn", [x], [y], inits)


# Written by hand from the graph above: per sample, the batch in `batch`.
CNN_YAML = """
name: small_cnn
batch: 2
layers:
  - {name: stem.conv, type: conv2d, in_h: 32, in_w: 32, in_c: 3, out_c: 16, kernel: 3, padding: 1}
  - {name: stem.relu, type: relu, elements: 16384}
  - {name: stem.pool, type: pool, in_h: 32, in_w: 32, in_c: 16, kernel: 2, stride: 2, mode: max}
  - {name: block1.conv1, type: conv2d, in_h: 16, in_w: 16, in_c: 16, out_c: 16, kernel: 3, padding: 1}
  - {name: block1.relu1, type: relu, elements: 4096}
  - {name: block1.conv2, type: conv2d, in_h: 16, in_w: 16, in_c: 16, out_c: 16, kernel: 3, padding: 1}
  - {name: block1.add, type: add, elements: 4096, inputs: [block1.conv2, stem.pool]}
  - {name: block1.relu2, type: relu, elements: 4096}
  - {name: block2.conv1, type: conv2d, in_h: 16, in_w: 16, in_c: 16, out_c: 32, kernel: 3, stride: 2, padding: 1}
  - {name: block2.relu1, type: relu, elements: 2048}
  - {name: block2.conv2, type: conv2d, in_h: 8, in_w: 8, in_c: 32, out_c: 32, kernel: 3, padding: 1}
  - {name: block2.downsample, type: conv2d, in_h: 16, in_w: 16, in_c: 16, out_c: 32, kernel: 1, stride: 2,
     inputs: [block1.relu2]}
  - {name: block2.add, type: add, elements: 2048, inputs: [block2.conv2, block2.downsample]}
  - {name: block2.relu2, type: relu, elements: 2048}
  - {name: dw.conv, type: conv2d, in_h: 8, in_w: 8, in_c: 32, out_c: 32, kernel: 3, padding: 1, groups: 32}
  - {name: head.avgpool, type: pool, in_h: 8, in_w: 8, in_c: 32, kernel: 2, stride: 2, mode: avg}
  - {name: head.gap, type: pool, in_h: 4, in_w: 4, in_c: 32, global: true, mode: avg}
  - {name: head.fc, type: fc, in_features: 32, out_features: 10}
"""

# MACs per sample, M x K x N of each convolution (M = Ho x Wo, K = kh x kw x in_c / groups,
# N = out_c / groups, times groups) and of the Gemm:
CNN_MACS = B_CNN * (
    32 * 32 * (3 * 3 * 3) * 16        # stem.conv           442,368
    + 16 * 16 * (3 * 3 * 16) * 16     # block1.conv1        589,824
    + 16 * 16 * (3 * 3 * 16) * 16     # block1.conv2        589,824
    + 8 * 8 * (3 * 3 * 16) * 32       # block2.conv1        294,912
    + 8 * 8 * (3 * 3 * 32) * 32       # block2.conv2        589,824
    + 8 * 8 * 16 * 32                 # block2.downsample    32,768
    + 8 * 8 * (3 * 3 * 1) * 1 * 32    # dw.conv: 32 groups of one channel, 18,432
    + 32 * 10                         # head.fc                 320
)                                     # = 2 x 2,558,272 = 5,116,544
assert CNN_MACS == 5116544


# ---------------------------------------------------------------------------- (b) a transformer encoder layer

B_TF, S, D, H, F = 2, 16, 32, 4, 64
HD = D // H


def encoder():
    n = helper.make_node
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [B_TF, S, D])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [B_TF, S, D])
    inits = [init("wq", D, D), init("bq", D), init("wk", D, D), init("bk", D), init("wv", D, D), init("bv", D),
             init("wo", D, D), init("bo", D), init("w1", D, F), init("b1", F), init("w2", F, D), init("b2", D),
             init("ln1_g", D), init("ln1_b", D), init("ln2_g", D), init("ln2_b", D),
             ints("heads_shape", [B_TF, S, H, HD]), ints("model_shape", [B_TF, S, D]),
             const("scale", np.sqrt(HD)), const("sqrt2", np.sqrt(2.0)), const("one", 1.0), const("half", 0.5)]
    nodes = []
    for p in "qkv":
        nodes += [n("MatMul", ["x", "w" + p], [p + "0"], name=f"attn.{p}_proj"),
                  n("Add", [p + "0", "b" + p], [p + "1"], name=f"attn.{p}_bias"),
                  n("Reshape", [p + "1", "heads_shape"], [p + "2"], name=f"attn.{p}_split")]
    nodes += [
        n("Transpose", ["q2"], ["q"], name="attn.q_heads", perm=[0, 2, 1, 3]),     # B h S hd
        n("Transpose", ["k2"], ["kt"], name="attn.k_heads", perm=[0, 2, 3, 1]),    # B h hd S
        n("Transpose", ["v2"], ["v"], name="attn.v_heads", perm=[0, 2, 1, 3]),     # B h S hd
        n("MatMul", ["q", "kt"], ["s0"], name="attn.qk"),
        n("Div", ["s0", "scale"], ["s"], name="attn.scale"),
        n("Softmax", ["s"], ["p"], name="attn.softmax", axis=-1),
        n("MatMul", ["p", "v"], ["c0"], name="attn.pv"),
        n("Transpose", ["c0"], ["c1"], name="attn.merge", perm=[0, 2, 1, 3]),
        n("Reshape", ["c1", "model_shape"], ["c"], name="attn.concat_heads"),
        n("MatMul", ["c", "wo"], ["o0"], name="attn.o_proj"),
        n("Add", ["o0", "bo"], ["o"], name="attn.o_bias"),
        n("Add", ["o", "x"], ["r1"], name="add1"),
        n("LayerNormalization", ["r1", "ln1_g", "ln1_b"], ["l1"], name="ln1", axis=-1),
        n("MatMul", ["l1", "w1"], ["h0"], name="mlp.fc1"),
        n("Add", ["h0", "b1"], ["h"], name="mlp.fc1_bias"),
        # GELU as exported from PyTorch: h * 0.5 * (1 + erf(h / sqrt 2))
        n("Div", ["h", "sqrt2"], ["g0"], name="mlp.gelu_div"),
        n("Erf", ["g0"], ["g1"], name="mlp.gelu"),
        n("Add", ["g1", "one"], ["g2"], name="mlp.gelu_add"),
        n("Mul", ["h", "g2"], ["g3"], name="mlp.gelu_mul"),
        n("Mul", ["g3", "half"], ["g"], name="mlp.gelu_half"),
        n("MatMul", ["g", "w2"], ["m0"], name="mlp.fc2"),
        n("Add", ["m0", "b2"], ["m"], name="mlp.fc2_bias"),
        n("Add", ["m", "l1"], ["r2"], name="add2"),
        n("LayerNormalization", ["r2", "ln2_g", "ln2_b"], ["y"], name="ln2", axis=-1),
    ]
    return model(nodes, "encoder_layer", [x], [y], inits)


# By hand: one attention layer for the block, then the residual and the MLP as
# in the graph. add1 reads the network input, which `inputs` cannot name: it
# reads the attention output and a second new input, as the converter leaves it.
ENCODER_YAML = f"""
name: encoder_layer
batch: {B_TF}
layers:
  - {{name: attn, type: attention, seq: {S}, d_model: {D}, heads: {H}}}
  - {{name: add1, type: add, elements: {S * D}}}
  - {{name: ln1, type: layernorm, elements: {S * D}, inputs: [add1]}}
  - {{name: mlp.fc1, type: linear, in_features: {D}, out_features: {F}, tokens: {S}, inputs: [ln1]}}
  - {{name: mlp.gelu, type: gelu, elements: {S * F}, inputs: [mlp.fc1]}}
  - {{name: mlp.fc2, type: linear, in_features: {F}, out_features: {D}, tokens: {S}, inputs: [mlp.gelu]}}
  - {{name: add2, type: add, elements: {S * D}, inputs: [mlp.fc2, ln1]}}
  - {{name: ln2, type: layernorm, elements: {S * D}, inputs: [add2]}}
"""

ENCODER_MACS = B_TF * (
    4 * S * D * D                     # Q, K, V and output projections: 4 x 16 x 32 x 32 = 65,536
    + H * S * HD * S                  # Q.K^T per head: 4 x 16 x 8 x 16 = 8,192
    + H * S * S * HD                  # P.V per head: 8,192
    + S * D * F + S * F * D           # MLP: 2 x 16 x 32 x 64 = 65,536
)                                     # = 2 x 147,456 = 294,912
assert ENCODER_MACS == 294912

# With --no-fuse the block stays as its parts, (M, K, N, repeat) as tpusim lowers them:
ENCODER_UNFUSED_GEMMS = sorted([
    (B_TF * S, D, D, 1), (B_TF * S, D, D, 1), (B_TF * S, D, D, 1),   # attn.q_proj, k_proj, v_proj: M = batch x tokens
    (S, HD, S, B_TF * H), (S, S, HD, B_TF * H),                      # attn.qk, attn.pv: one per sample and head
    (B_TF * S, D, D, 1), (B_TF * S, D, F, 1), (B_TF * S, F, D, 1),   # attn.o_proj, mlp.fc1, mlp.fc2
])


# ---------------------------------------------------------------------------- (c) LayerNorm written out

def layernorm_ops():
    """A projection and a LayerNorm as exporters before opset 17 write it: (x - mean) / sqrt(var + eps)."""
    n = helper.make_node
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])
    nodes = [n("MatMul", ["x", "w"], ["h"], name="proj"),
             n("ReduceMean", ["h"], ["mean"], name="ln.mean", axes=[-1]),
             n("Sub", ["h", "mean"], ["d"], name="ln.sub"),
             n("Pow", ["d", "two"], ["d2"], name="ln.pow"),
             n("ReduceMean", ["d2"], ["var"], name="ln.var", axes=[-1]),
             n("Add", ["var", "eps"], ["ve"], name="ln.eps"),
             n("Sqrt", ["ve"], ["sd"], name="ln.sqrt"),
             n("Div", ["d", "sd"], ["z"], name="ln"),
             n("Mul", ["z", "gamma"], ["zg"], name="ln.gamma"),
             n("Add", ["zg", "beta"], ["y"], name="ln.beta")]
    return model(nodes, "ln_written_out", [x], [y], [init("w", 16, 16), const("two", 2.0), const("eps", 1e-5),
                                                      init("gamma", 16), init("beta", 16)])


LN_YAML = """
name: ln_written_out
batch: 1
layers:
  - {name: proj, type: linear, in_features: 16, out_features: 16, tokens: 8}
  - {name: ln, type: layernorm, elements: 128}
"""
LN_MACS = 8 * 16 * 16                 # proj: 8 tokens x 16 x 16


# ---------------------------------------------------------------------------- running

def convert(path, *args):
    return subprocess.run([sys.executable, SCRIPT, path, *args], capture_output=True, text=True)


def lower_csv(yaml_path):
    out = subprocess.run([TPUSIM, "lower", "-w", yaml_path, "--csv"], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"tpusim lower {yaml_path}: exit {out.returncode}: {out.stderr.strip()}")
        return []
    lines = out.stdout.strip().splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, l.split(","))) for l in lines[1:]]


def dataflow(yaml_path):
    """The "op tensors: reads -> writes" lines of tpusim lower."""
    out = subprocess.run([TPUSIM, "lower", "-w", yaml_path], capture_output=True, text=True).stdout
    part = out.split("op tensors: reads -> writes", 1)
    return [" ".join(l.split()) for l in part[1].strip().split("\n\n")[0].splitlines()] if len(part) == 2 else []


def gemms(rows):
    return [(r["op"], int(r["m"]), int(r["k"]), int(r["n"]), int(r["repeat"]), int(r["macs"]))
            for r in rows if r["kind"] == "gemm"]


def total_macs(rows):
    return sum(int(r["macs"]) for r in rows)


def compare(what, d, onnx_model, hand_yaml, want_macs, *args):
    src, got, hand = (os.path.join(d, what + s) for s in (".onnx", ".yaml", "_hand.yaml"))
    onnx.save(onnx_model, src)
    with open(hand, "w") as f:
        f.write(hand_yaml)
    r = convert(src, "-o", got, *args)
    check(f"{what}: exit status (stderr: {r.stderr.strip()})", r.returncode, 0)
    if r.returncode != 0:
        return None, r
    conv_rows, hand_rows = lower_csv(got), lower_csv(hand)
    check(f"{what}: MACs of the converted YAML", total_macs(conv_rows), want_macs)
    check(f"{what}: MACs of the hand-written YAML", total_macs(hand_rows), want_macs)
    check(f"{what}: GEMM ops (name, M, K, N, repeat, MACs)", gemms(conv_rows), gemms(hand_rows))
    check(f"{what}: ops (name, kind, vector elements)",
          [(r["op"], r["kind"], r["vector_out_elements"]) for r in conv_rows],
          [(r["op"], r["kind"], r["vector_out_elements"]) for r in hand_rows])
    check(f"{what}: what each op reads and writes", dataflow(got), dataflow(hand))
    with open(got) as f:
        return f.read(), r


def custom_domain(d):
    """
    A node of another domain than ONNX's (an op its exporter made up): its
    work and its output's shape are unknown, so it is refused, named (exit
    status 2, one line, nothing written), even when every later node would
    convert, and the node after it is not blamed.
    """
    n = helper.make_node
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
    m = model([n("MatMul", ["x", "w"], ["h"], name="proj"),
               n("Swizzle", ["h"], ["s"], name="my_swizzle", domain="example.ops"),
               n("Relu", ["s"], ["y"], name="relu")],
              "custom", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])], [init("w", 16, 16)])
    m.opset_import.append(helper.make_opsetid("example.ops", 1))
    src, out = os.path.join(d, "custom.onnx"), os.path.join(d, "custom.yaml")
    onnx.save(m, src)
    for extra in ([], ["--allow-unsupported"]):
        r = convert(src, "-o", out, *extra)
        what = "custom domain" + (" " + extra[0] if extra else "")
        check(f"{what}: exit status", r.returncode, 2)
        check(f"{what}: no file written", os.path.exists(out), False)
        check(f"{what}: the message", r.stderr,
              f"onnx2workload: {src}: graph.node[1] (example.ops:Swizzle 'my_swizzle'): expected an op of ONNX's own "
              f"domains (or com.microsoft FastGelu, Gelu), found one of domain 'example.ops', whose work tpusim cannot "
              f"know\n")


def symbolic_batch(d):
    """
    A first input dimension without a value is the batch, which the workload
    needs: without --batch (or --dim for its symbol) it is refused, saying
    which option gives it; with either, the workload has that batch.
    """
    n = helper.make_node
    src = os.path.join(d, "sym.onnx")
    onnx.save(model([n("MatMul", ["x", "w"], ["y"], name="proj")], "sym",
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 16])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, 16])], [init("w", 16, 16)]), src)
    out = os.path.join(d, "sym.yaml")
    r = convert(src, "-o", out)
    check("symbolic batch: exit status", r.returncode, 2)
    check("symbolic batch: no file written", os.path.exists(out), False)
    check("symbolic batch: the message", r.stderr,
          f"onnx2workload: {src}: graph.input 'x'.shape[0]: expected a fixed size, found the symbol 'N' (the batch: "
          f"give --batch N, or --dim N=N)\n")
    for args in (["--batch", "4"], ["--dim", "N=4"]):
        r = convert(src, "-o", out, *args)
        check(f"symbolic batch {args}: exit status ({r.stderr.strip()})", r.returncode, 0)
        if r.returncode == 0:
            with open(out) as f:
                check(f"symbolic batch {args}: the workload's batch", "\nbatch: 4\n" in f.read(), True)
            # 4 samples x 8 tokens x 16 x 16
            check(f"symbolic batch {args}: MACs", total_macs(lower_csv(out)), 4 * 8 * 16 * 16)
            os.unlink(out)


def file_mode(d):
    """The workload is an ordinary file: 0666 less the umask, as any program's open would make it."""
    src = os.path.join(d, "cnn.onnx")
    for mask, want in ((0o022, 0o644), (0o027, 0o640)):
        out = os.path.join(d, f"mode{mask:o}.yaml")
        old = os.umask(mask)
        try:
            r = convert(src, "-o", out)
        finally:
            os.umask(old)
        check(f"umask {mask:o}: exit status", r.returncode, 0)
        if r.returncode == 0:
            check(f"umask {mask:o}: mode", oct(os.stat(out).st_mode & 0o777), oct(want))


def limit(name):
    """A number #defined in sim/base/limit.h, tpusim's own limits."""
    path = os.path.join(os.path.dirname(SCRIPT), "..", "sim", "base", "limit.h")
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[0] == "#define" and p[1] == name:
                return int(float(p[2]))
    raise KeyError(name)


def sizes_tpusim_takes(d):
    """
    The importer's bounds are tpusim's (limit.h), and what it writes tpusim
    takes: a relu of 2^40 elements (the most one key takes) per sample reads,
    writes and computes 3 x 2^40 x batch elements in all, which tpusim takes
    up to 2^58: written with --batch 2^16 (3 x 2^56) and lowered by tpusim,
    refused with --batch 2^17 (3 x 2^57), where tpusim would refuse it, with
    tpusim's reason, exit status 2 and nothing written.
    """
    import importlib.util
    spec = importlib.util.spec_from_file_location("workload_out", os.path.join(os.path.dirname(SCRIPT), "workload_out.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for py, c in (("DIM_MAX", "WORKLOAD_DIM_MAX"), ("COUNT_MAX", "WORKLOAD_COUNT_MAX"), ("BATCH_MAX", "LIMIT_BATCH"),
                  ("NAME_MAX", "CFG_STR_MAX")):
        check(f"the importer's {py} is limit.h's {c}", getattr(mod, py) + (1 if py == "NAME_MAX" else 0), limit(c))
    n = helper.make_node
    src = os.path.join(d, "big.onnx")
    onnx.save(model([n("Relu", ["x"], ["y"], name="act")], "big",
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 1 << 40])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 1 << 40])], []), src)
    out = os.path.join(d, "big.yaml")
    r = convert(src, "-o", out, "--batch", str(1 << 16))
    check(f"batch 2^16: exit status ({r.stderr.strip()})", r.returncode, 0)
    if r.returncode == 0:
        rows = lower_csv(out)
        check("batch 2^16: tpusim lowers it", [r["vector_out_elements"] for r in rows], [str(1 << 56)])
        os.unlink(out)
    r = convert(src, "-o", out, "--batch", str(1 << 17))
    check("batch 2^17: exit status", r.returncode, 2)
    check("batch 2^17: no file written", os.path.exists(out), False)
    check("batch 2^17: tpusim's reason", r.stderr.startswith(
        f"onnx2workload: {src}: expected a workload that tpusim takes, found one it refuses: {out}:6:5: layers[0]: "
        f"expected a workload whose total work fits in 58 bits"), True)
    check("batch 2^17: one line", r.stderr.count("\n"), 1)


def main():
    with tempfile.TemporaryDirectory() as d:
        # (a) CNN: every op and tensor as written by hand.
        text, r = compare("cnn", d, cnn(), CNN_YAML, CNN_MACS)
        if text is not None:
            check("cnn: the depthwise conv's pads are said to be mapped",
                  "# pads [0, 0, 2, 2] as padding 1: the same output size" in text, True)
            for line in ("shape only    Flatten", "folded        BatchNormalization"):
                check(f"cnn: stderr lists '{line}'", line in r.stderr, True)

        # (b) encoder layer: the attention block as one layer; the Erf pattern as one gelu.
        text, r = compare("encoder", d, encoder(), ENCODER_YAML, ENCODER_MACS)
        if text is not None:
            for line in ("fused         Mul", "mlp.gelu_mul", "fused         attention"):
                check(f"encoder: stderr lists '{line}'", line in r.stderr, True)
            check("encoder: no layer is an erf counted as gelu", "counted as" in r.stderr, False)

        # (b) again with --no-fuse: the same MACs from the block's parts, Q.K^T and P.V as
        # matmuls whose operands are both activations, named after their nodes.
        src, out = os.path.join(d, "encoder.onnx"), os.path.join(d, "unfused.yaml")
        r = convert(src, "-o", out, "--no-fuse")
        check(f"encoder --no-fuse: exit status ({r.stderr.strip()})", r.returncode, 0)
        if r.returncode == 0:
            rows = lower_csv(out)
            check("encoder --no-fuse: MACs", total_macs(rows), ENCODER_MACS)
            check("encoder --no-fuse: GEMM shapes", sorted(g[1:5] for g in gemms(rows)), ENCODER_UNFUSED_GEMMS)
            flow = dataflow(out)
            check("encoder --no-fuse: Q.K^T reads the Q and K projections",
                  "attn.qk attn.q_proj.out, attn.k_proj.out -> attn.qk.out" in flow, True)
            check("encoder --no-fuse: P.V reads the softmax and the V projection",
                  "attn.pv attn.softmax.out, attn.v_proj.out -> attn.pv.out" in flow, True)
            check("encoder --no-fuse: the K projection says it cannot name the network input",
                  "dataflow      linear    attn.k_proj  (operand 0 is network input 'x', but tpusim reads "
                  "'attn.q_proj'" in r.stderr, True)
            with open(out) as f:
                text = f.read()
            check("encoder --no-fuse: Q.K^T is a matmul of two activations",
                  "{name: attn.qk, type: matmul, m: 16, k: 8, n: 16, a: activation, b: activation, repeat: 4, "
                  "inputs: [attn.q_proj, attn.k_proj]}" in text, True)

        # (c) the six ops before the Div are one layernorm with it; nothing unsupported.
        text, r = compare("ln", d, layernorm_ops(), LN_YAML, LN_MACS)
        if text is not None:
            check("ln: the parts are listed as fused", r.stderr.count("fused "), 7)

        # --batch: the YAML's batch, the MACs scaled with it.
        out = os.path.join(d, "b8.yaml")
        r = convert(os.path.join(d, "cnn.onnx"), "-o", out, "--batch", "8")
        check("cnn --batch 8: MACs", total_macs(lower_csv(out)) if r.returncode == 0 else r.stderr,
              CNN_MACS // B_CNN * 8)

        # Unsupported ops: each named with its op type; exit 1; nothing written.
        n = helper.make_node
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])
        bad = model([n("MatMul", ["x", "w"], ["h"], name="proj"),
                     n("LSTM", ["h", "W", "R"], ["y"], name="lstm1", hidden_size=32)],
                    "bad", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                    [init("w", 16, 16), init("W", 1, 128, 16), init("R", 1, 128, 32)])
        src, out = os.path.join(d, "bad.onnx"), os.path.join(d, "bad.yaml")
        onnx.save(bad, src)
        r = convert(src, "-o", out)
        check("unsupported: exit status", r.returncode, 1)
        check("unsupported: no file written", os.path.exists(out), False)
        for line in ("unsupported   LSTM", "lstm1", "1 unsupported node"):
            check(f"unsupported: stderr names '{line}'", line in r.stderr, True)
        r = convert(src, "-o", out, "--allow-unsupported")
        check("--allow-unsupported: exit status", r.returncode, 0)
        if r.returncode == 0:
            with open(out) as f:
                text = f.read()
            check("--allow-unsupported: the header names lstm1",
                  "# UNSUPPORTED, left out: LSTM 'lstm1': no workload layer type for LSTM" in text, True)
            check("--allow-unsupported: the rest converts", total_macs(lower_csv(out)), 8 * 16 * 16)

        # A file that is no ONNX model: exit 2, one clear line, nothing written.
        src, out = os.path.join(d, "junk.onnx"), os.path.join(d, "junk.yaml")
        with open(src, "wb") as f:
            f.write(b"name: not a model\nlayers: []\n")
        r = convert(src, "-o", out)
        check("malformed: exit status", r.returncode, 2)
        check("malformed: no file written", os.path.exists(out), False)
        check("malformed: the message", r.stderr.startswith(
            f"onnx2workload: {src}: expected an ONNX model (a protobuf ModelProto), found 29 bytes that do not decode"),
            True)
        check("malformed: one line", r.stderr.count("\n"), 1)
        # A model whose pooling stride is 0: refused before shape inference, which would divide by it.
        m = cnn()
        m.graph.node[3].attribute[1].ints[1] = 0
        src = os.path.join(d, "stride0.onnx")
        onnx.save(m, src)
        r = convert(src, "-o", out)
        check("stride 0: exit status", r.returncode, 2)
        check("stride 0: the message", r.stderr.strip(),
              f"onnx2workload: {src}: graph.node[3] (MaxPool 'stem.pool'): attribute strides: expected positive "
              f"integers, found [2, 0]")
        # An attribute with a name and no value; standard output that cannot be written: a line, never a traceback.
        m = cnn()
        bare = onnx.AttributeProto()
        bare.name = "strides"
        del m.graph.node[3].attribute[1]
        m.graph.node[3].attribute.append(bare)
        src = os.path.join(d, "bare.onnx")
        onnx.save(m, src)
        r = convert(src, "-o", out)
        check("attribute without a value: exit status", r.returncode, 2)
        check("attribute without a value: no traceback", "Traceback" in r.stderr, False)
        check("attribute without a value: names it", "attribute strides: expected a value of a known type" in r.stderr,
              True)
        src = os.path.join(d, "cnn.onnx")
        onnx.save(cnn(), src)
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, SCRIPT, src], stdout=full, stderr=subprocess.PIPE, text=True)
        check("full standard output: exit status", r.returncode, 2)
        check("full standard output: no traceback", "Traceback" in r.stderr, False)
        r = convert(src, "--dim", "S=100000000000000000000000")
        check("--dim too large: exit status", r.returncode, 2)
        check("--dim too large: no traceback", "Traceback" in r.stderr, False)
        r = convert(os.path.join(d, "missing.onnx"))
        check("missing file: exit status", r.returncode, 2)
        check("missing file: the message", r.stderr.strip(),
              f"onnx2workload: {os.path.join(d, 'missing.onnx')}: expected a readable ONNX file, found no such file "
              f"or directory")

        custom_domain(d)
        symbolic_batch(d)
        file_mode(d)
        sizes_tpusim_takes(d)

    for f in failures:
        print("FAIL", f)
    print(f"test_onnx: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
