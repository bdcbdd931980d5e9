#!/usr/bin/python3
"""
test_hlo.py - scripts/hlo2workload.py on StableHLO modules written here in the
form jax.jit(f).lower(...).as_text() prints (tests/hlo/*.mlir, and small ones
inline).

Three networks: an MLP (two dot_general, bias adds, relu as maximum with 0), a
conv block (a convolution in the pretty form, bias, relu, max pooling as a
generic reduce_window, a depthwise convolution in the generic form with
asymmetric padding, a dot) and a multi-head attention layer (projections,
Q.K^T and P.V as dot_general with batching dimensions over the heads, one in
the generic form, and a softmax written out in a function it calls). For each,
the MACs of `tpusim lower --csv` on the converted YAML must equal the MACs
worked out by hand below from the shapes, and the layers must be those
written by hand; the MLP's also through `tpusim run --model analytic`
(summary.json). Then: an op with no layer is named with its position and
source location, exit status 2 and no file (written with
--allow-unsupported); a malformed type, an undefined value, an unclosed
bracket are positioned errors with exit status 2.
"""
import json
import os
import subprocess
import sys
import tempfile

TPUSIM = os.environ.get("TPUSIM", "build/tpusim")
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "hlo2workload.py")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


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


def total_macs(rows):
    return sum(int(r["macs"]) for r in rows)


def gemms(rows):
    return [(r["op"], int(r["m"]), int(r["k"]), int(r["n"]), int(r["repeat"])) for r in rows if r["kind"] == "gemm"]


def layers(text):
    return [l.strip() for l in text.splitlines() if l.startswith("  - {")]


# ---------------------------------------------------------------------------- the networks

# mlp.mlir: x 8 x 784 (the batch is 8), w1 784 x 512, w2 512 x 10.
MLP_MACS = 8 * 784 * 512 + 8 * 512 * 10          # 3,211,264 + 40,960 = 3,252,224
MLP_LAYERS = [
    "- {name: dot_general_0, type: linear, in_features: 784, out_features: 512, tokens: 1}",
    "- {name: maximum_4, type: relu, elements: 512, inputs: [dot_general_0]}",
    "- {name: dot_general_5, type: linear, in_features: 512, out_features: 10, tokens: 1, inputs: [maximum_4]}",
]

# conv.mlir, NHWC, batch 2: a 3x3 convolution 8 -> 16 channels on 16 x 16 (padding 1): 16 x 16 outputs
# of 16 channels, each 3 x 3 x 8 MACs; a 2x2 max pool to 8 x 8; a depthwise 3x3 of stride 2 with
# padding [[0, 1], [0, 1]] to 4 x 4 x 16, each output 3 x 3 MACs; a dot of the 256 values by 256 x 10.
CONV_MACS = 2 * (16 * 16 * 16 * (3 * 3 * 8)      # 294,912 per sample
                 + 4 * 4 * 16 * (3 * 3)          # 2,304
                 + 256 * 10)                     # 2,560; = 2 x 299,776 = 599,552
CONV_LAYERS = [
    "- {name: convolution_0, type: conv2d, in_h: 16, in_w: 16, in_c: 8, out_c: 16, kernel: 3, stride: 1, padding: 1}",
    "- {name: maximum_5, type: relu, elements: 4096, inputs: [convolution_0]}",
    "- {name: reduce_window_6, type: pool, in_h: 16, in_w: 16, in_c: 16, kernel: 2, stride: 2, padding: 0, mode: max, "
    "inputs: [maximum_5]}",
    "- {name: convolution_7, type: conv2d, in_h: 8, in_w: 8, in_c: 16, out_c: 16, kernel: 3, stride: 2, padding: 1, "
    "groups: 16, inputs: [reduce_window_6]}",
    "- {name: maximum_8, type: relu, elements: 256, inputs: [convolution_7]}",
    "- {name: dot_10, type: linear, in_features: 256, out_features: 10, tokens: 1, inputs: [maximum_8]}",
]

# attention.mlir: batch 2, sequence 16, d_model 32, 4 heads of 8.
B, S, D, H, HD = 2, 16, 32, 4, 8
ATT_MACS = B * (4 * S * D * D                    # Q, K, V and output projections: 65,536 per sample
                + H * S * HD * S                 # Q.K^T per head: 8,192
                + H * S * S * HD)                # P.V per head: 8,192; = 2 x 81,920 = 163,840
# (M, K, N, repeat) of each GEMM as tpusim lowers it: projections over batch x tokens rows,
# Q.K^T and P.V once per sample and head.
ATT_GEMMS = [(B * S, D, D, 1)] * 3 + [(S, HD, S, B * H), (S, S, HD, B * H), (B * S, D, D, 1)]


def network(d, name, want_macs, want_layers, *args):
    out = os.path.join(d, name + ".yaml")
    r = convert(os.path.join(HERE, "hlo", name + ".mlir"), "-o", out, *args)
    check(f"{name}: exit status (stderr: {r.stderr.strip()})", r.returncode, 0)
    if r.returncode != 0:
        return None, r, []
    rows = lower_csv(out)
    check(f"{name}: MACs of tpusim lower", total_macs(rows), want_macs)
    with open(out) as f:
        text = f.read()
    if want_layers is not None:
        check(f"{name}: layers", layers(text), want_layers)
    return text, r, rows


def analytic_macs(d, yaml_path):
    o = os.path.join(d, "run")
    r = subprocess.run([TPUSIM, "run", "-c", os.path.join(HERE, "..", "configs", "tpu_v1.yaml"), "-w", yaml_path,
                        "--model", "analytic", "-o", o], capture_output=True, text=True)
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()}"
    with open(os.path.join(o, "summary.json")) as f:
        return json.load(f)["total"]["macs"]


# ---------------------------------------------------------------------------- bad input

UNKNOWN = """module @jit_f {
  func.func public @main(%arg0: tensor<4x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<4x16xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.custom_call @mystery(%0) {backend_config = ""} : (tensor<4x16xf32>) -> tensor<4x16xf32> loc(#loc3)
    %2 = stablehlo.tanh %1 : tensor<4x16xf32>
    return %2 : tensor<4x16xf32>
  }
}
#loc3 = loc("model.py":12:3)
"""


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def refused(d, name, text, message, *args):
    """text is refused: exit status 2, message on stderr (its last line), no file written."""
    src, out = write(d, name + ".mlir", text), os.path.join(d, name + ".yaml")
    r = convert(src, "-o", out, *args)
    check(f"{name}: exit status", r.returncode, 2)
    check(f"{name}: no file written", os.path.exists(out), False)
    check(f"{name}: the message", r.stderr.strip().splitlines()[-1:], [message.replace("SRC", src)])
    check(f"{name}: no traceback", "Traceback" in r.stderr, False)
    return r


def bad_input(d):
    # custom_call has no layer: named with its position (line 4, column 10, where its name is) and
    # the source location of its loc(#loc3); nothing written; with --allow-unsupported the
    # dot_general (4 x 16 x 16 MACs, the batch 4) and the tanh are.
    r = refused(d, "unknown", UNKNOWN, "hlo2workload: SRC: 1 unsupported op (listed above); nothing written "
                "(--allow-unsupported writes the rest)")
    src = os.path.join(d, "unknown.mlir")
    check("unknown: the op is named with its position", f"hlo2workload: {src}:4:10: stablehlo.custom_call "
          f"'custom_call_1' (from model.py:12:3): no workload layer type for stablehlo.custom_call" in r.stderr, True)
    out = os.path.join(d, "unknown.yaml")
    r = convert(src, "-o", out, "--allow-unsupported")
    check("--allow-unsupported: exit status", r.returncode, 0)
    if r.returncode == 0:
        with open(out) as f:
            text = f.read()
        check("--allow-unsupported: the header names it", f"# UNSUPPORTED, left out: {src}:4:10: stablehlo.custom_call "
              f"'custom_call_1' (from model.py:12:3)" in text, True)
        check("--allow-unsupported: the rest", total_macs(lower_csv(out)), 4 * 16 * 16)
        check("--allow-unsupported: tanh counted as gelu", "stablehlo.tanh counted as gelu" in text, True)

    # A malformed element type in an operand's type: at that type, on line 3.
    sig = "(tensor<4x16xf32>, tensor<16x16xf32>) ->"
    col = UNKNOWN.splitlines()[2].index(sig) + len("(tensor<4x16xf32>, ") + 1
    refused(d, "badtype", UNKNOWN.replace(sig, sig.replace("16xf32>)", "16xq32>)")),
            f"hlo2workload: SRC:3:{col}: tensor<16x16xq32>: expected sizes and an element type (f32, bf16, i8, ...) "
            "separated by x, found 'q32' where the element type goes")
    refused(d, "dynamic", UNKNOWN.replace("%arg1: tensor<16x16xf32>", "%arg1: tensor<16x?xf32>"),
            "hlo2workload: SRC:2:58: tensor<16x?xf32>: expected static sizes, found a dynamic size ?")
    # An operand type that is not the operand's, a result shape the dimensions do not give.
    refused(d, "mismatch", UNKNOWN.replace(sig, sig.replace("16x16xf32>)", "16x17xf32>)")),
            f"hlo2workload: SRC:3:{col}: stablehlo.dot_general operand %arg1: expected its type, tensor<16x16xf32>, "
            "found tensor<16x17xf32>")
    refused(d, "result", UNKNOWN.replace(") -> tensor<4x16xf32>\n    %1", ") -> tensor<4x15xf32>\n    %1"),
            "hlo2workload: SRC:3:10: stablehlo.dot_general: expected a result of shape [4, 16] (batch, lhs free, "
            "rhs free), found tensor<4x15xf32>")
    refused(d, "undefined", UNKNOWN.replace("stablehlo.tanh %1", "stablehlo.tanh %9"),
            "hlo2workload: SRC:5:10: stablehlo.tanh: expected operands defined earlier, found %9, which is not")
    refused(d, "unclosed", UNKNOWN.replace("(%0) {backend_config", "(%0 {backend_config"),
            "hlo2workload: SRC:7:3: '}': expected ')' to close the '(' at 4:40, found '}'")   # the function's end
    refused(d, "junk", "name: not a module\n", "hlo2workload: SRC:1:1: the module: expected func.func, or a "
            "#name = ... alias, found 'name'")
    refused(d, "input", UNKNOWN, "hlo2workload: SRC: --input 2: expected an argument number of @main (0 to 1), "
            "found none of that number", "--input", "2")
    # A function that calls itself cannot be inlined: unsupported, named.
    rec = UNKNOWN.replace("%1 = stablehlo.custom_call @mystery(%0) {backend_config = \"\"}", "%1 = call @main(%0, %arg1)")
    rec = rec.replace(": (tensor<4x16xf32>) -> tensor<4x16xf32> loc(#loc3)",
                      ": (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> loc(#loc3)")
    r = refused(d, "recursive", rec, "hlo2workload: SRC: 1 unsupported op (listed above); nothing written "
                "(--allow-unsupported writes the rest)")
    check("recursive: the call is named", "call 'call_1' (from model.py:12:3): a recursive call of @main" in r.stderr,
          True)
    # x . y^T of two inputs whose rows are the batch: each sample's row meets every sample's y, which
    # per-sample layers cannot hold: refused, named, not converted to a matmul that reads y once per sample.
    mix = ("module @m {\n  func.func public @main(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x8xf32> {\n"
           "    %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [1] : (tensor<8x64xf32>, "
           "tensor<8x64xf32>) -> tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>\n  }\n}\n")
    r = refused(d, "mixing", mix, "hlo2workload: SRC: 1 unsupported op (listed above); nothing written "
                "(--allow-unsupported writes the rest)", "--input", "0", "--input", "1")
    check("mixing: named", "stablehlo.dot_general 'dot_general_0': a matmul of two activations that mixes the "
          "samples: 1 product of 8 x 64 x 8 for a batch of 8, so the rows of lhs of every sample meet the whole rhs "
          "(tpusim's layers are per sample)" in r.stderr, True)
    # A network input read by two layers: the second reads a new input, and the YAML says so.
    twice = ("module @m {\n  func.func public @main(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {\n"
             "    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x64xf32>, "
             "tensor<64x64xf32>) -> tensor<8x64xf32>\n    %1 = stablehlo.add %0, %x : tensor<8x64xf32>\n"
             "    return %1 : tensor<8x64xf32>\n  }\n}\n")
    src, out = write(d, "twice.mlir", twice), os.path.join(d, "twice.yaml")
    check("twice: exit status", convert(src, "-o", out).returncode, 0)
    with open(out) as f:
        check("twice: the note", "# operand 1 is network input '%x', which an earlier layer reads too, but tpusim "
              "reads a new input (a workload cannot name a network input twice: its bytes count again)" in f.read(),
              True)
    r = convert(os.path.join(d, "missing.mlir"))
    check("missing file: exit status", r.returncode, 2)
    check("missing file: the message", r.stderr.strip(), f"hlo2workload: {os.path.join(d, 'missing.mlir')}: expected "
          f"a readable StableHLO file, found no such file or directory")


PARAMS_FIRST = """module @jit_f {
  func.func public @main(%arg0: tensor<16x8xf32> {jax.arg_info = "params"}, %arg1: tensor<4x16xf32> {jax.arg_info = "x"}) -> tensor<4x8xf32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
"""


def params_first(d):
    """f(params, x): --input 1 makes x the input (batch 4) and params the weight: 4 x 16 x 8 MACs."""
    src, out = write(d, "params.mlir", PARAMS_FIRST), os.path.join(d, "params.yaml")
    r = convert(src, "-o", out, "--input", "1")
    check(f"--input 1: exit status ({r.stderr.strip()})", r.returncode, 0)
    if r.returncode == 0:
        check("--input 1: MACs", total_macs(lower_csv(out)), 4 * 16 * 8)
        with open(out) as f:
            text = f.read()
        check("--input 1: the header names the input", "inputs %arg1 (x)" in text, True)
        check("--input 1: the layer", layers(text), ["- {name: dot_general_0, type: linear, in_features: 16, "
                                                     "out_features: 8, tokens: 1}"])


def truncations():
    """
    Every prefix of a module (at every 5th character) is a module or a
    positioned error, never a traceback: the translation run in this process.
    """
    sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
    from hlo_lower import Converter
    from hlo_parse import parse
    from workload_out import BadInput
    with open(os.path.join(HERE, "hlo", "attention.mlir")) as f:
        text = f.read()
    crashes = []
    for n in range(0, len(text), 5):
        try:
            Converter(parse(text[:n], "t.mlir"), [0]).run()
        except BadInput as e:
            if not str(e).startswith("t.mlir:"):
                crashes.append((n, str(e)))
        except Exception as e:                    # anything else is a bug
            crashes.append((n, f"{type(e).__name__}: {e}"))
    check("truncated modules: every one a positioned error", crashes[:3], [])


def main():
    with tempfile.TemporaryDirectory() as d:
        text, r, _ = network(d, "mlp", MLP_MACS, MLP_LAYERS)
        if text is not None:
            check("mlp: the batch", "\nbatch: 8\n" in text, True)
            check("mlp: the source location of the first layer", "  # mlp.py:7:0\n  - {name: dot_general_0" in text, True)
            check("mlp: the biases are folded", r.stderr.count("folded        stablehlo.add"), 2)
            check("mlp: element types in the header", "element types f32, not kept" in text, True)
            check("mlp: MACs of tpusim run --model analytic", analytic_macs(d, os.path.join(d, "mlp.yaml")), MLP_MACS)
        text, r, _ = network(d, "conv", CONV_MACS, CONV_LAYERS)
        if text is not None:
            check("conv: the depthwise padding is said to be mapped",
                  "# conv_block.py:15:8; pad [[0, 1], [0, 1]] as padding 1: the same output size" in text, True)
        text, r, rows = network(d, "attention", ATT_MACS, None)
        if text is not None:
            check("attention: GEMM shapes (M, K, N, repeat)", sorted(g[1:] for g in gemms(rows)), sorted(ATT_GEMMS))
            check("attention: Q.K^T", "- {name: dot_general_9, type: matmul, m: 16, k: 8, n: 16, a: activation, "
                  "b: activation, repeat: 4, inputs: [dot_general_0, dot_general_3]}" in layers(text), True)
            check("attention: the softmax written out is one layer, after Q.K^T",
                  "- {name: call_12.divide_10, type: softmax, elements: 1024, inputs: [dot_general_9]}" in layers(text),
                  True)
            # reduce max, the -inf clamp, two broadcasts, subtract, exponential, reduce add, two broadcasts
            check("attention: its parts are fused", r.stderr.count("a softmax written out, into 'call_12.divide_10'"), 9)
            check("attention: no vector op but the softmax", [x["kind"] for x in rows if x["kind"] != "gemm"],
                  ["softmax"])
            check("attention: the call is inlined", "inlined       call" in r.stderr, True)
        # The README's example is what the importer prints.
        with open(os.path.join(HERE, "..", "README.md")) as f:
            readme = f.read()
        cmd = "$ scripts/hlo2workload.py tests/hlo/mlp.mlir\n"
        shown = readme.split(cmd, 1)[1].split("```", 1)[0] if cmd in readme else None
        r = subprocess.run([sys.executable, SCRIPT, "tests/hlo/mlp.mlir"], cwd=os.path.join(HERE, ".."),
                           capture_output=True, text=True)
        check("README: the MLP's conversion", shown, r.stdout)
        # --batch: the YAML's batch, the MACs scaled with it.
        network(d, "attention", ATT_MACS // B * 5, None, "--batch", "5")
        bad_input(d)
        params_first(d)
        truncations()

    for f in failures:
        print("FAIL", f)
    print(f"test_hlo: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
