"""roofline - the roofline command line from Python, in this process.

A thin layer over the command line's shared library (libroofline-cli,
loaded with ctypes): every figure comes from the same C code as the
`roofline` binary's, byte for byte.

    >>> import roofline
    >>> roofline.step("llama-3-8b", batch=64, context=1024)["tokens_per_s"]
    9085.03392151

run(*argv) runs any command line and returns its Result(stdout, stderr,
code). The helpers run one command with --json and return the JSON as
plain Python values (dicts, lists), raising Error with the tool's one-line
message and exit code when it fails. Keyword options become the command's
options: batch=64 is --batch 64, kv_dtype="fp8" is --kv-dtype fp8, a list
or range is joined with commas (batch=[1, 64] is --batch 1,64), True is a
bare flag (naive=True is --naive), None and False leave the option out.
family="deepseek_v3" (--family) reads a config.json of a model_type the
reader does not know as that family; every result then says so (its
"family_forced" and an assumption line), and a config of an unknown
model_type without it raises Error (code 2, the reader's one line).
`roofline <command> --help` (or roofline.run(command, "--help")) lists
each command's options.
"""
import collections
import json as _json_module
import os

from . import _lib
from ._lib import LibraryNotFound, library_path

__version__ = "0.1.0"

__all__ = [
    "Result", "Error", "LibraryNotFound", "run", "command", "library_path",
    "step", "ops", "sweep", "capacity", "crossover", "gemm", "attn",
    "generate", "serve", "frontier", "plan", "info", "models", "hardware",
]

Result = collections.namedtuple("Result", "stdout stderr code")
Result.__doc__ = "What a command line gave: stdout and stderr text, and the exit code."


class Error(Exception):
    """A command that failed: the tool's one-line message and exit code
    (1 a runtime failure, 2 bad usage or input, 3 a backend or device
    unavailable, 4 an output not written)."""

    def __init__(self, message, code, argv=(), stderr=""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.argv = tuple(argv)
        self.stderr = stderr

    def __str__(self):
        return self.message


def _arg(a):
    if isinstance(a, (str, bytes)):
        return a
    if isinstance(a, os.PathLike):
        return os.fspath(a)
    return str(a)


def run(*argv):
    """Run `roofline argv...` in this process: its Result(stdout, stderr,
    code). Never raises for a failing command (see code); the arguments are
    those of the binary (run("gemm", 1, 4096, 4096, "--json"))."""
    args = [_arg(a) for a in argv]
    for i, a in enumerate(args):
        # C strings end at a NUL: "8\x00000" would run as "8" (issue 28)
        if ("\0" if isinstance(a, str) else b"\0") in a:
            return Result("", f"roofline: argument {i + 1} ({a!r}) holds a NUL byte\n", 2)
    out, err, code = _lib.call(args)
    return Result(out, err, code)


def _options(options):
    argv = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple, range)):
            argv += [flag, ",".join(_arg(v) for v in value)]
        else:
            argv += [flag, _arg(value)]
    return argv


def _check(argv, res):
    if res.code != 0:
        lines = [l for l in res.stderr.splitlines() if l.strip()]
        raise Error(lines[-1] if lines else f"roofline {argv[0]}: exit {res.code}", res.code,
                    argv, res.stderr)
    return res


def command(name, *args, **options):
    """Any command with --json: `roofline name args... --options --json`,
    its JSON parsed (a dict). Raises Error when the command fails. With
    help=True, the command's help text (a str): --help prints no JSON."""
    if options.get("help") is True:
        argv = [name, "--help"]
        return _check(argv, run(*argv)).stdout
    argv = [name] + [_arg(a) for a in args] + _options(options) + ["--json"]
    res = _check(argv, run(*argv))
    return _json_module.loads(res.stdout)


def step(model, hw=None, batch=None, context=None, **options):
    """A whole prefill or decode step (`roofline step`): its totals
    (floor_s, tokens_per_s, ...) and "ops", a dict per operator."""
    return command("step", model, hw=hw, batch=batch, context=context, **options)


def ops(model, **options):
    """Per-operator intensities of a model (`roofline ops`)."""
    return command("ops", model, **options)


def sweep(model, batch, context=None, frame=None, **options):
    """Decode floors over batch x context (`roofline sweep`), one point a
    row: a pandas DataFrame when pandas can be imported (frame=None) or
    frame=True, else a list of dicts (frame=False). The assumption lines
    are the DataFrame's attrs["assumptions"]."""
    doc = command("sweep", model, batch=batch, context=context, **options)
    points = doc["points"]
    if frame is False:
        return points
    try:
        import pandas
    except ImportError:
        if frame:
            raise
        return points
    df = pandas.DataFrame(points)
    df.attrs["title"] = doc.get("title")
    df.attrs["assumptions"] = doc.get("assumptions", [])
    return df


def capacity(model, **options):
    """KV-cache capacity: tokens and sequences (`roofline capacity`)."""
    return command("capacity", model, **options)


def crossover(model, **options):
    """Where each operator crosses the ridge (`roofline crossover`)."""
    return command("crossover", model, **options)


def gemm(m, k, n, **options):
    """One GEMM Y[M,N] = X[M,K] W[K,N] (`roofline gemm M K N`)."""
    return command("gemm", m, k, n, **options)


def attn(heads, context, **options):
    """One attention layer (`roofline attn --heads NQ --context S`)."""
    return command("attn", heads=heads, context=context, **options)


def generate(model, prompt, output, **options):
    """Whole requests: TTFT, TPOT, latency, tokens/s (`roofline generate`);
    output is the output token count (--output-tokens)."""
    return command("generate", model, prompt=prompt, output_tokens=output, **options)


def serve(model, prompt, output, concurrency=None, **options):
    """An engine simulated request by request (`roofline serve`): the
    closed loop at `concurrency` clients, or rate=R for the open loop
    (arrival="gamma:2", requests=N, seed=S); prompt and output are token
    counts or distributions ("uniform:100:900"). The result has ttft_s,
    tpot_s, itl_s, e2e_s and queue_s (each a dict of mean, p50, p90, p99),
    requests_per_s, output_tokens_per_s and overloaded. steady_state=True
    gives the older steady-state model instead. output is --output-tokens."""
    return command("serve", model, prompt=prompt, output_tokens=output, concurrency=concurrency,
                   **options)


def frontier(model, prompt, output, **options):
    """Latency against throughput over batch sizes (`roofline frontier`);
    output is the output token count (--output-tokens)."""
    return command("frontier", model, prompt=prompt, output_tokens=output, **options)


def plan(model, hw, output=None, **options):
    """The device layouts that fit, ranked (`roofline plan MODEL --hw DEVICE`);
    with rate=R, slo_ttft=X, slo_tpot=Y, prompt and output (the output
    token count, --output-tokens; or devices=N in place of rate), the SLO
    plan: "candidates", best first, each with its "devices" and layout."""
    return command("plan", model, hw=hw, output_tokens=output, **options)


def info(model, **options):
    """What a model holds: shapes, parameters, KV (`roofline info`)."""
    return command("info", model, **options)


def models(**options):
    """The built-in models (`roofline models`)."""
    return command("models", **options)


def hardware(**options):
    """The built-in hardware (`roofline hw`)."""
    return command("hw", **options)
