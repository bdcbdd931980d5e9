#!/usr/bin/python3
"""The Python binding (scripts/tpusim.py) on two configs: its results equal
the CLI's summary.json (a separate process), a hand-timed GEMM gives its
closed-form cycles, and a bad input raises tpusim.Error with the error line.
Run by `make test` with TPUSIM (the CLI) and TPUSIM_LIB (the library) set."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import tpusim  # noqa: E402

try:
    import numpy
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

CLI = os.environ.get("TPUSIM", "build/tpusim")


def cli_summary(args):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([CLI, "run", *args, "-o", d], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "summary.json")) as f:
            return json.load(f)


class Binding(unittest.TestCase):
    def test_two_configs_equal_cli(self):
        for cfg in ("configs/tpu_v1.yaml", "configs/edge_32x32.yaml"):
            with self.subTest(cfg=cfg):
                r = tpusim.run(configs=[cfg], workload="configs/workloads/mlp.yaml",
                               set={"sram.inputs.kib": 128})
                self.assertEqual(r, cli_summary(["-c", cfg, "-w", "configs/workloads/mlp.yaml",
                                                 "--set", "sram.inputs.kib=128"]))
                self.assertEqual(r["config"]["sram"]["inputs"]["kib"], 128)
                self.assertEqual(r["version"], tpusim.version())

    def test_hand_timed_gemm(self):
        # One 4x4x4 GEMM on the 4x4 ws array with ideal memory: the weights
        # shift in (4 cycles), 4 rows stream (4), the last partial sums cross
        # the rows and columns (4 + 4 - 2): 14 cycles.
        with tempfile.TemporaryDirectory() as d:
            wl = os.path.join(d, "g.yaml")
            with open(wl, "w") as f:
                f.write("name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 4, k: 4, n: 4}\n")
            for model in ("analytic", "cycle"):
                r = tpusim.run(configs="configs/lab_4x4.yaml", workload=wl, model=model, ideal_memory=True)
                self.assertEqual(r["total"]["cycles"], 14, model)
                self.assertEqual(r["total"]["macs"], 64)

    def test_functional(self):
        # The same 4x4x4 GEMM register by register: 14 cycles, 16 outputs equal
        # to the reference; two seeds give different operands, the same cycles.
        with tempfile.TemporaryDirectory() as d:
            wl = os.path.join(d, "g.yaml")
            with open(wl, "w") as f:
                f.write("name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 4, k: 4, n: 4}\n")
            for seed in (1, 2):
                r = tpusim.run(configs="configs/lab_4x4.yaml", workload=wl, model="functional", seed=seed)
                self.assertEqual(r["total"]["cycles"], 14)
                self.assertEqual(r["functional"], {"outputs": 16, "mismatches": 0, "max_abs_error": 0})
                self.assertEqual(r["ideal_memory"], True)

    def test_default_seed(self):
        # Without "seed" the library draws the operands the command line draws
        # without --seed (seed 1): fp32 sums round differently for other operands.
        with tempfile.TemporaryDirectory() as d:
            wl = os.path.join(d, "g.yaml")
            with open(wl, "w") as f:
                f.write("name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: 8, k: 300, n: 8}\n")
            sets = {"array.dtype": "fp32"}
            err = {s: tpusim.run(configs="configs/lab_4x4.yaml", workload=wl, model="functional", set=sets,
                                 seed=s)["functional"]["max_abs_error"] for s in (None, 1, 2)}
            self.assertEqual(err[None], err[1])
            self.assertNotEqual(err[1], err[2])
            out = os.path.join(d, "o")
            subprocess.run([os.environ.get("TPUSIM", "build/tpusim"), "run", "-c", "configs/lab_4x4.yaml", "-w", wl,
                            "--model", "functional", "--set", "array.dtype=fp32", "-o", out], check=True,
                           stdout=subprocess.DEVNULL)
            with open(os.path.join(out, "summary.json")) as f:
                self.assertEqual(json.load(f)["functional"]["max_abs_error"], err[None])

    @unittest.skipUnless(HAVE_NUMPY, "numpy (python3-numpy) is not installed")
    def test_npy_round_trip(self):
        # Operands written by numpy, the result read back by numpy: C = A B
        # exactly for int8 (int32 results), within fp32 rounding for bf16.
        rng = numpy.random.default_rng(5)
        with tempfile.TemporaryDirectory() as d:
            a = rng.integers(-128, 128, size=(9, 7), dtype=numpy.int8)
            b = rng.integers(-128, 128, size=(7, 6), dtype=numpy.int8)
            numpy.save(os.path.join(d, "a.npy"), a)
            numpy.save(os.path.join(d, "b.npy"), b)
            wl = os.path.join(d, "w.yaml")
            with open(wl, "w") as f:
                f.write("name: w\nlayers:\n  - {name: mm, type: matmul, m: 9, k: 7, n: 6, a_npy: a.npy, b_npy: b.npy}\n")
            for df in ("ws", "os", "is"):
                out = os.path.join(d, "c_" + df)
                subprocess.run([CLI, "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional",
                                "--dataflow", df, "--save-outputs", out], check=True, stdout=subprocess.DEVNULL)
                c = numpy.load(os.path.join(out, "mm.npy"))
                self.assertEqual(c.dtype, numpy.int32)
                self.assertTrue((c == a.astype(numpy.int64) @ b.astype(numpy.int64)).all(), df)
            # float32 operands that are not bf16 values are refused, with the place and the value
            numpy.save(os.path.join(d, "a.npy"), numpy.full((9, 7), 0.1, dtype=numpy.float32))
            p = subprocess.run([CLI, "run", "-c", "configs/lab_4x4.yaml", "-w", wl, "--model", "functional",
                                "--set", "array.dtype=bf16"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("w.yaml:3:55: layers[0].a_npy: expected values representable in bf16 (array.dtype), "
                          "found 0.10000000149011612 at [0][0]", p.stderr)

    def test_ctrl_c(self):
        # A run of minutes (llm7b_prefill on lab_4x4: 599,801,728 folds) in a child; SIGINT a second in.
        child = textwrap.dedent('''
            import sys, time
            sys.path.insert(0, "scripts")
            import tpusim
            print("start", flush=True)
            t0 = time.monotonic()
            try:
                tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/llm7b_prefill.yaml")
                print("finished")
            except KeyboardInterrupt:
                print("interrupted after %.1f s" % (time.monotonic() - t0))
            r = tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml", model="analytic")
            print("next", r["model"])
            ''')
        p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline(), "start\n")
            time.sleep(1.0)
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail("tpusim.run() went on for 10 s after SIGINT")
        lines = out.splitlines()
        self.assertEqual(len(lines), 2, out)
        self.assertRegex(lines[0], r"^interrupted after \d+\.\d s$")
        self.assertLess(float(lines[0].split()[2]), 5.0)
        self.assertEqual(lines[1], "next analytic")
        self.assertEqual(p.returncode, 0)
        # An interrupt with no call running is forgotten by the next call.
        tpusim._load().tpusim_interrupt()
        r = tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml", model="analytic")
        self.assertEqual(r["model"], "analytic")

    def test_error_line(self):
        with self.assertRaises(tpusim.Error) as cm:
            tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml",
                       set={"array.rows": 0})
        self.assertEqual(cm.exception.status, 2)
        self.assertRegex(str(cm.exception),
                         r'^request:1:\d+: array.rows: expected an integer in \[1, 4096\], found "0"$')
        # ... and the next call is unaffected.
        r = tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml", model="analytic")
        self.assertEqual(r["model"], "analytic")


if __name__ == "__main__":
    unittest.main(verbosity=1)
