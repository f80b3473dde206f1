"""test_roofline.py - the Python package against the `roofline` binary.

Every helper's dict must equal the binary's --json for the same command
line, parsed the same way: the package adds no figure of its own. Needs
ROOFLINE_BIN (the binary) in the environment; the library is found as the
package finds it (ctest sets ROOFLINE_CLI_LIB to the build's).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import roofline

BIN = os.environ.get("ROOFLINE_BIN")
MODELS = Path(__file__).resolve().parents[2] / "tests" / "data" / "models"

pytestmark = pytest.mark.skipif(not BIN, reason="ROOFLINE_BIN (the roofline binary) not set")


def cli(*argv):
    """The binary's stdout, stderr and exit code for argv."""
    p = subprocess.run([BIN, *map(str, argv)], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    return p.stdout, p.stderr, p.returncode


def cli_json(*argv):
    out, err, code = cli(*argv, "--json")
    assert code == 0, err
    return json.loads(out)


# (helper call, the same command line for the binary)
CASES = [
    (lambda: roofline.step("llama-3-8b", batch=64, context=1024),
     ["step", "llama-3-8b", "--batch", "64", "--context", "1024"]),
    (lambda: roofline.step("mixtral-8x7b", hw="a100-80gb", phase="prefill", tokens=512,
                           kv_dtype="fp8"),
     ["step", "mixtral-8x7b", "--hw", "a100-80gb", "--phase", "prefill", "--tokens", "512",
      "--kv-dtype", "fp8"]),
    (lambda: roofline.step("llama-3-8b", batch=8, naive=True, traffic="full"),
     ["step", "llama-3-8b", "--batch", "8", "--naive", "--traffic", "full"]),
    (lambda: roofline.ops("llama-3-8b", tokens=[1, 64], context=4096),
     ["ops", "llama-3-8b", "--tokens", "1,64", "--context", "4096"]),
    (lambda: roofline.sweep("llama-3-8b", batch=[1, 64], context=range(1024, 3073, 1024),
                            frame=False),
     ["sweep", "llama-3-8b", "--batch", "1,64", "--context", "1024,2048,3072"]),
    (lambda: roofline.capacity("llama-3-8b", context=8192),
     ["capacity", "llama-3-8b", "--context", "8192"]),
    (lambda: roofline.crossover("llama-3-8b"), ["crossover", "llama-3-8b"]),
    (lambda: roofline.gemm(1, 4096, 6144), ["gemm", "1", "4096", "6144"]),
    (lambda: roofline.attn(32, 4096, kv_heads=8, phase="prefill"),
     ["attn", "--heads", "32", "--context", "4096", "--kv-heads", "8", "--phase", "prefill"]),
    (lambda: roofline.generate("llama-3-8b", 1024, 256, batch=8),
     ["generate", "llama-3-8b", "--prompt", "1024", "--output-tokens", "256", "--batch", "8"]),
    (lambda: roofline.serve("llama-3-8b", 1024, 256, 32),
     ["serve", "llama-3-8b", "--prompt", "1024", "--output-tokens", "256", "--concurrency", "32"]),
    (lambda: roofline.serve("llama-3-8b", 1024, 256, 32, steady_state=True),
     ["serve", "llama-3-8b", "--prompt", "1024", "--output-tokens", "256", "--concurrency", "32",
      "--steady-state"]),
    (lambda: roofline.serve("llama-3-8b", "uniform:100:900", 128, rate=4, requests=200),
     ["serve", "llama-3-8b", "--prompt", "uniform:100:900", "--output-tokens", "128", "--rate", "4",
      "--requests", "200"]),
    (lambda: roofline.frontier("llama-3-8b", 512, 128, max_batch=64),
     ["frontier", "llama-3-8b", "--prompt", "512", "--output-tokens", "128", "--max-batch", "64"]),
    (lambda: roofline.plan("llama-3-8b", "h100-sxm", batch=32, context=8192),
     ["plan", "llama-3-8b", "--hw", "h100-sxm", "--batch", "32", "--context", "8192"]),
    (lambda: roofline.info(MODELS / "deepseek-v3.json"),
     ["info", str(MODELS / "deepseek-v3.json")]),
    (lambda: roofline.models(), ["models"]),
    (lambda: roofline.hardware(), ["hw"]),
]


@pytest.mark.parametrize("call,argv", CASES, ids=[" ".join(a[:2]) for _, a in CASES])
def test_helper_equals_cli_json(call, argv):
    got = call()
    want = cli_json(*argv)
    if argv[0] == "sweep":
        want = want["points"]
    assert got == want


def test_step_tokens_per_s_is_the_cli_figure():
    # the acceptance line: the same figure as `roofline step ... --json`
    got = roofline.step("llama-3-8b", batch=64, context=1024)["tokens_per_s"]
    assert got == cli_json("step", "llama-3-8b", "--batch", "64", "--context", "1024")["tokens_per_s"]
    # B / floor = 64 / 7.04455 ms (the book chapter's decode step at B 64)
    assert abs(got - 9085.03) < 0.01


def test_serve_under_load_keys():
    # issue 27's interface: each latency an object of mean and percentiles
    doc = roofline.serve("llama-3-8b", 1024, 128, rate=2, requests=300, seed=7)
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s"):
        v = doc[key]
        assert v["p50"] <= v["p90"] <= v["p99"] <= v["max"], key
        assert v["mean"] > 0 or key == "queue_s", key
    assert doc["overloaded"] is False and doc["requests"] == 300
    # TTFT includes the prefill floor (14.7 ms for 1,024 causal tokens on the
    # H100: 14.57 TFLOP / 989.4 TFLOP/s, tests/cli_serving.txt derives it)
    assert doc["ttft_s"]["p50"] >= doc["ttft_floor_s"] > 0.0147
    assert doc["output_tokens_per_s"] > 0 and doc["requests_per_s"] > 0
    # far above the capacity, the queue grows without bound
    assert roofline.serve("llama-3-8b", 1024, 128, rate=500, requests=2000)["overloaded"] is True
    # the steady state keeps its scalar TPOT
    assert isinstance(roofline.serve("llama-3-8b", 1024, 128, 8, steady_state=True)["tpot_s"],
                      float)


def test_plan_slo_candidates():
    doc = roofline.plan("llama-3.3-70b", "h100-sxm", rate=2, slo_ttft=1, slo_tpot=0.05,
                        prompt=1024, output=256)
    rows = doc["candidates"]
    assert rows[0]["meets"] == "yes" and rows[0]["devices"] == doc["plan"]["devices"]
    assert rows[0]["ttft_s"] <= 1 and rows[0]["tpot_s"] <= 0.05
    assert {"tp", "pp", "ep", "dp", "layout"} <= set(rows[0])
    # 70 B parameters in bf16 (141 GB) never fit one 80 GB device
    assert rows[0]["devices"] >= 2


def test_output_is_the_token_count_in_helpers_only():
    # generate/serve/frontier/plan's output= is --output-tokens (issue 25:
    # --output is the file everywhere); command()'s output= stays --output,
    # so a count there is the old spelling, refused naming the new one
    want = roofline.generate("llama-3-8b", 128, 16)
    assert roofline.command("generate", "llama-3-8b", prompt=128, output_tokens=16) == want
    assert cli_json("generate", "llama-3-8b", "--prompt", "128", "-n", "16") == want
    with pytest.raises(roofline.Error) as e:
        roofline.command("generate", "llama-3-8b", prompt=128, output=16)
    assert e.value.code == 2
    assert str(e.value) == ("roofline generate: --output 16: --output is the file to write; "
                            "the output token count is --output-tokens (-n)")


def test_run_gives_the_binary_bytes():
    for argv in (["--help"], ["gemm", "1", "4096", "4096"], ["step", "nope"], ["bogus"], []):
        res = roofline.run(*argv)
        assert isinstance(res, roofline.Result)
        assert (res.stdout, res.stderr, res.code) == cli(*argv)


def test_error_has_the_one_line_message_and_code():
    with pytest.raises(roofline.Error) as e:
        roofline.step("no-such-model")
    out, err, code = cli("step", "no-such-model", "--json")
    assert e.value.code == code == 2
    assert str(e.value) == err.strip()
    assert str(e.value).startswith("roofline step: unknown model 'no-such-model'")
    with pytest.raises(roofline.Error) as e:
        roofline.step("llama-3-8b", batch=0)
    assert e.value.code == 2 and "--batch" in str(e.value)


def test_nul_in_an_argument_refused():
    # issue 28, finding 12: a C string ends at a NUL, so batch="8\x00000" ran batch 8
    with pytest.raises(roofline.Error) as e:
        roofline.step("llama-3-8b", batch="8\x00000")
    assert e.value.code == 2 and "NUL" in str(e.value)
    res = roofline.run("step", "llama-3-8b", "--batch", b"8\x00000")
    assert res.code == 2 and res.stdout == "" and res.stderr.count("\n") == 1


def test_help_option_gives_the_help_text():
    # issue 28, finding 11: help=True printed text where JSON was parsed (JSONDecodeError)
    text = roofline.step("llama-3-8b", help=True)
    assert text == cli("step", "--help")[0]
    assert text.startswith("usage: roofline step")


UNKNOWN = MODELS / "unknown-family.json"  # Llama-3-8B's fields, model_type acme_lm


def test_unknown_family_refused_by_every_helper():
    # the reader's one line, exit 2, as the binary gives it, from every
    # helper that takes a MODEL
    calls = [
        (lambda: roofline.info(UNKNOWN), ["info"]),
        (lambda: roofline.step(UNKNOWN), ["step"]),
        (lambda: roofline.ops(UNKNOWN), ["ops"]),
        (lambda: roofline.sweep(UNKNOWN, batch=[1, 2], frame=False), ["sweep", "--batch", "1,2"]),
        (lambda: roofline.capacity(UNKNOWN), ["capacity"]),
        (lambda: roofline.crossover(UNKNOWN), ["crossover"]),
        (lambda: roofline.plan(UNKNOWN, "h100-sxm"), ["plan", "--hw", "h100-sxm"]),
        (lambda: roofline.generate(UNKNOWN, 128, 16), ["generate", "--prompt", "128", "--output-tokens", "16"]),
        (lambda: roofline.serve(UNKNOWN, 128, 16, 4),
         ["serve", "--prompt", "128", "--output-tokens", "16", "--concurrency", "4"]),
        (lambda: roofline.frontier(UNKNOWN, 128, 16), ["frontier", "--prompt", "128", "--output-tokens", "16"]),
    ]
    for call, argv in calls:
        with pytest.raises(roofline.Error) as e:
            call()
        out, err, code = cli(argv[0], UNKNOWN, *argv[1:], "--json")
        assert e.value.code == code == 2, argv
        assert str(e.value) == err.strip() and "\n" not in err.strip(), argv
        assert "acme_lm" in str(e.value), argv


def test_family_option_reads_and_says_so():
    # family="llama" is --family llama: the file's fields read as Llama's, so
    # its figures are llama-3-8b's, and the JSON names what it did
    got = roofline.info(UNKNOWN, family="llama")
    assert got == cli_json("info", UNKNOWN, "--family", "llama")
    assert got["family_forced"] == {"read_as": "llama", "model_type": "acme_lm"}
    assert "family: read as llama (--family); model_type was acme_lm" in got["assumptions"]
    assert got["params"]["total_exact"] == roofline.info("llama-3-8b")["params"]["total_exact"]
    step = roofline.step(UNKNOWN, family="llama", batch=8)
    assert step["family_forced"]["read_as"] == "llama"
    assert step["tokens_per_s"] == roofline.step("llama-3-8b", batch=8)["tokens_per_s"]
    # a model read as its own family has no such key
    assert "family_forced" not in roofline.info("llama-3-8b")


def test_options_map_to_flags():
    # underscores to dashes, True a bare flag, None and False left out,
    # lists joined with commas: the same output as the spelled-out argv
    a = roofline.step("llama-3-8b", batch=4, kv_dtype="fp8", causal=True, naive=False,
                      context=None, phase="prefill", tokens=128)
    b = cli_json("step", "llama-3-8b", "--batch", "4", "--kv-dtype", "fp8", "--causal",
                 "--phase", "prefill", "--tokens", "128")
    assert a == b


def test_sweep_data_frame_when_pandas_imports():
    pandas = pytest.importorskip("pandas", reason="pandas not installed (python3-pandas)")
    df = roofline.sweep("llama-3-8b", batch=[1, 64], context=[1024, 4096])
    assert isinstance(df, pandas.DataFrame)
    want = cli_json("sweep", "llama-3-8b", "--batch", "1,64", "--context", "1024,4096")
    assert df.to_dict("records") == want["points"]
    assert df.attrs["assumptions"] == want["assumptions"]


def test_sweep_list_without_pandas():
    # frame=None falls back to the list when pandas cannot be imported
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import roofline\n"
            "p = roofline.sweep('llama-3-8b', batch=[1, 2])\n"
            "print(type(p).__name__, len(p))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "list 2"


def test_output_file_is_written(tmp_path):
    # -o FILE writes the file as the binary does; stdout stays empty
    path = tmp_path / "fig.svg"
    res = roofline.run("plot", "llama-3-8b", "-o", path)
    assert res.code == 0 and res.stdout == "" and res.stderr == ""
    want = tmp_path / "want.svg"
    assert cli("plot", "llama-3-8b", "-o", want)[2] == 0
    assert path.read_bytes() == want.read_bytes()


def test_library_lookup_env_var_is_final():
    # a wrong ROOFLINE_CLI_LIB is an error naming it, not a fall-back
    env = dict(os.environ, ROOFLINE_CLI_LIB="/nonexistent/libroofline-cli.so")
    code = "import roofline\ntry:\n    roofline.run('--version')\nexcept OSError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "ROOFLINE_CLI_LIB=/nonexistent/libroofline-cli.so" in out.stdout


def test_many_calls_one_process():
    # no state survives a call: a failing call, then the first again
    first = roofline.run("step", "llama-3-8b", "--batch", "64", "--json")
    roofline.run("step", "llama-3-8b", "--bogus")
    roofline.run("sweep", "llama-3-8b", "--batch", "1:64", "--csv")
    assert roofline.run("step", "llama-3-8b", "--batch", "64", "--json") == first


def test_no_progress_line_when_captured(tmp_path):
    # measure shows a progress line where its stderr is a terminal; run from
    # a process whose own stderr is one (a pty), the captured stderr is a
    # memory stream, not a terminal, so it holds no progress line
    import pty
    code = ("import sys, roofline\n"
            "r = roofline.run('measure', '--quick', '--threads', '1', '-o', sys.argv[1])\n"
            "print('progress' if '\\r' in r.stderr else 'none', r.code)")
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-c", code, str(tmp_path / "lab.json")],
                  os.environ)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    assert out.decode(errors="replace").strip().endswith("none 0"), out
