#!/usr/bin/env node
// gguf-write.mjs - write a GGUF v3 file with random weights for a llama or
// qwen2 decoder, in f32, f16, q8_0 or q4_0, that llama.cpp loads.
//
//   node tools/gguf/gguf-write.mjs CONFIG.json DTYPE OUT.gguf [--layers N] [--vocab V]
//
// CONFIG.json is a Hugging Face config.json (LlamaForCausalLM or
// Qwen2ForCausalLM: hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, head_dim (optional), vocab_size,
// rms_norm_eps, rope_theta, tie_word_embeddings). --layers and --vocab
// override the config's (the calibration's synthetic models).
//
// The format, as llama.cpp's gguf.cpp and ggml-common.h define it:
//   header   "GGUF", version 3 (u32), tensor count (u64), key count (u64)
//   keys     string key (u64 length + bytes), value type (u32), value
//   tensors  name, n_dims (u32), dims (u64 each, innermost first), ggml type
//            (u32: F32 0, F16 1, Q4_0 2, Q8_0 8), offset (u64) from the data
//            section, each aligned to general.alignment (32)
//   data     after padding the header to the alignment
// Blocks of 32 weights: q8_0 = fp16 scale d + 32 int8 (34 bytes, w = d q);
// q4_0 = fp16 d + 16 bytes, element j in the low nibble of byte j and
// element j + 16 in the high one (18 bytes, w = d (q - 8)).
//
// Weights are random: a 4 MiB pool of random blocks of the dtype (values
// within +-0.03, q scales 2^-10) is generated once, and each tensor copies it
// from its own random block offset onward, wrapping. Timing does not depend
// on the values; norms are 1, biases 0, so the activations stay finite.
//
// The tokenizer is the smallest one llama.cpp's vocabulary loader accepts
// (model "llama", a SentencePiece-style list): <unk>, <s>, </s>, the 256 byte
// tokens <0x00> .. <0xFF> it looks the newline up among, and filler pieces up
// to the vocabulary size, which sets the size of the embedding and lm_head.
import fs from "node:fs";
import crypto from "node:crypto";

const GGML = {f32: {type: 0, block: 1, bytes: 4, ftype: 0},
              f16: {type: 1, block: 1, bytes: 2, ftype: 1},
              q4_0: {type: 2, block: 32, bytes: 18, ftype: 2},
              q8_0: {type: 8, block: 32, bytes: 34, ftype: 7}};
const ALIGN = 32;

function usage(msg) {
    process.stderr.write(`gguf-write: ${msg}\nusage: gguf-write.mjs CONFIG.json f32|f16|q8_0|q4_0 OUT.gguf [--layers N] [--vocab V]\n`);
    process.exit(2);
}

const args = process.argv.slice(2);
if (args.length < 3)
    usage("needs CONFIG.json, a dtype and an output path");
const [cfgPath, dtype, outPath] = args;
if (!GGML[dtype])
    usage(`unknown dtype '${dtype}'`);
let cfg;
try {
    cfg = JSON.parse(fs.readFileSync(cfgPath, "utf8"));
} catch (e) {
    usage(`${cfgPath}: ${e.message}`);
}
for (let i = 3; i < args.length; i += 2) {
    const v = Number(args[i + 1]);
    if (!Number.isInteger(v) || v < 1)
        usage(`${args[i]} needs a positive integer`);
    if (args[i] === "--layers") cfg.num_hidden_layers = v;
    else if (args[i] === "--vocab") cfg.vocab_size = v;
    else usage(`unknown option ${args[i]}`);
}

const archOf = {LlamaForCausalLM: "llama", Qwen2ForCausalLM: "qwen2"};
const arch = archOf[(cfg.architectures || [])[0]] || cfg.model_type;
if (arch !== "llama" && arch !== "qwen2")
    usage(`${cfgPath}: architecture ${(cfg.architectures || [])[0]} (llama and qwen2 only)`);
const H = cfg.hidden_size, F = cfg.intermediate_size, L = cfg.num_hidden_layers;
const nh = cfg.num_attention_heads, nkv = cfg.num_key_value_heads ?? nh;
const d = cfg.head_dim ?? H / nh, V = cfg.vocab_size;
for (const [k, v] of Object.entries({hidden_size: H, intermediate_size: F, num_hidden_layers: L,
                                     num_attention_heads: nh, head_dim: d, vocab_size: V}))
    if (!Number.isInteger(v) || v < 1)
        usage(`${cfgPath}: ${k} missing or not a positive integer`);
if (V < 259)
    usage(`vocabulary of ${V}: at least 259 (3 special and 256 byte tokens)`);

// ---- the header --------------------------------------------------------
const chunks = [];
const u32 = v => { const b = Buffer.alloc(4); b.writeUInt32LE(v); chunks.push(b); };
const i32 = v => { const b = Buffer.alloc(4); b.writeInt32LE(v); chunks.push(b); };
const u64 = v => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); chunks.push(b); };
const f32 = v => { const b = Buffer.alloc(4); b.writeFloatLE(v); chunks.push(b); };
const str = s => { const b = Buffer.from(s, "utf8"); u64(b.length); chunks.push(b); };
const T = {U32: 4, I32: 5, F32: 6, BOOL: 7, STR: 8, ARR: 9};
const kvs = [];
const kv = (key, type, value, elem) => kvs.push({key, type, value, elem});

kv("general.architecture", T.STR, arch);
kv("general.name", T.STR, `roofline random ${cfgPath.split("/").pop()} ${dtype}`);
kv("general.alignment", T.U32, ALIGN);
kv("general.file_type", T.U32, GGML[dtype].ftype);
kv(`${arch}.context_length`, T.U32, Math.min(cfg.max_position_embeddings ?? 4096, 131072));
kv(`${arch}.embedding_length`, T.U32, H);
kv(`${arch}.block_count`, T.U32, L);
kv(`${arch}.feed_forward_length`, T.U32, F);
kv(`${arch}.attention.head_count`, T.U32, nh);
kv(`${arch}.attention.head_count_kv`, T.U32, nkv);
kv(`${arch}.attention.key_length`, T.U32, d);
kv(`${arch}.attention.value_length`, T.U32, d);
kv(`${arch}.attention.layer_norm_rms_epsilon`, T.F32, cfg.rms_norm_eps ?? 1e-5);
kv(`${arch}.rope.freq_base`, T.F32, cfg.rope_theta ?? 10000);
kv(`${arch}.rope.dimension_count`, T.U32, d);
kv(`${arch}.vocab_size`, T.U32, V);
const tokens = [], types = [];
["<unk>", "<s>", "</s>"].forEach((t, i) => { tokens.push(t); types.push(i ? 3 : 2); });
for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(6); // byte
}
while (tokens.length < V) {
    tokens.push(`\u2581t${tokens.length}`);
    types.push(1); // normal
}
kv("tokenizer.ggml.model", T.STR, "llama");
kv("tokenizer.ggml.tokens", T.ARR, tokens, T.STR);
kv("tokenizer.ggml.scores", T.ARR, tokens.map((_, i) => -i), T.F32);
kv("tokenizer.ggml.token_type", T.ARR, types, T.I32);
kv("tokenizer.ggml.bos_token_id", T.U32, 1);
kv("tokenizer.ggml.eos_token_id", T.U32, 2);
kv("tokenizer.ggml.unknown_token_id", T.U32, 0);
kv("tokenizer.ggml.add_bos_token", T.BOOL, false);

// tensors: [name, dims innermost first, dtype]
const tensors = [];
const mat = (name, k, n) => tensors.push([name, [k, n], dtype]);
const vec = (name, n) => tensors.push([name, [n], "f32"]);
mat("token_embd.weight", H, V);
for (let l = 0; l < L; l++) {
    const p = `blk.${l}.`;
    vec(p + "attn_norm.weight", H);
    mat(p + "attn_q.weight", H, nh * d);
    mat(p + "attn_k.weight", H, nkv * d);
    mat(p + "attn_v.weight", H, nkv * d);
    if (arch === "qwen2") {
        vec(p + "attn_q.bias", nh * d);
        vec(p + "attn_k.bias", nkv * d);
        vec(p + "attn_v.bias", nkv * d);
    }
    mat(p + "attn_output.weight", nh * d, H);
    vec(p + "ffn_norm.weight", H);
    mat(p + "ffn_gate.weight", H, F);
    mat(p + "ffn_up.weight", H, F);
    mat(p + "ffn_down.weight", F, H);
}
vec("output_norm.weight", H);
if (cfg.tie_word_embeddings === false)
    mat("output.weight", H, V);

const nbytes = ([, dims, dt]) => {
    const g = GGML[dt], n = dims.reduce((a, b) => a * b, 1);
    if (dims[0] % g.block)
        usage(`${dims[0]} columns are not whole ${dt} blocks of ${g.block}`);
    return n / g.block * g.bytes;
};
const pad = n => Math.ceil(n / ALIGN) * ALIGN;

u32(0x46554747); // "GGUF"
u32(3);
u64(tensors.length);
u64(kvs.length);
for (const {key, type, value, elem} of kvs) {
    str(key);
    u32(type);
    const put = (t, v) => t === T.U32 ? u32(v) : t === T.I32 ? i32(v) : t === T.F32 ? f32(v)
                        : t === T.STR ? str(v) : chunks.push(Buffer.from([v ? 1 : 0]));
    if (type === T.ARR) {
        u32(elem);
        u64(value.length);
        value.forEach(v => put(elem, v));
    } else {
        put(type, value);
    }
}
let offset = 0;
for (const t of tensors) {
    str(t[0]);
    u32(t[1].length);
    t[1].forEach(u64);
    u32(GGML[t[2]].type);
    u64(offset);
    offset += pad(nbytes(t));
}
let head = Buffer.concat(chunks);
head = Buffer.concat([head, Buffer.alloc(pad(head.length) - head.length)]);

// ---- random pools ------------------------------------------------------
function fp16(x) { // round to nearest fp16 bits (|x| in the normal range or 0)
    const f = new Float32Array([x]), u = new Uint32Array(f.buffer)[0];
    const s = (u >>> 16) & 0x8000, e = ((u >>> 23) & 0xff) - 127 + 15;
    if (x === 0 || e <= 0) return s;
    return s | (e << 10) | ((u >>> 13) & 0x3ff);
}
function pool(dt) {
    const g = GGML[dt], blocks = Math.floor((4 << 20) / g.bytes), b = Buffer.alloc(blocks * g.bytes);
    const rnd = crypto.randomBytes(b.length);
    const val = i => (rnd[i] / 255 - 0.5) * 0.06;
    for (let i = 0; i < blocks; i++) {
        const o = i * g.bytes;
        if (dt === "f32") b.writeFloatLE(val(o), o);
        else if (dt === "f16") b.writeUInt16LE(fp16(val(o)), o);
        else {
            b.writeUInt16LE(fp16(1 / 1024), o);
            rnd.copy(b, o + 2, o + 2, o + g.bytes);
        }
    }
    return b;
}
const pools = {};

const fd = fs.openSync(outPath, "w");
fs.writeSync(fd, head);
let written = 0;
const CH = 64 << 20;
const out = Buffer.alloc(CH);
for (const t of tensors) {
    const dt = t[2], n = nbytes(t);
    let b;
    if (t[0].endsWith("norm.weight")) {
        b = Buffer.alloc(n);
        for (let i = 0; i < n; i += 4) b.writeFloatLE(1, i);
    } else if (t[0].endsWith(".bias")) {
        b = Buffer.alloc(n);
    }
    if (b) {
        fs.writeSync(fd, b);
    } else {
        const p = pools[dt] ??= pool(dt), bs = GGML[dt].bytes;
        let at = crypto.randomInt(p.length / bs) * bs, left = n;
        while (left > 0) {
            let fill = 0;
            while (fill < Math.min(CH, left)) {
                const c = Math.min(p.length - at, Math.min(CH, left) - fill);
                p.copy(out, fill, at, at + c);
                fill += c;
                at = (at + c) % p.length;
            }
            fs.writeSync(fd, out, 0, fill);
            left -= fill;
        }
    }
    const z = pad(n) - n;
    if (z) fs.writeSync(fd, Buffer.alloc(z));
    written += pad(n);
}
fs.closeSync(fd);
process.stdout.write(`${outPath}: GGUF v3, ${arch}, ${L} layers, H ${H}, F ${F}, heads ${nh}/${nkv} x ${d}, vocab ${V}, ${dtype}, ${tensors.length} tensors, ${(written / 2 ** 20).toFixed(1)} MiB of weights\n`);
