"""tpusim from Python: one simulation per call, through build/libtpusim.so.

    import tpusim
    r = tpusim.run(configs=["configs/tpu_v1.yaml"], workload="configs/workloads/resnet50.yaml",
                   set={"sram.inputs.kib": 8192}, model="analytic")
    r["total"]["cycles"], r["config"]["sram"]["inputs"]["kib"]

run() returns summary.json as a dict (the same text `tpusim run -o DIR`
writes); a bad input or a failed simulation raises tpusim.Error, whose
message is tpusim's one error line and whose .status is the CLI's exit
status (2 bad input, 1 simulation error, 3 out of memory). A bad argument
is named as it was given, `tpusim.run(dataflow=...): expected "ws", "os" or
"is", found "xs"`; errors in the files it names keep their file:line:col.
Any number of threads may call run(); the calls run one at a time (see
tpusim.h), each with its own answer. Ctrl-C stops a long run: it raises
KeyboardInterrupt soon after (between folds), and the next call is
unaffected. Standard library only (ctypes).

The library is $TPUSIM_LIB when that is set (one that cannot be loaded is an
OSError naming it), else build/libtpusim.so beside this
script's folder (a checkout's scripts/), else PREFIX/lib/libtpusim.so for
this file installed by `make install` in PREFIX/lib/pythonX.Y/dist-packages,
else by the system's loader (libtpusim.so).
"""
import ctypes
import json
import os
import re
import signal
import threading

__all__ = ["run", "version", "Error"]


class Error(Exception):
    """A run that did not succeed: str(e) is tpusim's error line, e.status its exit status."""

    def __init__(self, line, status):
        super().__init__(line)
        self.line = line
        self.status = status


_lib = None
_lib_lock = threading.Lock()


def _load():
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _open()
    return _lib


def _open():
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.environ.get("TPUSIM_LIB")
    # By absolute path: the library finds the presets from its own file, and a
    # relative name would mean another file once the working directory changes.
    # A library named is the one to use: it loads, or that is the error.
    if lib:
        try:
            lib = ctypes.CDLL(os.path.abspath(lib))
        except OSError as e:
            raise OSError("TPUSIM_LIB=%s: cannot be loaded: %s" % (lib, e)) from None
        return _declare(lib)
    candidates = [os.path.join(here, "..", "build", "libtpusim.so")]
    if os.path.basename(here) in ("dist-packages", "site-packages"):
        candidates.append(os.path.join(here, "..", "..", "libtpusim.so"))   # installed: PREFIX/lib
    candidates.append("libtpusim.so")
    last = None
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            last = e
    else:
        raise OSError("libtpusim.so not found (run make, or set TPUSIM_LIB): %s" % last)
    return _declare(lib)


def _declare(lib):
    """The entry points' argument and result types, on the library lib."""
    lib.tpusim_run_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tpusim_run_json.restype = ctypes.c_int
    lib.tpusim_free.argtypes = [ctypes.c_void_p]
    lib.tpusim_free.restype = None
    lib.tpusim_version.argtypes = []
    lib.tpusim_version.restype = ctypes.c_char_p
    lib.tpusim_interrupt.argtypes = []
    lib.tpusim_interrupt.restype = None
    return lib


def _on_sigint(sig, frame):
    """Ctrl-C: first stops the calls in flight, from whatever thread they were
    made (tpusim_interrupt stops every call made before it, running or waiting
    its turn, with status 130), then is Python's own Ctrl-C (KeyboardInterrupt
    in the main thread). A call made from another thread raises Error with
    status 130, so a pool of threads ends instead of running on."""
    if _lib is not None:
        _lib.tpusim_interrupt()
    signal.default_int_handler(sig, frame)


# Only in place of Python's own handler: a program (or a Jupyter kernel) that
# installed its own keeps it, and Ctrl-C then stops main-thread calls (_call).
if threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _on_sigint)


def version():
    """The library's version, as in every summary."""
    return _load().tpusim_version().decode()


def _call(lib, request, out):
    """lib.tpusim_run_json(request, &out), interruptible by Ctrl-C.

    Python delivers KeyboardInterrupt to the main thread between bytecodes,
    never inside a C call: so the main thread waits for the call, made in a
    worker thread, in short waits. On KeyboardInterrupt it asks the library
    to stop (tpusim_interrupt, again each wait until the call has returned:
    the call clears the request when it starts), then raises it. The call's
    end is an Event the worker sets, not Thread.join: a KeyboardInterrupt
    inside join can leave the thread marked as ended while it still runs."""
    if threading.current_thread() is not threading.main_thread():
        return lib.tpusim_run_json(request, ctypes.byref(out))
    status, done = [], threading.Event()

    def call():
        try:
            status.append(lib.tpusim_run_json(request, ctypes.byref(out)))
        finally:
            done.set()

    threading.Thread(target=call, name="tpusim.run", daemon=True).start()
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        while not done.is_set():
            lib.tpusim_interrupt()
            done.wait(0.05)
        lib.tpusim_free(out)
        raise
    return status[0]


def run_json(request):
    """Runs a request given as JSON text; returns (status, text): summary.json or the error line."""
    if not isinstance(request, str):
        raise TypeError("tpusim.run_json: expected the request as a str, found %s" % type(request).__name__)
    lib = _load()
    out = ctypes.c_void_p()
    status = _call(lib, request.encode(), out)
    if not out.value:
        raise MemoryError("tpusim: out of memory")
    try:
        text = ctypes.string_at(out.value).decode()
    finally:
        lib.tpusim_free(out)
    return status, text


# run()'s keyword arguments, in the order they go into the request, each the
# request key of the same name (tpusim.h): the one place a request key is
# mapped back to the keyword that gave it.
_KEYWORDS = ("configs", "workload", "set", "model", "dataflow", "batch", "ideal_memory", "seed", "reuse")


def _request(args):
    """The request's JSON for run()'s arguments (keyword: value, None left out), and
    where each value is in it: (first column, last column, keyword), columns from 1."""
    text, spans = "{", []
    for key in _KEYWORDS:
        if args.get(key) is None:
            continue
        if len(text) > 1:
            text += ", "
        text += json.dumps(key) + ": "
        start = len(text) + 1
        text += json.dumps(args[key])
        spans.append((start, len(text), key))
    return text + "}", spans


_AT = re.compile(r"request:1:(\d+): (.*)\Z", re.S)
_KEY = re.compile(r"request: (\w+): (.*)\Z", re.S)


def _named(line, spans):
    """An error line about the request the binding built, with the keyword argument
    in place of the request's position: "request:1:94: model: ..." becomes
    "tpusim.run(model=...): ...". Any other line is returned as it is."""
    m, key = _AT.match(line), None
    if m:
        col = int(m.group(1))
        key = next((k for first, last, k in spans if first <= col <= last), None)
    elif _KEY.match(line):
        m = _KEY.match(line)
        key = m.group(1) if m.group(1) in _KEYWORDS else None
    if key is None:
        return line
    rest = m.group(2)
    if rest.startswith(key + ": "):
        rest = rest[len(key) + 2:]
    elif rest.startswith(key + "."):    # "set.array.rows: ...": the key within the argument
        rest = rest[len(key) + 1:]
    return "tpusim.run(%s=...): %s" % (key, rest)


def run(configs, workload, set=None, model=None, dataflow=None, batch=None, ideal_memory=None, seed=None,
        reuse=None):
    """One simulation; returns summary.json as a dict, or raises Error.

    configs: config files or preset names ("tpu_v1"); workload: a workload
    file or the name of a shipped one ("resnet50"). model: "cycle" (the
    default), "analytic" or "functional" (every PE register with real
    values, ideal memory; summary["functional"] has outputs, mismatches and
    max_abs_error); seed: the functional model's random operands;
    reuse=False simulates every op, also one identical to an op already simulated."""
    if isinstance(configs, str):
        configs = [configs]
    text, spans = _request({"configs": [str(c) for c in configs], "workload": str(workload),
                            "set": dict(set) if set else None, "model": model, "dataflow": dataflow,
                            "batch": batch, "ideal_memory": ideal_memory, "seed": seed, "reuse": reuse})
    status, out = run_json(text)
    if status != 0:
        raise Error(_named(out, spans), status)
    return json.loads(out)
