"""_lib.py - libroofline-cli through ctypes: finding it and one call.

Calls need no lock: rf_cli_run writes each call's output to memory of its
own (rf_cli.h says what two calls at once share), and ctypes releases the
GIL while it runs, so threads run commands side by side.

The library is looked for, in order:

  1. the file named by the environment variable ROOFLINE_CLI_LIB (when set,
     only there: a wrong path is an error, not a reason to look elsewhere);
  2. beside this package (what `pip install ./python` copied in);
  3. the system's library path (`make install`, ldconfig, LD_LIBRARY_PATH).
"""
import ctypes
import ctypes.util
import os
from pathlib import Path

ENV = "ROOFLINE_CLI_LIB"
SONAME = "libroofline-cli.so.0"


class _Result(ctypes.Structure):
    # rf_cli_result in rf_cli.h
    _fields_ = [
        ("out", ctypes.POINTER(ctypes.c_char)),
        ("out_len", ctypes.c_size_t),
        ("err", ctypes.POINTER(ctypes.c_char)),
        ("err_len", ctypes.c_size_t),
        ("code", ctypes.c_int),
    ]


class LibraryNotFound(OSError):
    """libroofline-cli could not be loaded; the message says where it looked."""


def _candidates():
    named = os.environ.get(ENV)
    if named:
        return [(named, f"{ENV}={named}")]
    here = Path(__file__).resolve().parent
    found = [(str(p), f"beside the package ({p})") for p in sorted(here.glob("libroofline-cli.so*"))]
    system = ctypes.util.find_library("roofline-cli") or SONAME
    return found + [(system, f"the system library path ({system})")]


def _load():
    tried = []
    for path, where in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{where}: {e}")
            continue
        lib.rf_cli_run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                   ctypes.POINTER(_Result)]
        lib.rf_cli_run.restype = ctypes.c_int
        lib.rf_cli_result_free.argtypes = [ctypes.POINTER(_Result)]
        lib.rf_cli_result_free.restype = None
        return lib, path
    raise LibraryNotFound("libroofline-cli not found; tried " + "; ".join(tried) +
                          f" (build it with `make`, then `pip install ./python`, or set {ENV})")


_lib = None
_path = None


def library_path():
    """The library in use (loading it on first use)."""
    _ensure()
    return _path


def _ensure():
    global _lib, _path
    if _lib is None:
        _lib, _path = _load()
    return _lib


def _text(ptr, n):
    return ctypes.string_at(ptr, n).decode("utf-8", "surrogateescape") if n else ""


def call(argv):
    """(stdout, stderr, code) of `roofline argv...` run in this process."""
    lib = _ensure()
    args = [b"roofline"] + [os.fsencode(a) for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    res = _Result()
    lib.rf_cli_run(len(args), arr, ctypes.byref(res))
    try:
        return _text(res.out, res.out_len), _text(res.err, res.err_len), res.code
    finally:
        lib.rf_cli_result_free(ctypes.byref(res))
