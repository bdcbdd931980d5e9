"""tpusim from Python: one simulation per call, through build/libtpusim.so.

    import tpusim
    r = tpusim.run(configs=["configs/tpu_v1.yaml"], workload="configs/workloads/resnet50.yaml",
                   set={"sram.inputs.kib": 8192}, model="analytic")
    r["total"]["cycles"], r["config"]["sram"]["inputs"]["kib"]

run() returns summary.json as a dict (the same text `tpusim run -o DIR`
writes); a bad input or a failed simulation raises tpusim.Error, whose
message is tpusim's one error line and whose .status is the CLI's exit
status (2 bad input, 1 simulation error, 3 out of memory). Ctrl-C stops a
long run: it raises KeyboardInterrupt soon after (between folds), and the
next call is unaffected. Standard library only (ctypes).

The library is found at $TPUSIM_LIB, else build/libtpusim.so beside this
script's folder, else by the system's loader (libtpusim.so).
"""
import ctypes
import json
import os
import threading

__all__ = ["run", "version", "Error"]


class Error(Exception):
    """A run that did not succeed: str(e) is tpusim's error line, e.status its exit status."""

    def __init__(self, line, status):
        super().__init__(line)
        self.line = line
        self.status = status


_lib = None


def _load():
    global _lib
    if _lib is not None:
        return _lib
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("TPUSIM_LIB"), os.path.join(here, "..", "build", "libtpusim.so"), "libtpusim.so"]
    last = None
    for path in candidates:
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            last = e
    else:
        raise OSError("libtpusim.so not found (run make, or set TPUSIM_LIB): %s" % last)
    lib.tpusim_run_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.tpusim_run_json.restype = ctypes.c_int
    lib.tpusim_free.argtypes = [ctypes.c_void_p]
    lib.tpusim_free.restype = None
    lib.tpusim_version.argtypes = []
    lib.tpusim_version.restype = ctypes.c_char_p
    lib.tpusim_interrupt.argtypes = []
    lib.tpusim_interrupt.restype = None
    _lib = lib
    return lib


def version():
    """The library's version, as in every summary."""
    return _load().tpusim_version().decode()


def _call(lib, request, out):
    """lib.tpusim_run_json(request, &out), interruptible by Ctrl-C.

    Python delivers KeyboardInterrupt to the main thread between bytecodes,
    never inside a C call: so the main thread waits for the call, made in a
    worker thread, in short joins. On KeyboardInterrupt it asks the library
    to stop (tpusim_interrupt, again each join until the call has returned:
    the call clears the request when it starts), then raises it."""
    if threading.current_thread() is not threading.main_thread():
        return lib.tpusim_run_json(request, ctypes.byref(out))
    status = []
    worker = threading.Thread(target=lambda: status.append(lib.tpusim_run_json(request, ctypes.byref(out))),
                              name="tpusim.run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        while worker.is_alive():
            lib.tpusim_interrupt()
            worker.join(0.05)
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


def run(configs, workload, set=None, model=None, dataflow=None, batch=None, ideal_memory=None, seed=None,
        reuse=None):
    """One simulation; returns summary.json as a dict, or raises Error.

    model: "cycle" (the default), "analytic" or "functional" (every PE register
    with real values, ideal memory; summary["functional"] has outputs,
    mismatches and max_abs_error); seed: the functional model's random operands;
    reuse=False simulates every op, also one identical to an op already simulated."""
    if isinstance(configs, str):
        configs = [configs]
    request = {"configs": [str(c) for c in configs], "workload": str(workload)}
    if set:
        request["set"] = dict(set)
    for key, value in (("model", model), ("dataflow", dataflow), ("batch", batch),
                       ("ideal_memory", ideal_memory), ("seed", seed), ("reuse", reuse)):
        if value is not None:
            request[key] = value
    status, text = run_json(json.dumps(request))
    if status != 0:
        raise Error(text, status)
    return json.loads(text)
