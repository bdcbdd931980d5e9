#!/usr/bin/env python3
"""Writes the shipped networks in configs/workloads/ from their published shapes.

Run from the repository root: python3 scripts/gen_workloads.py [DIR]
The YAML files are committed; this script documents how they were laid out
(DIR, default configs/workloads, is where it writes them).
"""
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "configs/workloads"


def value(v):
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, list):
        return "[" + ", ".join(v) + "]"
    return str(v)


def flow(d):
    return "{" + ", ".join(f"{k}: {value(v)}" for k, v in d.items()) + "}"


def block(name, repeat, layers):
    """A block item: its layers, repeat times over (instance i's layer x is name.i.x)."""
    return dict(block=dict(name=name, repeat=repeat, layers=layers))


def write(name, header, batch, layers):
    with open(os.path.join(OUT, name + ".yaml"), "w") as f:
        for line in header.strip().splitlines():
            f.write("# " + line + "\n" if line else "#\n")
        f.write(f"name: {name}\nbatch: {batch}\nlayers:\n")
        for l in layers:
            if "block" in l:
                b = l["block"]
                f.write(f"  - block:\n      name: {b['name']}\n      repeat: {b['repeat']}\n      layers:\n")
                for bl in b["layers"]:
                    f.write("        - " + flow(bl) + "\n")
            else:
                f.write("  - " + flow(l) + "\n")


def conv(name, h, c, oc, k, s=1, p=None, groups=1):
    return dict(name=name, type="conv2d", in_h=h, in_w=h, in_c=c, out_c=oc, kernel=k, stride=s,
                padding=(k // 2 if p is None else p), groups=groups)


def resnet50():
    L = [conv("conv1", 224, 3, 64, 7, 2, 3),
         dict(name="maxpool", type="pool", in_h=112, in_w=112, in_c=64, kernel=3, stride=2, padding=1, mode="max")]
    h, c, block_in = 56, 64, "maxpool"
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=1):
        out = width * 4
        for b in range(blocks):
            s = stride if b == 0 else 1
            p = f"layer{stage}.{b}"
            L.append(dict(conv(p + ".conv1", h, c, width, 1), inputs=[block_in]))
            L.append(conv(p + ".conv2", h, width, width, 3, s, 1))     # v1.5: the stride sits on the 3x3
            ho = (h + 2 - 3) // s + 1
            L.append(conv(p + ".conv3", ho, width, out, 1))
            shortcut = block_in
            if b == 0:
                L.append(dict(conv(p + ".downsample", h, c, out, 1, s, 0), inputs=[block_in]))
                shortcut = p + ".downsample"
            L.append(dict(name=p + ".add", type="add", elements=ho * ho * out, inputs=[p + ".conv3", shortcut]))
            h, c, block_in = ho, out, p + ".add"
    L.append(dict(name="avgpool", type="pool", in_h=7, in_w=7, in_c=2048, mode="avg", **{"global": True}))
    L.append(dict(name="fc", type="fc", in_features=2048, out_features=1000))
    write("resnet50", """
ResNet-50 v1.5, the torchvision layout: in each bottleneck the stride-2 sits on
the 3x3 convolution (v1 put it on the first 1x1). He et al., "Deep Residual
Learning for Image Recognition", CVPR 2016, Table 1; torchvision.models.resnet50.
Input 224 x 224 x 3. Batch normalisation is folded into the convolutions and each
ReLU is fused into the op before it; the residual adds run on the vector unit.
Total: 4,089,184,256 MACs at batch 1 (torchvision lists 4.09 GFLOPS, counting
multiply-adds, for ResNet50_Weights.IMAGENET1K_V1).
inputs: each block's conv1 and shortcut (downsample) read the block's input, the
previous block's add (the stem's maxpool for the first); each add reads conv3, then
the shortcut; the other layers read the layer before them.
""", 1, L)
    return L


def mobilenet_v2():
    L = [conv("conv1", 224, 3, 32, 3, 2, 1)]
    h, c, block_in = 112, 32, "conv1"
    i = 0
    for t, oc, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                        (6, 160, 3, 2), (6, 320, 1, 1)]:
        for r in range(n):
            st = s if r == 0 else 1
            p = f"block{i}"
            hid = c * t
            if t != 1:
                L.append(conv(p + ".expand", h, c, hid, 1))
            L.append(conv(p + ".dw", h, hid, hid, 3, st, 1, groups=hid))
            ho = (h + 2 - 3) // st + 1
            L.append(conv(p + ".project", ho, hid, oc, 1))
            if st == 1 and c == oc:
                L.append(dict(name=p + ".add", type="add", elements=ho * ho * oc, inputs=[p + ".project", block_in]))
            h, c, block_in = ho, oc, L[-1]["name"]
            i += 1
    L.append(conv("conv_last", 7, 320, 1280, 1))
    L.append(dict(name="avgpool", type="pool", in_h=7, in_w=7, in_c=1280, mode="avg", **{"global": True}))
    L.append(dict(name="fc", type="fc", in_features=1280, out_features=1000))
    write("mobilenet_v2", """
MobileNetV2 (width 1.0, 224 x 224): Sandler et al., "MobileNetV2: Inverted
Residuals and Linear Bottlenecks", CVPR 2018, Table 2. Each bottleneck is a 1x1
expansion (factor t), a 3x3 depthwise convolution (groups = channels) and a 1x1
projection, with a residual add when shapes allow. The paper lists 300 M
multiply-adds; this file has 300,774,272 (including the classifier).
inputs: each residual add reads its projection, then the block's input (the
previous block's output); the other layers read the layer before them.
""", 1, L)


def bert_base():
    S, D, H, F = 128, 768, 12, 3072
    enc = [dict(name="attn", type="attention", seq=S, d_model=D, heads=H),
           dict(name="add1", type="add", elements=S * D, inputs=["attn", "block.in"]),
           dict(name="ln1", type="layernorm", elements=S * D),
           dict(name="mlp", type="mlp", tokens=S, d_model=D, d_ff=F, activation="gelu"),
           dict(name="add2", type="add", elements=S * D, inputs=["mlp", "ln1"]),
           dict(name="ln2", type="layernorm", elements=S * D)]
    write("bert_base", """
BERT-base encoder: 12 layers, d_model 768, 12 heads, feed-forward 3072, GELU,
sequence length 128. Devlin et al., "BERT: Pre-training of Deep Bidirectional
Transformers for Language Understanding", NAACL 2019, Sec. 3. Embeddings and
the pooler are left out: the encoder is where the time goes.
The block enc holds one encoder layer, 12 times: enc.0.attn to enc.11.ln2.
inputs: add1 = attn + the block's input (block.in: the previous instance's ln2;
enc.0's is the network input, read as a second new input), add2 = mlp + ln1.
""", 1, [block("enc", 12, enc)])


def llm(mode):
    D, H, F, T = 4096, 32, 11008, 2048
    attn = dict(name="attn", type="attention", d_model=D, heads=H, kv_heads=H, head_dim=128)
    if mode == "prefill":
        attn.update(seq=T, causal=True, mode="prefill")
        tok = T
    else:
        attn.update(mode="decode", kv_cache=T)
        tok = 1
    L = [dict(name="norm1", type="layernorm", elements=tok * D), attn,
         dict(name="add1", type="add", elements=tok * D),
         dict(name="norm2", type="layernorm", elements=tok * D),
         dict(name="mlp", type="mlp", tokens=tok, d_model=D, d_ff=F, gated=True, activation="silu"),
         dict(name="add2", type="add", elements=tok * D, inputs=["mlp", "add1"])]
    what = ("prefill of a 2048-token prompt (causal)" if mode == "prefill"
            else "one decode step: one new token against a 2048-token KV cache")
    write("llm7b_" + mode, f"""
One decoder block in the shape of a 7B-parameter LLM (LLaMA-7B: Touvron et al.,
"LLaMA: Open and Efficient Foundation Language Models", 2023, Table 2):
d_model 4096, 32 heads of 128, gated SiLU MLP of 11008, RMSNorm (modelled as
layernorm). This file: {what}.
The whole model is 32 such blocks: set repeat: 32 on each layer to run it.
inputs: add2 = mlp + add1; add1's residual is the block's input, the network's,
which it reads as a second new input.
""", 1, L)


def mlp():
    L = [dict(name="fc1", type="fc", in_features=784, out_features=512),
         dict(name="relu1", type="relu", elements=512),
         dict(name="fc2", type="fc", in_features=512, out_features=256),
         dict(name="relu2", type="relu", elements=256),
         dict(name="fc3", type="fc", in_features=256, out_features=10)]
    write("mlp", """
A small multilayer perceptron (784-512-256-10, as for MNIST digits) at batch 16:
three fully connected layers, small enough to follow by hand on lab_4x4.
""", 16, L)


def macs(L, batch=1):
    total = 0
    for l in L:
        if l["type"] == "conv2d":
            k, s, p = l["kernel"], l["stride"], l["padding"]
            ho = (l["in_h"] + 2 * p - k) // s + 1
            total += batch * ho * ho * k * k * l["in_c"] // l["groups"] * l["out_c"]
        elif l["type"] == "fc":
            total += batch * l["in_features"] * l["out_features"]
    return total


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    r = resnet50()
    print("resnet50 MACs", macs(r))
    mobilenet_v2()
    bert_base()
    llm("prefill")
    llm("decode")
    mlp()
