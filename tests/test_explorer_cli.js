#!/usr/bin/env node
/* test_explorer_cli.js ROOFLINE DIR: every CLI table's command line
 * through the WebAssembly module (RF_WASM_MODULE, the explorer's
 * roofline.js) under Node.js, one module for all of them, against the
 * native binary; the exit codes and the bytes on stdout and stderr must be
 * the same. DIR is what the release build's test_entry kept
 * (test_entry.sh, RF_ENTRY_SAVE): DIR/rows, the tables as it read them
 * ("R", the row's {TMP} folder, the argument count, the arguments,
 * NUL-separated), and DIR/binary-results, the binary's exit code and bytes
 * for each row (test_entry.c, SAVE), run as here: a table's rows in their
 * order, its {TMP} folder made empty before the table.
 *
 * The module sees the real files through NODEFS: DIR (the rows' {TMP}
 * folders) and the folders of RF_TEST_DIRS (colon-separated: the test
 * data), each mounted at its own path. A page from `report -o -` is
 * compared without the explorer the binary adds (the module, running
 * inside a page, adds none). Left out, and counted: the commands the module
 * does not have (measure, bench, profile: they must exit 3 there), and rows
 * that name a file outside those folders (/proc, /dev/full, ...), which the
 * module's file system cannot hold, and a path through a regular file,
 * which emscripten's NODEFS reports as ENOENT where the host says ENOTDIR. A second pass runs the tables again,
 * the last first, in the same module: no state survives a call. Each row
 * runs through rf_cli_run, as the explorer's page runs it: the output and
 * errors are the ones the library captured, and nothing may reach the
 * module's own stdout and stderr. */
"use strict";
const { spawnSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [bin, logDir] = process.argv.slice(2);
const modulePath = process.env.RF_WASM_MODULE;
if (!modulePath || !fs.existsSync(modulePath)) {
  console.log("SKIP: no WebAssembly module (built without emcc)");
  process.exit(77);
}
const ABSENT = new Set(["measure", "bench", "profile"]);
const rowsFile = path.join(logDir, "rows"), resultsFile = path.join(logDir, "binary-results");
if (!fs.existsSync(rowsFile) || !fs.existsSync(resultsFile)) {
  console.log("FAIL: " + logDir + " holds no rows or binary-results (test_entry writes them)");
  process.exit(1);
}

/* the rows: [{tmp, args, native: {status, stdout, stderr}}], a table's
 * rows together */
const fields = fs.readFileSync(rowsFile, "utf8").split("\0");
const rows = [];
for (let i = 0; i + 2 < fields.length && fields[i] === "R";) {
  const tmp = fields[i + 1], n = Number(fields[i + 2]);
  rows.push({ tmp: tmp, args: fields.slice(i + 3, i + 3 + n) });
  i += 3 + n;
}
const results = fs.readFileSync(resultsFile);
let at = 0;
for (const [i, row] of rows.entries()) {
  const nl = results.indexOf(10, at);
  const head = nl < 0 ? [] : results.toString("latin1", at, nl).split(" ").map(Number);
  if (head.length !== 3 || head.some((v) => !Number.isInteger(v) || v < 0) ||
      nl + 1 + head[1] + head[2] > results.length) {
    console.log("FAIL: " + resultsFile + ": no result for row " + (i + 1));
    process.exit(1);
  }
  const out = nl + 1, err = out + head[1];
  row.native = { status: head[0], stdout: results.subarray(out, err),
                 stderr: results.subarray(err, err + head[2]) };
  at = err + head[2];
}
if (at !== results.length) {
  console.log("FAIL: " + resultsFile + " holds more results than " + rowsFile + " rows");
  process.exit(1);
}
/* the tables in order, and the last first */
const tables = [];
for (const row of rows) {
  if (!tables.length || tables[tables.length - 1][0].tmp !== row.tmp) tables.push([]);
  tables[tables.length - 1].push(row);
}

/* a report page as rf_report_write_html ends it: what follows its </main>
 * up to </body> is the explorer */
function withoutExplorer(b) {
  const s = b.toString("latin1");
  if (!s.includes('id="rf-explorer-state"')) return b;
  const main = s.lastIndexOf("</main>\n") + 8, body = s.lastIndexOf("</body>");
  return Buffer.from(s.slice(0, main) + s.slice(body), "latin1");
}

/* what reaches the module's own streams: nothing, every byte a call
 * writes is its result's */
const stray = [];
require(path.resolve(modulePath))({
  stdout: (b) => { if (b !== null) stray.push(b & 255); },
  stderr: (b) => { if (b !== null) stray.push(b & 255); },
}).then((m) => {
  const roots = new Set();
  /* a folder of the host at the same path in the module */
  function mount(dir) {
    if (roots.has(dir)) return;
    let at = "";
    for (const part of dir.split("/").filter(Boolean)) {
      at += "/" + part;
      try { m.FS.mkdir(at); } catch (e) { /* there already */ }
    }
    m.FS.mount(m.FS.filesystems.NODEFS, { root: dir }, dir);
    roots.add(dir);
  }
  const dataDirs = [logDir].concat((process.env.RF_TEST_DIRS || "").split(":"))
    .filter(Boolean).map((d) => fs.realpathSync(d));
  /* rf_cli_run: res, an rf_cli_result in 32-bit memory, is out, out_len,
   * err, err_len, code, 4 bytes each (entry.c asserts the offsets) */
  function run(args) {
    const argv = ["roofline"].concat(args);
    const ptrs = argv.map((s) => {
      const n = m.lengthBytesUTF8(s) + 1, p = m._malloc(n);
      m.stringToUTF8(s, p, n);
      return p;
    });
    const arr = m._malloc(4 * (ptrs.length + 1));
    ptrs.forEach((p, i) => m.setValue(arr + 4 * i, p, "i32"));
    m.setValue(arr + 4 * ptrs.length, 0, "i32");
    const res = m._malloc(20);
    m._rf_cli_run(ptrs.length, arr, res);
    const at = (off) => m.getValue(res + off, "i32") >>> 0;
    const bytes = (p, n) => Buffer.from(m.HEAPU8.slice(p, p + n));
    const r = { code: m.getValue(res + 16, "i32"), out: bytes(at(0), at(4)),
                err: bytes(at(8), at(12)) };
    m._rf_cli_result_free(res);
    m._free(res);
    ptrs.forEach((p) => m._free(p));
    m._free(arr);
    if (stray.length) {
      console.log("FAIL: " + args.join(" ") + ": " + stray.length + " bytes on the module's " +
                  "own streams, outside the result");
      stray.length = 0;
      r.code = -1;
    }
    return r;
  }
  /* may this row run in the module: every absolute path it names lies in a
   * mounted folder (the row's {TMP} or the test data) */
  const inside = (a) => [...dataDirs].some((d) => a === d || a.startsWith(d + "/"));
  let compared = 0, absent = 0, outside = 0, fsDiffers = 0, failed = 0;
  for (const d of dataDirs) mount(d);
  for (const table of tables.concat(tables.slice().reverse())) {
    fs.rmSync(table[0].tmp, { recursive: true, force: true });
    fs.mkdirSync(table[0].tmp, { recursive: true });
    for (const row of table) {
      const word = row.args[0];
      const paths = row.args.flatMap((a) => a.split("=")).filter((a) => a.startsWith("/"));
      if (ABSENT.has(word)) {
        const w = run(row.args);
        if (w.code !== 3) {
          console.log("FAIL: " + row.args.join(" ") + ": exit " + w.code + " in the module, not 3");
          failed++;
        }
        absent++;
        continue;
      }
      if (paths.some((p) => !inside(p))) {
        outside++;
        continue;
      }
      const n = row.native, w = run(row.args);
      /* a path through a regular file: the host says ENOTDIR, emscripten's
       * NODEFS maps it to ENOENT (the file system's word, not the tool's) */
      if (String(n.stderr).includes(": Not a directory\n") &&
          String(w.err).includes(": No such file or directory\n")) {
        fsDiffers++;
        continue;
      }
      compared++;
      const same = n.status === w.code && withoutExplorer(n.stdout).equals(w.out) &&
        n.stderr.equals(w.err);
      if (!same && failed++ < 10) {
        console.log("FAIL: " + row.args.join(" ") + "\n  native: exit " + n.status + ", " +
          n.stdout.length + " bytes out, err " + JSON.stringify(String(n.stderr).slice(0, 200)) +
          "\n  module: exit " + w.code + ", " + w.out.length + " bytes out, err " +
          JSON.stringify(String(w.err).slice(0, 200)));
      }
    }
  }
  console.log("module = binary on " + compared + " command lines (two passes); left out: " +
              absent + " of measure/bench/profile (exit 3 checked), " + outside +
              " naming files outside the test folders, " + fsDiffers +
              " where the file system's errno differs (ENOTDIR as ENOENT)");
  /* jansson as emcc compiled it (Debian's source, wasm/CMakeLists.txt)
   * against the binary's libjansson on JSON's edge cases
   * (tests/data/json_edge: bad escapes and UTF-8, surrogates, a BOM, deep
   * nesting, 64-bit limits, reals, duplicate keys, trailing bytes): the
   * same refusal, line, column and message, read as a config.json and as
   * a profile. */
  const edgeDir = dataDirs.map((d) => path.join(d, "json_edge")).find((d) => fs.existsSync(d));
  const edge = edgeDir ? fs.readdirSync(edgeDir).filter((f) => f.endsWith(".json")).sort() : [];
  let edgeSame = 0;
  for (const f of edge) {
    const file = path.join(edgeDir, f);
    for (const args of [["info", file], ["gemm", "1", "64", "64", "--hw", file]]) {
      const n = spawnSync(bin, args, { stdio: ["ignore", "pipe", "pipe"] }), w = run(args);
      if (n.status === w.code && n.stdout.equals(w.out) && n.stderr.equals(w.err)) {
        edgeSame++;
      } else if (failed++ < 20) {
        console.log("FAIL: " + args.join(" ") + "\n  native: exit " + n.status + ", err " +
          JSON.stringify(String(n.stderr)) + "\n  module: exit " + w.code + ", err " +
          JSON.stringify(String(w.err)));
      }
    }
  }
  console.log("module = binary on " + edgeSame + " reads of " + edge.length +
              " JSON edge cases (tests/data/json_edge)");
  if (edge.length < 30) {
    console.log("FAIL: " + edge.length + " files in tests/data/json_edge, 30 or more expected");
    failed++;
  }
  /* issue 28, finding 13: a config of 40,000 keys (llama-3-70b's fields
   * and k00000 .. k39999) took 9.7 s in the module (a hand-written reader's
   * linear key lookup; 0.05 s native) and froze the explorer; jansson's
   * hash table reads it in about 0.1 s here. Allowed: 2 s. */
  const big = JSON.parse(fs.readFileSync(path.join(dataDirs.find((d) =>
    fs.existsSync(path.join(d, "models", "llama-3-70b.json"))) || ".", "models",
    "llama-3-70b.json"), "utf8"));
  for (let i = 0; i < 40000; i++) big["k" + String(i).padStart(5, "0")] = i;
  const bigPath = path.join(dataDirs[0], "keys-40000.json");
  fs.writeFileSync(bigPath, JSON.stringify(big));
  const t0 = Date.now(), w = run(["info", bigPath]), took = (Date.now() - t0) / 1000;
  fs.rmSync(bigPath, { force: true });
  console.log("a config of 40,000 keys: info in " + took.toFixed(3) + " s in the module, exit " +
              w.code);
  if (w.code !== 0 || took > 2) {
    console.log("FAIL: info on a config of 40,000 keys: exit " + w.code + " in " + took + " s");
    failed++;
  }
  process.exit(failed ? 1 : 0);
});
