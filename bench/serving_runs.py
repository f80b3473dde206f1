"""The measured H100 serving runs (bench/data/serving-runs/h100_sxm.csv), read once for every bench.

bench/serving-h100.sh (the floors) and bench/predict-gpu.sh (the GPU predictions) simulate the same
runs the same way; this module is the one place that says how a row of the CSV becomes a
`roofline serve` command line. Import it from a bench's Python (sys.path.insert(0, "bench")).

A row is one run of a real engine: `backend` (trtllm, vllm, sglang) serving `model_path` in
`precision`, aggregated (`mode` agg) on `tp_size` x `attention_dp_size` devices with the experts laid
out by `moe_tp_size` x `moe_ep_size`, closed loop at `batch_size` clients, `isl` prompt and `osl`
output tokens a request; `silicon_ttft_ms` and `silicon_tpot_ms` the measured means.

The mapping (each an assumption, labelled where it is one):
- model: Llama-3.1-8B-Instruct -> llama-3-8b and Llama-3.1-70B -> llama-3.3-70b (the same shapes:
  layers, hidden, heads, KV heads, intermediate, vocabulary); the others their own presets.
- precision: '' -> the preset's bf16. fp8 (gemm_quant_mode fp8 or fp8_block) -> W8A8:
  --weight-dtype fp8 --act-dtype fp8 (fp8 tensor cores; block scales are 4 bytes a 128 x 128 block,
  under 0.03% of the weight bytes, not counted). fp4 (gpt-oss-120b, labelled nvfp4 in the source)
  -> the checkpoint's own mxfp4 experts and bf16 attention: the H100 has no fp4 tensor cores, so
  every engine runs them weight-only with bf16 activations.
- KV-cache dtype: the CSV does not say it. kv_dtype_options(r, floor=True) gives the smallest
  the engine could have used (fp8 for an fp8 run: vLLM's --kv-cache-dtype fp8, TensorRT-LLM's
  FP8 KV quantization; bf16 otherwise), so a floor is a floor whichever the run used;
  floor=False gives the engines' default (the model's dtype, bf16).
- layout: TP = tp_size; DP = attention_dp_size; EP = moe_ep_size, the experts over the TP x DP
  devices (EP = TP x DP) or tensor-parallel inside each TP group (EP 1, moe_tp = TP). Runs with
  pipeline stages, or with experts split both ways (moe_tp > 1 and EP > 1), are not modelled.
- engine: KV blocks of 32 tokens (TensorRT-LLM's tokens_per_block) or 16 (vLLM, SGLang); a step
  of max(8192, C) tokens (each engine's default budget: max_num_tokens, max_num_batched_tokens,
  chunked_prefill_size) and C sequences; 10 C requests, at least 64. A prediction
  (--backend ENGINE) runs the engine's own schedule (`roofline serve --schedule`'s default for
  the backend: vLLM mixed, TensorRT-LLM unchunked, SGLang prefill-first); no front-end latency.
"""
import csv
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "serving-runs", "h100_sxm.csv")
# a run's `system` (aiconfigurator's name) to the --hw preset whose kernel tables are that GPU's
# (rf_hw_tables_system the other way): the H100 runs here, another GPU's file as the held-out test
HW = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300"}

PRESET = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.3-70b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    # models of the runs on other GPUs that have a preset here (their shapes are the presets'):
    # the held-out test reads them; none of the H100's aggregated runs is one of them
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "deepseek-ai/DeepSeek-R1-0528": "deepseek-r1",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-ai/DeepSeek-V3-0324": "deepseek-v3",
    "nvidia/DeepSeek-R1-FP4": "deepseek-r1",
    "nvidia/DeepSeek-R1-0528-FP4": "deepseek-r1",
    "openai/gpt-oss-20b": "gpt-oss-20b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen/Qwen3-235B-A22B": "qwen3-235b-a22b",
    "meta-llama/Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "meta-llama/Llama-3.1-70B-Instruct": "llama-3.3-70b",
    "moonshotai/Kimi-K2-Instruct": "kimi-k2",
}
BLOCK = {"trtllm": 32, "vllm": 16, "sglang": 16}


def num(v, default=1):
    """An integer column; empty (or 0, as some rows write an absent size) reads as default."""
    return int(v) if v not in ("", None) and int(v) > 0 else default


def load(path=CSV, mode="agg"):
    """The rows of one mode (agg or disagg), in the file's order."""
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["mode"] == mode]


def model_of(r):
    """The preset a run's model maps to, or None."""
    return PRESET.get(r["model_path"])


def nvfp4_run(r):
    """Whether a run is NVIDIA's fp4 GEMMs (weights and activations nvfp4, a Blackwell run's
    "fp4"), not gpt-oss's own mxfp4 experts, which its H100 runs label fp4 / nvfp4 too."""
    return (r["precision"] in ("fp4", "nvfp4") and r["gemm_quant_mode"] == "nvfp4"
            and model_of(r) not in ("gpt-oss-120b", "gpt-oss-20b"))


def dtype_options(r):
    """The weight and activation dtype options of a run's precision."""
    if r["precision"] == "fp8":
        return ["--weight-dtype", "fp8", "--act-dtype", "fp8"]
    if nvfp4_run(r):
        return ["--weight-dtype", "nvfp4", "--act-dtype", "nvfp4"]
    if r["precision"] in ("", "bf16", "fp4"):
        return []  # the preset's bf16, or gpt-oss's own mxfp4 experts with bf16 activations
    raise ValueError("precision %r of run %s has no mapping" % (r["precision"], r["id"]))


def kv_dtype_options(r, floor=True):
    """The KV-cache dtype: for a floor the smallest the run's engine could have used."""
    if floor and r["precision"] == "fp8":
        return ["--kv-dtype", "fp8"]
    return []


def layout(r):
    """(tp, dp, ep), or (None, why) where the run's layout is not modelled."""
    tp, pp = num(r["tp_size"]), num(r["pp_size"])
    dp, ep, moe_tp = num(r["attention_dp_size"]), num(r["moe_ep_size"]), num(r["moe_tp_size"])
    if pp != 1:
        return None, "pipeline runs"
    if ep > 1 and ep != tp * dp:
        return None, "experts over %d of %d x %d GPUs (EP x moe-TP %d)" % (ep, tp, dp, moe_tp)
    return (tp, dp, ep), None


def layout_options(r):
    lay, why = layout(r)
    if lay is None:
        raise ValueError(why)
    tp, dp, ep = lay
    return ["--tp", str(tp), "--ep", str(ep), "--dp", str(dp)] if (tp, dp, ep) != (1, 1, 1) else []


def layout_label(r):
    lay = "tp%d" % num(r["tp_size"])
    if num(r["moe_ep_size"]) > 1:
        lay += " ep%d" % num(r["moe_ep_size"])
    if num(r["attention_dp_size"]) > 1:
        lay += " dp%d" % num(r["attention_dp_size"])
    return lay


def devices(r):
    return num(r["tp_size"]) * num(r["pp_size"]) * num(r["attention_dp_size"])


def from_aiconfigurator_eval(r):
    """Whether a run is one of aiconfigurator's own evaluations (the 662 of SGLang, TensorRT-LLM
    and vLLM 0.12 whose source is its gap analysis) rather than an InferenceX result."""
    return "aic-auto-gap-analysis" in r["silicon_data_source"]


def step_budget(r, settings="defaults"):
    """A step's token budget. "defaults": each engine's default, max(8192, C). "aiconfigurator":
    for a run of aiconfigurator's evaluation, the budget its generator writes into the engine's
    config (ai-dynamo/aiconfigurator, generator/rule_plugin/benchmark/trtllm.rule and
    sglang.rule): TensorRT-LLM's max_num_tokens = C + ISL + 1500, SGLang's max_prefill_tokens =
    ISL + 1500; its vLLM template sets no max-num-batched-tokens, so vLLM keeps its default."""
    if settings not in ("defaults", "aiconfigurator"):
        raise ValueError("engine settings %r: defaults or aiconfigurator" % settings)
    c, own = int(r["batch_size"]), settings == "aiconfigurator" and from_aiconfigurator_eval(r)
    if own and r["backend"] == "trtllm":
        return c + int(r["isl"]) + 1500
    if own and r["backend"] == "sglang":
        return int(r["isl"]) + 1500
    return max(8192, c)


def engine_options(r, settings="defaults"):
    """The engine's scheduler: the sequence cap, the step's token budget (step_budget), the KV
    block."""
    c = int(r["batch_size"])
    return ["--max-seqs", str(c), "--max-batched-tokens", str(step_budget(r, settings)),
            "--block", str(BLOCK[r["backend"]])]


def lengths(r, driver=False):
    """(prompt, output) as serve's --prompt and --output-tokens: the run's ISL and OSL, or with
    driver the lengths its benchmark driver sent. aiconfigurator's evaluations send fixed
    lengths (genai-perf, both deviations 0); the InferenceX runs vLLM's benchmark_serving.py with
    --random-range-ratio 0.8, each length an integer uniform in [int(0.8 L), L]."""
    if not driver or from_aiconfigurator_eval(r):
        return r["isl"], r["osl"]
    return tuple("uniform:%d:%d" % (int(int(v) * 0.8), int(v)) for v in (r["isl"], r["osl"]))


def workload_options(r, concurrency=None, driver_lengths=False):
    """The closed loop at the run's concurrency (or the one given) and lengths (lengths())."""
    c = concurrency or int(r["batch_size"])
    prompt, output = lengths(r, driver_lengths)
    return ["--prompt", prompt, "--output-tokens", output, "--concurrency", str(c),
            "--requests", str(max(10 * c, 64))]


def quant_options(r):
    """A prediction's dtypes (bench/predict-gpu.sh): an fp8 run as the engine's quantization,
    --quant with its gemm_quant_mode (fp8 or fp8_block: the kernel tables' rows of that name),
    an nvfp4 one (nvfp4_run) as --quant nvfp4; the others as dtype_options."""
    if r["precision"] == "fp8":
        return ["--quant", r["gemm_quant_mode"] or "fp8"]
    if nvfp4_run(r):
        return ["--quant", "nvfp4"]
    return dtype_options(r)


def serve_argv(bin_, r, extra=(), floor=True, concurrency=None, predict=False,
               settings="defaults"):
    """(argv, None) simulating run r with `roofline serve`, or (None, why) where it is not modelled.
    concurrency overrides the run's (the simulator pins a client to each DP replica, so it needs
    at least DP clients; a lone request's floors do not depend on it). predict: also predict it
    on its engine's kernel tables (--backend ENGINE --predict, quant_options, the KV cache in the
    engines' default dtype, the lengths its benchmark driver sent: lengths()). settings: the
    engine's step budget (step_budget)."""
    model = model_of(r)
    if not model:
        return None, "no preset for " + r["model_path"]
    if r["system"] not in HW:
        return None, "no preset for the system " + r["system"]
    lay, why = layout(r)
    if lay is None:
        return None, why
    a = [bin_, "serve", model, "--hw", HW[r["system"]]] + workload_options(r, concurrency, predict)
    a += engine_options(r, settings)
    a += quant_options(r) if predict else dtype_options(r)
    a += kv_dtype_options(r, floor and not predict) + layout_options(r) + list(extra)
    if predict:
        a += ["--backend", r["backend"], "--predict"]
    return a + ["--json"], None


def run_json(argv):
    """Run a command line: (its JSON output, None), or (None, the last words of its error)."""
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr.strip().split(": ", 2)[-1][:90]
    return json.loads(p.stdout), None


def p90(v):
    """The 90th percentile the benches print: the ceil(0.9 n)-th smallest of n."""
    v = sorted(v)
    return v[max(0, -(-9 * len(v) // 10) - 1)]


def rel_err(predicted, measured_value):
    """|predicted - measured| / measured: the error every bench reports."""
    return abs(predicted - measured_value) / measured_value


def measured(r):
    """(TTFT, TPOT) measured, milliseconds: the means over the run's requests."""
    return float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])


def sort_key(r):
    return (r["model_path"], r["backend"], r["precision"], num(r["tp_size"]), int(r["batch_size"]),
            int(r["isl"]), int(r["osl"]))


def clients(r):
    """The clients to simulate: the run's concurrency, or one a DP replica
    where the run had fewer (None: the run's own)."""
    lay, _ = layout(r)
    return lay[1] if lay and lay[1] > int(r["batch_size"]) else None


def run_all(rows, argv_of):
    """Run argv_of(r) -> (argv, why) for every row, two at a time: ([(r, doc)]
    sorted by sort_key, {why not modelled: count}, wall seconds). A doc gets
    sim_at when the clients simulated differ from the run's."""
    def one(r):
        a, why = argv_of(r)
        doc, why = run_json(a) if a else (None, why)
        if doc is not None and clients(r):
            doc["sim_at"] = clients(r)
        return r, doc, why
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=2) as ex:
        done = list(ex.map(one, rows))
    out, skipped = [], {}
    for r, doc, why in done:
        if doc is None:
            skipped[why] = skipped.get(why, 0) + 1
        else:
            out.append((r, doc))
    out.sort(key=lambda x: sort_key(x[0]))
    return out, skipped, time.time() - t0
