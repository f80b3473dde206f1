// Derive the project's GPU kernel tables (data/gpu/<gpu>/<engine>/<table>.csv) from aiconfigurator's
// silicon database (parquet). CI does not run this; see README.md beside it for the rules it applies.
//
//   node derive.mjs SRC_DIR OUT_DIR [gpu ...]
//
// SRC_DIR is the folder laid out as GPU/KIND/ENGINE/VERSION/TABLE.parquet (aiconfigurator's
// aic-core/src/aiconfigurator_core/systems/data/ at commit 095f58a5); OUT_DIR is data/gpu.
// Prints one line per written file: path, rows in, rows out, bytes.
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

const here = dirname(fileURLToPath(import.meta.url))
const req = createRequire(pathToFileURL(here + '/').href)
const { parquetReadObjects } = await import(pathToFileURL(req.resolve('hyparquet')).href)
const { compressors } = await import(pathToFileURL(req.resolve('hyparquet-compressors')).href)

const ENGINES = { vllm: '0.24.0', trtllm: '1.3.0rc20', sglang: '0.5.14' }
const GPUS = ['h100_sxm', 'h200_sxm', 'b200_sxm', 'b300_sxm']

// One entry a table: the folder (kind) it lives in, the columns kept as keys (in this order),
// and the label columns kept only in a file where they tell rows apart (see keepIfDistinct).
// Columns not named are dropped; dropColumnsChecked() refuses to drop one that tells rows apart.
const TABLES = {
  gemm_perf: { kind: 'gemm', keys: ['gemm_dtype', 'm', 'n', 'k'] },
  context_attention_perf: { kind: 'attention', keys: ['batch_size', 'isl', 'num_heads', 'num_key_value_heads', 'head_dim', 'attn_dtype', 'kv_cache_dtype', 'window_size'] },
  generation_attention_perf: { kind: 'attention', keys: ['batch_size', 'isl', 'step', 'num_heads', 'num_key_value_heads', 'head_dim', 'attn_dtype', 'kv_cache_dtype', 'window_size'] },
  mla_context_module_perf: { kind: 'mla', keys: ['mla_dtype', 'kv_cache_dtype', 'gemm_type', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  mla_generation_module_perf: { kind: 'mla', keys: ['mla_dtype', 'kv_cache_dtype', 'gemm_type', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  context_mla_perf: { kind: 'mla', keys: ['mla_dtype', 'kv_cache_dtype', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  generation_mla_perf: { kind: 'mla', keys: ['mla_dtype', 'kv_cache_dtype', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  mla_bmm_perf: { kind: 'mla_bmm', keys: ['op_name', 'bmm_dtype', 'num_tokens', 'num_heads'] },
  moe_perf: { kind: 'moe', keys: ['moe_dtype', 'num_tokens', 'hidden_size', 'inter_size', 'topk', 'num_experts', 'moe_tp_size', 'moe_ep_size', 'distribution'] },
  gdn_perf: { kind: 'linear_attention', keys: ['kernel_source', 'phase', 'batch_size', 'seq_len', 'num_tokens', 'd_model', 'd_conv', 'num_k_heads', 'head_k_dim', 'num_v_heads', 'head_v_dim'] },
  mamba2_perf: { kind: 'linear_attention', keys: ['kernel_source', 'phase', 'batch_size', 'seq_len', 'num_tokens', 'd_model', 'd_state', 'd_conv', 'nheads', 'head_dim', 'n_groups', 'chunk_size'] },
  dsa_context_module_perf: { kind: 'sparse_attention', keys: ['op_name', 'model', 'mla_dtype', 'kv_cache_dtype', 'gemm_type', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  dsa_generation_module_perf: { kind: 'sparse_attention', keys: ['op_name', 'model', 'mla_dtype', 'kv_cache_dtype', 'gemm_type', 'num_heads', 'batch_size', 'isl', 'tp_size', 'step'] },
  custom_allreduce_perf: { kind: 'comm', keys: ['op_name', 'kernel_source', 'allreduce_dtype', 'num_gpus', 'message_size'] },
}
const NCCL = { kind: 'comm', keys: ['op_name', 'nccl_dtype', 'num_gpus', 'message_size'] }
// Labels that may tell rows apart (which kernel ran, which model's module): kept in a file only
// where rows with the same kept keys differ in them.
const LABELS = ['kernel_source', 'model']
// Dropped always: run metadata, the same in every row of a file (checked), or a restatement of a kept
// column (architecture restates model; backend and implementation restate kernel_source).
const METADATA = ['framework', 'version', 'device']

// Thinning (README.md, "Thinning"): rows a table keeps. Written as rules over the row's own
// configuration columns, never over its latency.
const pow2 = x => x >= 1 && Number.isInteger(Math.log2(x))
const pow4 = x => pow2(x) && Math.log2(x) % 2 === 0
// batch_size of an attention table: up to 8 every point, then the powers of 4 (16, 64, 256, 1024).
const attnBatch = r => Number(r.batch_size) <= 8 || pow4(Number(r.batch_size))
// GEMM m: 1..16 every point, multiples of 32 up to 256, multiples of 512 above; the source's m + 1
// probes (17, 33, ..., 4353) and its 16- and 256-steps between those are dropped.
const gemmM = m => m <= 16 || (m <= 256 ? m % 32 === 0 : m % 512 === 0)
const THIN = {
  gemm_perf: r => gemmM(Number(r.m)),
  // isl: 1 and the powers of two; the half steps (1536, 3072, 6144, 10240, 12288) dropped.
  context_attention_perf: r => attnBatch(r) && (Number(r.isl) === 1 || pow2(Number(r.isl))),
  // step (the KV positions before the decoded token): 2^k - 1 for odd k only (1, 7, 31, ..., 131071);
  // decode attention is linear in it, so every other point of the source's doubling grid is kept.
  generation_attention_perf: r => attnBatch(r) && pow2(Number(r.step) + 1) && Math.log2(Number(r.step) + 1) % 2 === 1,
  // one routing distribution, power_law_1.01 (see README.md), and layouts of at most 16 GPUs
  // (moe_tp_size x moe_ep_size <= 16: two 8-GPU nodes).
  moe_perf: r => r.distribution === 'power_law_1.01' && Number(r.moe_tp_size) * Number(r.moe_ep_size) <= 16,
  // DeepSeek's module tables: its published fp8 block-scaled checkpoints (gemm_type fp8_block) only,
  // and for DSA DeepSeek-V3.2's modules only (GLM-5's dropped).
  mla_context_module_perf: r => r.gemm_type === 'fp8_block',
  mla_generation_module_perf: r => r.gemm_type === 'fp8_block',
  // step (the cached prefix before the chunk): 0 and the powers of four where the source has a finer grid.
  dsa_context_module_perf: r => r.gemm_type === 'fp8_block' && r.model === 'deepseek-ai/DeepSeek-V3.2' &&
    (Number(r.step) === 0 || pow4(Number(r.step)) || Number(r.step) === 128),
  dsa_generation_module_perf: r => r.gemm_type === 'fp8_block' && r.model === 'deepseek-ai/DeepSeek-V3.2',
}

const SIG = 4 // significant digits kept of a latency (the source's run-to-run noise is above 1e-4)

function fmtLatency(x) {
  const s = Number(x.toPrecision(SIG))
  return String(s)
}

function cell(v) {
  if (v === null || v === undefined) return ''
  const s = typeof v === 'bigint' ? v.toString() : String(v)
  return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s
}

async function readTable(file) {
  const buf = readFileSync(file)
  return parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), compressors })
}

// Key of a row over the given columns.
const keyOf = (r, cols) => cols.map(c => cell(r[c])).join(',')

// Which label columns tell rows apart in this file: a label is kept when the rows' kept keys alone
// would merge rows that differ in it.
function keepIfDistinct(rows, keys) {
  const kept = []
  for (const lab of LABELS) {
    if (keys.includes(lab) || !(lab in rows[0])) continue
    const seen = new Map()
    for (const r of rows) {
      const k = keyOf(r, keys), v = cell(r[lab])
      if (!seen.has(k)) seen.set(k, v)
      else if (seen.get(k) !== v) { kept.push(lab); break }
    }
  }
  return kept
}

// Refuse to drop a column that tells rows apart: every row that shares the kept columns must agree
// on every dropped non-metadata column, unless the rows are repeated measurements of one point
// (identical in every column but latency), which derive() averages.
function dropColumnsChecked(file, rows, cols) {
  const all = Object.keys(rows[0]).filter(c => c !== 'latency' && !METADATA.includes(c))
  const byKept = new Map()
  for (const r of rows) {
    const k = keyOf(r, cols), full = keyOf(r, all)
    const prev = byKept.get(k)
    if (prev === undefined) byKept.set(k, full)
    else if (prev !== full) throw new Error(`${file}: dropping columns would merge distinct rows:\n  ${prev}\n  ${full}`)
  }
}

function derive(file, table, spec, gpu) {
  return readTable(file).then(rows => {
    const nIn = rows.length
    for (const c of spec.keys) if (!(c in rows[0])) throw new Error(`${file}: no column ${c}`)
    const thin = THIN[table] || (() => true)
    let bad = 0
    rows = rows.filter(r => {
      const l = Number(r.latency)
      if (!(l > 0) || !Number.isFinite(l)) { bad++; return false }
      return thin(r, gpu)
    })
    const cols = [...spec.keys, ...keepIfDistinct(rows, spec.keys)]
    dropColumnsChecked(file, rows, cols)
    // repeated measurements of one point: their mean (each source latency is itself a mean of calls)
    const acc = new Map()
    for (const r of rows) {
      const k = keyOf(r, cols)
      const a = acc.get(k)
      if (a) { a.sum += Number(r.latency); a.n++ } else acc.set(k, { row: r, sum: Number(r.latency), n: 1 })
    }
    // one point timed with several kernels (Blackwell's TensorRT-LLM MoE: min-latency and CUTLASS;
    // SGLang's attention: trtllm_mha and flashinfer): the fastest kernel's mean, kernel_source
    // dropped. An engine picks among its kernels, and the tables do not say which it picks; the
    // all-reduce's kernels stay apart (the C reader keeps the CUDA-graph ones).
    let out = [...acc.values()].map(({ row, sum, n }) => ({ row, latency: sum / n }))
    let outCols = cols, fastest = 0
    if (cols.includes('kernel_source') && !spec.keys.includes('kernel_source') && spec.kind !== 'comm') {
      outCols = cols.filter(c => c !== 'kernel_source')
      const best = new Map()
      for (const o of out) {
        const k = keyOf(o.row, outCols), b = best.get(k)
        if (!b) best.set(k, o)
        else { fastest++; if (o.latency < b.latency) best.set(k, o) }
      }
      out = [...best.values()]
    }
    const lines = [[...outCols, 'latency'].join(',')]
    for (const { row, latency } of out) lines.push(keyOf(row, outCols) + ',' + fmtLatency(latency))
    return { text: lines.join('\n') + '\n', nIn, nOut: out.length, bad, merged: rows.length - acc.size, fastest, cols: outCols }
  })
}

async function main() {
  const [src, out, ...gpuArgs] = process.argv.slice(2)
  if (!src || !out) { console.error('usage: node derive.mjs SRC_DIR OUT_DIR [gpu ...]'); process.exit(2) }
  const gpus = gpuArgs.length ? gpuArgs : GPUS
  for (const gpu of gpus) {
    if (!GPUS.includes(gpu)) { console.error(`unknown gpu ${gpu} (one of ${GPUS.join(' ')})`); process.exit(2) }
    const jobs = []
    for (const [eng, ver] of Object.entries(ENGINES))
      for (const [table, spec] of Object.entries(TABLES))
        jobs.push([join(src, gpu, spec.kind, eng, ver, table + '.parquet'), join(out, gpu, eng, table + '.csv'), table, spec])
    const ncclDir = join(src, gpu, 'comm', 'nccl')
    for (const v of existsSync(ncclDir) ? readdirSync(ncclDir) : [])
      jobs.push([join(ncclDir, v, 'nccl_perf.parquet'), join(out, gpu, 'nccl', 'nccl_perf.csv'), 'nccl_perf', NCCL])
    for (const [inFile, outFile, table, spec] of jobs) {
      if (!existsSync(inFile)) continue
      const r = await derive(inFile, table, spec, gpu)
      mkdirSync(dirname(outFile), { recursive: true })
      writeFileSync(outFile, r.text)
      console.log([outFile, r.nIn, r.nOut, r.bad, r.merged, r.fastest, r.text.length, r.cols.join(' ')].join('\t'))
    }
  }
}

await main()
