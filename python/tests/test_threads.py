"""test_threads.py - commands from 8 threads at once, each result as the serial one.

rf_cli_run gives every call streams, an option scanner and results of its
own (rf_cli.h), and the package calls it without a lock, so threads run
commands side by side (ctypes lets go of the GIL during the call). A mix of
commands, runs each many times on 8 threads in a shuffled order, and every
(out, err, code) must equal what the same command gave alone first; so
must the bytes a -o FILE wrote. ctest runs this file in the release build
(python_pytest) and, with the library built with -fsanitize=address, in
`make asan` (python_threads_asan).
"""
import random
from concurrent.futures import ThreadPoolExecutor

from roofline import _lib

THREADS = 8
ROUNDS = 12  # each command this many times among the threads

# Every analytic command, each through the paths that kept a step or a
# result in static storage before issue 25 (step, ops, info, models, plot,
# serve, frontier, generate with --predict and on a layout): now each call
# holds its own. plan and sweep --predict read the GPU kernel tables.
COMMANDS = [
    ["step", "llama-3-8b", "--hw", "h100-sxm", "--batch", "8", "--context", "2048"],
    ["step", "llama-3.3-70b", "--hw", "h100-sxm", "--tp", "4", "--json"],
    ["step", "llama-3-8b", "--hw", "h100-sxm", "--backend", "vllm", "--predict", "--json"],
    ["ops", "mixtral-8x7b", "--tokens", "16"],
    ["info", "deepseek-v3", "--json"],
    ["models", "--csv"],
    ["plot", "llama-3-8b", "--hw", "h100-sxm", "-o", "{TMP}/fig1.svg"],
    ["serve", "llama-3-8b", "--hw", "h100-sxm", "--prompt", "512", "-n", "64",
     "--concurrency", "8", "--requests", "32", "--json"],
    ["frontier", "llama-3-8b", "--hw", "h100-sxm", "--prompt", "1024", "-n", "128"],
    ["generate", "llama-3.3-70b", "--hw", "h100-sxm", "--tp", "4", "--prompt", "1024",
     "-n", "64"],
    ["generate", "llama-3-8b", "--hw", "h100-sxm", "--prompt", "1024", "-n", "64",
     "--backend", "sglang", "--predict"],
    ["gemm", "1", "4096", "4096"],
    ["gemm", "4096", "4096", "4096", "--json"],
    ["gemm", "0", "4096", "4096"],  # exit 2: M out of range
    ["gemm", "1", "4096", "4096", "--bogus"],  # exit 2: the scanner's refusal
    ["generate", "llama-3-8b", "--prompt", "1024", "-n"],  # exit 2: -n needs a value
    ["nosuchcommand"],  # exit 2
    ["capacity", "llama-3-8b", "--json"],
    ["crossover", "mixtral-8x7b", "--moe-experts", "all"],
    ["generate", "llama-3-8b", "--prompt", "1024", "-n", "128", "--json"],
    ["generate", "--help"],
    ["hw", "--csv"],
    ["sweep", "llama-3-8b", "--hw", "h100-sxm", "--batch", "1,8", "--context", "1024",
     "--backend", "vllm", "--predict"],
    ["plan", "llama-3.3-70b", "--hw", "h100-sxm", "--batch", "32", "--context", "4096",
     "--max-devices", "8", "--backend", "vllm", "--predict", "--json"],
    ["gemm", "8", "4096", "14336", "--csv", "-o", "{TMP}/gemm.csv"],  # to a file
]


def _argv(cmd, tmp):
    return [a.replace("{TMP}", str(tmp)) for a in cmd]


def _file_of(argv):
    return argv[argv.index("-o") + 1] if "-o" in argv else None


def _run(argv):
    res = _lib.call(argv)
    path = _file_of(argv)
    if path:
        with open(path, "rb") as f:
            return res, f.read()
    return res, None


def test_threads_match_serial(tmp_path):
    argvs = [_argv(c, tmp_path) for c in COMMANDS]
    serial = [_run(a) for a in argvs]
    codes = {res[2] for res, _ in serial}
    assert 0 in codes and 2 in codes, "the mix holds successes and refusals"
    assert any(data for _, data in serial), "the -o command wrote its file"
    jobs = [i for i in range(len(argvs)) for _ in range(ROUNDS)]
    random.Random(25).shuffle(jobs)
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(lambda i: (i, _lib.call(argvs[i])), jobs))
    for i, got in results:
        want = serial[i][0]
        assert got == want, f"roofline {' '.join(argvs[i])}: a call among threads differs"
    for argv, (_, data) in zip(argvs, serial):  # written whole, whichever call was last
        path = _file_of(argv)
        if path:
            with open(path, "rb") as f:
                assert f.read() == data, f"{path}: not the serial run's bytes"
