// run.mjs - time llama.cpp's prefill and decode of one GGUF file through
// node-llama-cpp's prebuilt CPU binaries (never a build from source).
//
//   node bench/llamacpp/run.mjs MODEL.gguf --prompt P [--prompt P2 ...]
//        [--decode D] [--repeats R] [--threads N]
//
// One line of JSON a run on stdout: {"prompt", "prefill_s", "decode_s": [...],
// "contexts": [...]}. A run is: a fresh sequence (KV cache cleared), one
// evaluation of P random tokens as one batch with the logits of the last
// (the context's batch is the largest P, so llama.cpp's ubatch holds the
// whole prompt: one step, lm_head on one row, as llama.cpp's prefill), then
// D tokens fed back one at a time (greedy), each a step of its own timed
// from the call to the token out; decode step j runs at context P + j
// (j = 1 .. D: keys P + j).
// The first run of each P is a warm-up and is not printed.
import {getLlama} from "node-llama-cpp";
import {execSync} from "node:child_process";

const args = process.argv.slice(2);
const path = args[0];
const prompts = [];
let decode = 26, repeats = 3, threads = 2;
for (let i = 1; i < args.length; i += 2) {
    const v = Number(args[i + 1]);
    if (!Number.isInteger(v) || v < 0) {
        process.stderr.write(`run.mjs: ${args[i]} needs a whole number\n`);
        process.exit(2);
    }
    if (args[i] === "--prompt") prompts.push(v);
    else if (args[i] === "--decode") decode = v;
    else if (args[i] === "--repeats") repeats = v;
    else if (args[i] === "--threads") threads = v;
    else {
        process.stderr.write(`run.mjs: unknown option ${args[i]}\n`);
        process.exit(2);
    }
}
if (!path || !prompts.length) {
    process.stderr.write("usage: run.mjs MODEL.gguf --prompt P [--prompt P2] [--decode D] [--repeats R] [--threads N]\n");
    process.exit(2);
}

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: path, gpuLayers: 0});
const maxP = Math.max(...prompts);
const context = await model.createContext({contextSize: maxP + decode + 8, batchSize: maxP,
                                           sequences: 1, threads});
const nvocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
process.stderr.write(`run.mjs: ${path}: ${llama.systemInfo.trim()} threads ${threads}, flash attention ${context.flashAttention}, batch ${context.batchSize}\n`);

const hrs = () => Number(process.hrtime.bigint()) / 1e9;
const randomTokens = n => Array.from({length: n}, () => 259 + Math.floor(Math.random() * (nvocab - 259)));

const seq = context.getSequence();
for (const P of prompts) {
    for (let r = 0; r <= repeats; r++) {
        const load = execSync("uptime").toString().trim().replace(/.*load average: /, "");
        await seq.clearHistory();
        const tokens = randomTokens(P);
        const gen = {generateNext: {token: true, options: {temperature: 0}}};
        let t0 = hrs();
        let out = await seq.controlledEvaluate([...tokens.slice(0, P - 1), [tokens[P - 1], gen]]);
        const prefill = hrs() - t0;
        let tok = out[P - 1]?.next?.token ?? tokens[0];
        const times = [], ctx = [];
        for (let j = 0; j < decode; j++) {
            t0 = hrs();
            out = await seq.controlledEvaluate([[tok, gen]]);
            times.push(hrs() - t0);
            ctx.push(P + j + 1);
            tok = out[0]?.next?.token ?? tokens[j];
        }
        if (r > 0)
            process.stdout.write(JSON.stringify({model: path, prompt: P,                 prefill_s: prefill, decode_s: times, contexts: ctx, load}) + "\n");
    }
}
await context.dispose();
await model.dispose();
