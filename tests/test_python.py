#!/usr/bin/python3
"""The Python binding (scripts/tpusim.py) on two configs: its results equal
the CLI's summary.json (a separate process), a hand-timed GEMM gives its
closed-form cycles, a bad input raises tpusim.Error with the error line
naming the keyword argument, calls from many threads at once each get the
answer they get alone, and `make install` installs the binding, the importer
and the workloads, found by name from any directory.
Run by `make test` with TPUSIM (the CLI) and TPUSIM_LIB (the library) set."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import threading
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
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GEMM = "name: g\nbatch: 1\nlayers:\n  - {name: g, type: matmul, m: %d, k: %d, n: %d}\n"


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

    def test_names_wherever_the_library_was_loaded_from(self):
        # Presets and workloads by name, with the library loaded by a relative
        # path (TPUSIM_LIB=build/libtpusim.so, LD_LIBRARY_PATH=build) and the
        # working directory changed since: the preset directory is found from
        # the library's own file, wherever the process now is.
        code = ("import ctypes, json, os, sys, tempfile\n"
                "raw = ctypes.CDLL('build/libtpusim.so')\n"
                "raw.tpusim_run_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]\n"
                "sys.path.insert(0, 'scripts')\n"
                "import tpusim\n"
                "tpusim.version()\n"
                "os.chdir(tempfile.gettempdir())\n"
                "out = ctypes.c_char_p()\n"
                "req = b'{\"configs\": [\"lab_4x4\"], \"workload\": \"mlp\", \"model\": \"analytic\"}'\n"
                "status = raw.tpusim_run_json(req, ctypes.byref(out))\n"
                "r = tpusim.run(configs=['lab_4x4'], workload='mlp', model='analytic')\n"
                "print(json.dumps([status, json.loads(out.value)['total']['macs'] if status == 0 else out.value.decode(),\n"
                "                  r['total']['macs']]))\n")
        env = dict(os.environ, TPUSIM_LIB="build/libtpusim.so")
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        macs = 16 * (784 * 512 + 512 * 256 + 256 * 10)     # mlp: 784-512-256-10 at batch 16
        self.assertEqual(json.loads(p.stdout), [0, macs, macs])

    def test_lib_named_but_not_loadable(self):
        # TPUSIM_LIB names the library to use: one that cannot be loaded is an
        # error naming it, not a quiet fall back to build/libtpusim.so.
        code = ("import sys\n"
                "sys.path.insert(0, 'scripts')\n"
                "import tpusim\n"
                "try:\n"
                "    tpusim.version()\n"
                "except OSError as e:\n"
                "    print(e)\n"
                "    sys.exit(3)\n")
        env = dict(os.environ, TPUSIM_LIB="/nonexistent/lib.so")
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("TPUSIM_LIB=/nonexistent/lib.so: cannot be loaded: "), p.stdout)

    def interrupted(self, child, what):
        """Runs the Python code child, which prints "start" once its calls are
        made; SIGINT a second later. Its stdout, and the finished process."""
        p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline(), "start\n")
            time.sleep(1.0)
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail(what + " for 10 s after SIGINT")
        return out, p

    def test_ctrl_c(self):
        # A run of minutes (llm7b_prefill on lab_4x4: 599,801,728 folds) in a child; SIGINT a second in.
        # The child takes SIGINT as an interactive Python does, whatever this
        # process inherited (a job started in the background ignores SIGINT).
        child = textwrap.dedent('''
            import signal, sys, time
            signal.signal(signal.SIGINT, signal.default_int_handler)
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
        out, p = self.interrupted(child, "tpusim.run() went on")
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

    def test_ctrl_c_stops_calls_from_threads(self):
        # Four long runs from a pool of threads (one running, three waiting
        # their turn): Ctrl-C stops all four, the running one and the waiting
        # ones, each with status 130, and the process ends; a call made after
        # it runs as usual.
        child = textwrap.dedent('''
            import concurrent.futures, signal, sys, time
            signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.path.insert(0, "scripts")
            import tpusim
            def one(i):
                try:
                    tpusim.run(configs=["lab_4x4"], workload="llm7b_prefill")
                    return "finished"
                except tpusim.Error as e:
                    return "%d %s" % (e.status, e)
            pool = concurrent.futures.ThreadPoolExecutor(4)
            futures = [pool.submit(one, i) for i in range(4)]
            print("start", flush=True)
            try:
                concurrent.futures.wait(futures)
            except KeyboardInterrupt:
                print("interrupted", flush=True)
            print(sorted(f.result() for f in futures))
            r = tpusim.run(configs=["lab_4x4"], workload="mlp", model="analytic")
            print("next", r["model"])
            ''')
        out, p = self.interrupted(child, "the pool's calls went on")
        self.assertEqual(out.splitlines(), ["interrupted", str(["130 interrupted by SIGINT"] * 4), "next analytic"])
        self.assertEqual(p.returncode, 0)

    def test_error_line(self):
        with self.assertRaises(tpusim.Error) as cm:
            tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml",
                       set={"array.rows": 0})
        self.assertEqual(cm.exception.status, 2)
        self.assertEqual(str(cm.exception),
                         'tpusim.run(set=...): array.rows: expected an integer in [1, 4096], found "0"')
        # ... and the next call is unaffected.
        r = tpusim.run(configs=["configs/lab_4x4.yaml"], workload="configs/workloads/mlp.yaml", model="analytic")
        self.assertEqual(r["model"], "analytic")

    def test_error_names_keyword(self):
        # The request's JSON is the binding's, never the caller's: a message names
        # the keyword argument, not a column of that JSON. Errors in the caller's
        # own files keep their positions.
        base = {"configs": ["configs/lab_4x4.yaml"], "workload": "configs/workloads/mlp.yaml", "model": "analytic"}
        cases = [
            ({"dataflow": "xs"}, 'tpusim.run(dataflow=...): expected "ws", "os" or "is", found "xs"'),
            ({"model": "fast"}, 'tpusim.run(model=...): expected "analytic", "cycle" or "functional", found "fast"'),
            ({"batch": "2"}, 'tpusim.run(batch=...): expected an integer in [1, 1048576], found "2"'),
            ({"batch": 0}, 'tpusim.run(batch=...): expected an integer in [1, 1048576], found "0"'),
            ({"ideal_memory": 1}, 'tpusim.run(ideal_memory=...): expected true or false, found "1"'),
            ({"seed": -1}, 'tpusim.run(seed=...): expected an integer in [0, 2^64), found "-1"'),
            ({"set": {"array.rowz": 1}},
             'tpusim.run(set=...): array.rowz: expected a known key, found an unknown key (did you mean array.rows?)'),
            ({"set": {"array.rows": [8]}},
             "tpusim.run(set=...): array.rows: expected a number, boolean or string, found a sequence"),
            ({"configs": []}, "tpusim.run(configs=...): expected at least one config file, found none"),
            ({"seed": 7},
             'tpusim.run(seed=...): expected model "functional" (only it draws operands), found model "analytic"'),
        ]
        for kw, want in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(tpusim.Error) as cm:
                    tpusim.run(**{**base, **kw})
                self.assertEqual(cm.exception.status, 2)
                self.assertEqual(str(cm.exception), want)
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.yaml")
            with open(cfg, "w") as f:
                f.write("array:\n  rows: 0\n")
            with self.assertRaises(tpusim.Error) as cm:
                tpusim.run(configs=[cfg], workload="configs/workloads/mlp.yaml")
            self.assertEqual(str(cm.exception), cfg + ':2:9: array.rows: expected an integer in [1, 4096], found "0"')
        # The JSON request itself, written by the caller, keeps its positions: the
        # text up to the third key is 80 characters, '"dataflow": ' 12 more: column 93.
        status, text = tpusim.run_json('{"configs": ["configs/lab_4x4.yaml"], "workload": '
                                       '"configs/workloads/mlp.yaml", "dataflow": "xs"}')
        self.assertEqual((status, text), (2, 'request:1:93: dataflow: expected "ws", "os" or "is", found "xs"'))


class Threads(unittest.TestCase):
    def test_threads_get_their_own_answers(self):
        # 8 threads x 20 calls over 4 presets, the cycle and analytic models and
        # the three dataflows (and, in each thread, one call that fails): every
        # answer equals the one the same call gives alone, one at a time.
        presets = ["configs/lab_4x4.yaml", "configs/edge_32x32.yaml", "configs/gemmini.yaml", "configs/tpu_v1.yaml"]
        with tempfile.TemporaryDirectory() as d:
            wls = []
            for i, (m, k, n) in enumerate([(8, 12, 6), (20, 5, 9)]):
                wls.append(os.path.join(d, "g%d.yaml" % i))
                with open(wls[-1], "w") as f:
                    f.write(GEMM % (m, k, n))
            calls = []
            for c in range(20):
                calls.append(dict(configs=[presets[c % 4]], workload=wls[c // 4 % 2],
                                  model=("cycle", "analytic")[c // 8 % 2], dataflow=("ws", "os", "is")[c % 3]))
            bad = dict(configs=[presets[0]], workload=wls[0], set={"array.rows": 0})

            def call(kw):
                try:
                    return tpusim.run(**kw)
                except tpusim.Error as e:
                    return (e.status, str(e))

            alone = [call(kw) for kw in calls]
            alone_bad = call(bad)
            self.assertEqual(alone_bad[0], 2)
            self.assertEqual(len({json.dumps(r, sort_keys=True) for r in alone}), 20)
            got, errors = {}, []

            def worker(t):
                try:
                    for j in range(20):
                        c = (j + 5 * t) % 20
                        got[t, j] = (c, call(calls[c]))
                        if j == t:
                            got[t, "bad"] = call(bad)
                except BaseException as e:  # reported by the main thread
                    errors.append(repr(e))

            threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            self.assertEqual(len(got), 8 * 21)
            for key, value in got.items():
                if key[1] == "bad":
                    self.assertEqual(value, alone_bad, key)
                else:
                    self.assertEqual(value[1], alone[value[0]], key)


def make_install(dest, prefix):
    """make install DESTDIR=dest PREFIX=prefix from the checkout, of the binaries under test."""
    build = os.path.dirname(os.path.abspath(CLI))
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "-s", "--no-print-directory", "install", "DESTDIR=" + dest, "PREFIX=" + prefix,
                        "BIN=" + os.path.abspath(CLI), "LIB=" + os.path.join(build, "libtpusim.so"),
                        "SAN=1" if "/build/san/" in os.path.abspath(CLI) else "SAN=0"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("make install: exit %d: %s%s" % (p.returncode, p.stdout, p.stderr))


class Install(unittest.TestCase):
    def test_installed_tree_from_elsewhere(self):
        # make install into a DESTDIR with a space in it: the binary, run from
        # another directory, finds a preset and a workload by name (-c tpu_v1
        # -w mlp); Python imports the installed tpusim.py from where Python
        # looks for PREFIX=/usr/local (sysconfig), which loads the installed
        # library; the installed ONNX importer answers --help and converts a
        # model; and nothing new appears in the checkout.
        before = sorted(os.listdir(ROOT))
        with tempfile.TemporaryDirectory() as d:
            dest = os.path.join(d, "stage dir")
            make_install(dest, "/usr/local")
            top = dest + "/usr/local"
            work = os.path.join(d, "work")
            os.mkdir(work)
            p = subprocess.run([top + "/bin/tpusim", "run", "-c", "tpu_v1", "-c", "memory/hbm3", "-w", "mlp",
                                "--model", "analytic", "-o", "out"], cwd=work, capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            with open(os.path.join(work, "out", "summary.json")) as f:
                s = json.load(f)
            # mlp: 784-512-256-10 at batch 16.
            self.assertEqual(s["total"]["macs"], 16 * (784 * 512 + 512 * 256 + 256 * 10))
            self.assertEqual(s["workload_file"], top + "/share/tpusim/configs/workloads/mlp.yaml")
            self.assertEqual(s["config_files"], [top + "/share/tpusim/configs/tpu_v1.yaml",
                                                 top + "/share/tpusim/configs/memory/hbm3.yaml"])
            # A name that is no installed workload lists those there are.
            names = sorted(n[:-5] for n in os.listdir(os.path.join(ROOT, "configs", "workloads")) if n.endswith(".yaml"))
            p = subprocess.run([top + "/bin/tpusim", "run", "-c", "tpu_v1", "-w", "resnet5"], cwd=work,
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (2, ""))
            self.assertEqual(p.stderr, "resnet5: expected a workload file or a workload name (%s), found neither "
                             "(did you mean resnet50?)\n" % ", ".join(names))

            pydir = dest + sysconfig.get_path("purelib", "posix_local")
            env = {k: v for k, v in os.environ.items() if k != "TPUSIM_LIB"}
            env["PYTHONPATH"] = pydir
            code = ("import json, os, tpusim\n"
                    "r = tpusim.run(configs=['tpu_v1'], workload='mlp', model='analytic')\n"
                    "print(json.dumps([tpusim.__file__, os.path.realpath(tpusim._load()._name), r['total']['macs'], "
                    "r['workload_file']]))\n")
            p = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout), [pydir + "/tpusim.py", os.path.realpath(top + "/lib/libtpusim.so"),
                                                    16 * (784 * 512 + 512 * 256 + 256 * 10),
                                                    top + "/share/tpusim/configs/workloads/mlp.yaml"])
            # The StableHLO importer converts with its modules from the installed
            # tree (standard library only): the MLP of tests/hlo, two linear
            # layers and a relu, checked by the installed tpusim (first on PATH).
            env = {k: v for k, v in os.environ.items() if k not in ("TPUSIM", "PYTHONPATH")}
            env["PATH"] = top + "/bin" + os.pathsep + env.get("PATH", "")
            p = subprocess.run([top + "/bin/hlo2workload.py", os.path.join(ROOT, "tests", "hlo", "mlp.mlir"), "-o",
                                "mlp_hlo.yaml"], cwd=work, env=env, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("no tpusim found", p.stderr)
            with open(os.path.join(work, "mlp_hlo.yaml")) as f:
                self.assertEqual([l.split(",")[1] for l in f.read().splitlines() if l.startswith("  - {")],
                                 [" type: linear", " type: relu", " type: linear"])
            if importlib.util.find_spec("onnx") is None:
                self.skipTest("onnx (python3-onnx) is not installed: the importer's --help is not tried")
            p = subprocess.run([top + "/bin/onnx2workload.py", "--help"], cwd=work, capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            self.assertTrue(p.stdout.startswith("usage: onnx2workload.py "), p.stdout)
            # It converts, with its translation (onnx_lower.py) from the
            # installed tree: a Gemm of a 2 x 8 input by an 8 x 4 weight is,
            # per sample, an fc layer of 8 in and 4 out features at batch 2,
            # checked by the installed tpusim (first on PATH).
            import onnx
            from onnx import TensorProto, helper
            g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc1")], "tiny",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
                                  [helper.make_tensor("w", TensorProto.FLOAT, [8, 4], [0.0] * 32)])
            onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(work, "tiny.onnx"))
            env = {k: v for k, v in os.environ.items() if k not in ("TPUSIM", "PYTHONPATH")}
            env["PATH"] = top + "/bin" + os.pathsep + env.get("PATH", "")
            p = subprocess.run([top + "/bin/onnx2workload.py", "tiny.onnx", "-o", "tiny.yaml"], cwd=work, env=env,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("no tpusim found", p.stderr)
            with open(os.path.join(work, "tiny.yaml")) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[-4:], ["name: tiny", "batch: 2", "layers:",
                                          "  - {name: fc1, type: fc, in_features: 8, out_features: 4}"])
        self.assertEqual(sorted(os.listdir(ROOT)), before)


if __name__ == "__main__":
    unittest.main(verbosity=1)
