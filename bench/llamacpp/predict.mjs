// predict.mjs - llama.cpp predicted (issue 28, item 4): calibrate roofline
// on llama.cpp's own steps of three calibration shapes, then time the three
// real configs and set measured, floor and predicted side by side.
//
//   node bench/llamacpp/predict.mjs ROOFLINE ROOFLINE_LAB OUTDIR [--quick|--smoke|--reuse]
//
// --reuse: time nothing; read OUTDIR/profile.json and OUTDIR/runs.json of
// an earlier run and recompute the points, the calibration and the table
// (to see a statistic's effect on the same timings).
// --quick: q4_0 and f16 only, one timed run a prompt. --smoke: the
// plumbing only (q4_0, prompts of 16 and 64, 4 decode tokens; its figures
// mean nothing).
// 1. The machine: three `roofline-lab measure --quick` runs pooled by
//    --merge into OUTDIR/profile.json: the roofs are the most the machine
//    showed (a VM's DRAM read moves by tens of percent between runs, and a
//    floor must not sit above a measurement). They are the floors' and the
//    calibration's.
// 2. Calibration: the shapes cal-a, cal-b, cal-c (below; none of them a
//    test config) in f32, f16, q8_0 and q4_0 written as GGUF with random
//    weights (tools/gguf/gguf-write.mjs), each timed by run.mjs: a prefill
//    of 128 and one of 1024 tokens, then 64 decode tokens after each.
//    OUTDIR/llamacpp.json is the engine calibration (include/roofline/
//    rf_engine_io.h): the roofs, the shapes and the times; roofline fits it
//    when it reads it.
// 3. The test: Llama-3.2-1B, Llama-3.2-3B and Qwen2.5-0.5B (bench/data),
//    each layer at its real shape, the depth cut to keep the run to
//    minutes (a step's floor and time both grow by the layer; the lm_head
//    and embedding stay whole), timed the same way, and `roofline step
//    --predict --backend llamacpp --calibration OUTDIR/llamacpp.json`
//    asked for each step.
// A decode point is the 10th percentile of its 128 tokens' times (two
// runs of 64), at the median context: on two shared vCPUs llama.cpp's
// decode times fall in two modes, a token whose thread lost its core taking
// about twice as long, and the slow mode's share moves from run to run
// (a quarter of a run's tokens or more); the 10th percentile is the engine
// with its cores, and a single fast outlier does not move it. A prefill point is the
// median of its two runs. Every run records the load average before it;
// OUTDIR/runs.json keeps every token's time.
import {execFileSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [bin, lab, out, ...rest] = process.argv.slice(2);
if (!bin || !lab || !out) {
    process.stderr.write("usage: predict.mjs ROOFLINE ROOFLINE_LAB OUTDIR [--quick]\n");
    process.exit(2);
}
const quick = rest.includes("--quick"), smoke = rest.includes("--smoke");
const reuse = rest.includes("--reuse");
const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, "../..");
fs.mkdirSync(out, {recursive: true});

const dtypes = smoke ? ["q4_0"] : quick ? ["q4_0", "f16"] : ["f32", "f16", "q8_0", "q4_0"];
const key = {f32: "fp32", f16: "fp16", q8_0: "q8_0", q4_0: "q4_0"};
const prompts = smoke ? [16, 64] : [128, 1024];
const decode = smoke ? 4 : 64, repeats = quick || smoke ? 1 : 2;

const base = {architectures: ["LlamaForCausalLM"], model_type: "llama", hidden_act: "silu",
              rms_norm_eps: 1e-5, rope_theta: 500000.0, tie_word_embeddings: true,
              max_position_embeddings: 8192, torch_dtype: "bfloat16"};
// calibration shapes: widths around and beyond the test configs', few layers,
// and vocabularies of 32k to 160k (the tests': 128k and 152k): the sampler
// reads every logit of a step, a cost no floor counts, and the fit's per-logit
// term (rf_engine.h) is fitted only where the shapes' vocabularies differ.
// The deepest shape has the smallest vocabulary: with depth and vocabulary
// rising together (6, 3, 2 layers at 160k, 64k, 32k, the first try) the fit
// could not tell a layer's cost from a logit's, and took either
const calib = {
    "cal-a": {...base, hidden_size: 1024, intermediate_size: 2816, num_attention_heads: 16,
              num_key_value_heads: 4, head_dim: 64, num_hidden_layers: 6, vocab_size: 32000},
    "cal-b": {...base, hidden_size: 2560, intermediate_size: 6912, num_attention_heads: 20,
              num_key_value_heads: 4, head_dim: 128, num_hidden_layers: 3, vocab_size: 160000},
    "cal-c": {...base, hidden_size: 4096, intermediate_size: 11008, num_attention_heads: 32,
              num_key_value_heads: 8, head_dim: 128, num_hidden_layers: 2, vocab_size: 64000},
};
const read = f => JSON.parse(fs.readFileSync(path.join(root, "bench/data", f), "utf8"));
const tests = {
    "llama-3.2-1b": {...read("llama-3.2-1b.json"), num_hidden_layers: 4},
    "llama-3.2-3b": {...read("llama-3.2-3b.json"), num_hidden_layers: 4},
    "qwen2.5-0.5b": {...read("qwen2.5-0.5b.json"), num_hidden_layers: 8},
};

const load = () => os.loadavg().map(x => x.toFixed(2)).join(" ");
const log = s => process.stderr.write(s + "\n");
// the q-quantile, linear between order statistics (q = 0.5: the median)
const quantile = (v, q) => {
    const s = [...v].sort((a, b) => a - b), h = (s.length - 1) * q, i = Math.floor(h);
    return i + 1 < s.length ? s[i] + (h - i) * (s[i + 1] - s[i]) : s[i];
};
const median = v => quantile(v, 0.5);
const raw = [];
const cached = reuse ? JSON.parse(fs.readFileSync(path.join(out, "runs.json"), "utf8")) : [];

// time one config in one dtype: [{phase, tokens, context, measured_s, load}]
function time(name, cfg, dt) {
    const cfgPath = path.join(out, `${name}.json`);
    fs.writeFileSync(cfgPath, JSON.stringify(cfg, null, 2) + "\n");
    if (reuse)
        return points(name, dt, cached.filter(l => l.name === name && l.dtype === dt));
    const gguf = path.join(out, `${name}-${dt}.gguf`);
    execFileSync("node", [path.join(root, "tools/gguf/gguf-write.mjs"), cfgPath, dt, gguf],
                 {stdio: ["ignore", "ignore", "inherit"]});
    const before = load();
    const args = [path.join(here, "run.mjs"), gguf, "--decode", String(decode),
                  "--repeats", String(repeats)];
    for (const p of prompts)
        args.push("--prompt", String(p));
    const lines = execFileSync("node", args, {encoding: "utf8", stdio: ["ignore", "pipe", "inherit"],
                                             maxBuffer: 1 << 24}).trim().split("\n")
                      .map(l => JSON.parse(l));
    fs.rmSync(gguf);
    raw.push(...lines.map(l => ({...l, name, dtype: dt})));
    return points(name, dt, lines, before);
}

// the points of one config's runs (run.mjs's lines)
function points(name, dt, lines, before) {
    if (!lines.length)
        throw new Error(`predict.mjs: no runs of ${name} ${dt}`);
    before ??= lines[0].load;
    const steps = [];
    for (const p of prompts) {
        const runs = lines.filter(l => l.prompt === p);
        steps.push({phase: "prefill", tokens: p, context: 0,
                    measured_s: median(runs.map(r => r.prefill_s)), load: before});
        // decode token j is fed at position p + j: p + j positions cached
        const times = runs.flatMap(r => r.decode_s);
        const ctx = median(runs[0].contexts) - 1;
        steps.push({phase: "decode", tokens: 1, context: Math.round(ctx),
                    measured_s: quantile(times, 0.1), load: before});
    }
    log(`predict.mjs: ${name} ${dt}: ${steps.map(s => `${s.phase} ${s.tokens}@${s.context} ` +
        `${(s.measured_s * 1e3).toFixed(1)} ms`).join(", ")} (load before ${before})`);
    return steps;
}

// 1. the machine
const profile = path.join(out, "profile.json");
for (let i = 0; i < (reuse ? 0 : 3); i++) {
    log(`predict.mjs: measuring the machine, run ${i + 1} of 3 (load ${load()})`);
    execFileSync(lab, ["measure", "--quick", ...(i ? ["--merge", profile] : []), "-o", profile],
                 {stdio: ["ignore", "ignore", "inherit"]});
}
const prof = JSON.parse(fs.readFileSync(profile, "utf8"));

// 2. the calibration
const cal = {engine_calibration: {
    version: 1, engine: "llamacpp",
    detail: `llama.cpp through node-llama-cpp ${JSON.parse(fs.readFileSync(
        path.join(here, "package.json"), "utf8")).dependencies["node-llama-cpp"]}, CPU, 2 threads`,
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    activations: "fp32", kv: "fp16",
    roofs: {from: `${profile} (${prof.name})`, bandwidth_bytes_per_s: prof.bandwidth_bytes_per_s,
            peak_flops_per_s: prof.peak_flops_per_s},
    models: {}, steps: []}};
for (const [name, cfg] of Object.entries(calib)) {
    cal.engine_calibration.models[name] = cfg;
    for (const dt of dtypes)
        for (const s of time(name, cfg, dt))
            cal.engine_calibration.steps.push({model: name, weights: key[dt], phase: s.phase,
                                               tokens: s.tokens, context: s.context,
                                               measured_s: s.measured_s});
}
const calPath = path.join(out, "llamacpp.json");
fs.writeFileSync(calPath, JSON.stringify(cal, null, 2) + "\n");

// 3. the test
const rows = [];
const stepJson = (cfgPath, dt, s, extra) => JSON.parse(execFileSync(bin, [
    "step", cfgPath, "--hw", profile, "--weight-dtype", key[dt], "--act-dtype", "fp32",
    "--kv-dtype", "fp16", "--phase", s.phase,
    ...(s.phase === "prefill" ? ["--tokens", String(s.tokens)] : ["--context", String(s.context)]),
    "--json", ...extra], {encoding: "utf8"}));
for (const [name, cfg] of Object.entries(tests))
    for (const dt of dtypes)
        for (const s of time(name, cfg, dt)) {
            const cfgPath = path.join(out, `${name}.json`);
            const fl = stepJson(cfgPath, dt, s, []);
            const pr = stepJson(cfgPath, dt, s, ["--predict", "--backend", "llamacpp",
                                                 "--calibration", calPath]);
            rows.push({model: `${name} (${cfg.num_hidden_layers} layers)`, dtype: dt,
                       phase: s.phase, tokens: s.tokens, context: s.context,
                       measured_s: s.measured_s, floor_s: fl.floor_s,
                       predicted_s: pr.predicted.predicted_s, load: s.load});
        }
fs.writeFileSync(path.join(out, "results.json"), JSON.stringify(rows, null, 2) + "\n");
if (!reuse)
    fs.writeFileSync(path.join(out, "runs.json"), JSON.stringify(raw) + "\n");
process.stdout.write(JSON.stringify(rows) + "\n");
