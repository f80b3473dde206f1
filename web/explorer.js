/* explorer.js - the report's interactive explorer (docs/explorer.md).
 *
 * The page as written is complete: every figure and table, readable with
 * JavaScript off. This script adds a panel of controls above it. Each
 * change builds the `roofline report` command line the controls say, runs
 * it in the page (the command line compiled to WebAssembly, createRoofline,
 * inlined before this script), and puts the new page's figures and tables
 * in place of the ones shown: Figure 1 and the step sections (both
 * phases' totals and operator tables, `report --part step`) first; it also
 * runs `step --json` for the phase chosen, whose floor and tokens/s the
 * panel shows. A command that fails
 * shows its one-line error and leaves the last figures, dimmed.
 * Nothing is fetched: the module, the state and any dropped file are in
 * the page or in the module's in-memory file system.
 *
 * window.rfExplorer is for tests and the curious: run(argv) runs one
 * command line; args() is the current one; lastMs the time the last
 * change took, from the input event to the new Figure 1, totals and
 * operator tables in the page;
 * pending is true until the rest of the report has followed it, wholeMs
 * the time from the input event to that.
 */
"use strict";
(function () {
  const stateEl = document.getElementById("rf-explorer-state");
  const main = document.querySelector("main");
  if (!stateEl || !main || typeof createRoofline !== "function") return;
  const state = JSON.parse(stateEl.textContent);
  const DTYPES = ["bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "mxfp4",
                  "nvfp4"];
  /* the options a control owns: 1 where the option takes a value */
  const OWNED = { "--hw": 1, "--batch": 1, "--context": 1, "--tokens": 1, "--weight-dtype": 1,
                  "--act-dtype": 1, "--kv-dtype": 1, "--tp": 1, "--pp": 1, "--naive": 0,
                  "--family": 1 };
  /* report options that step does not take (dropped from its command line) */
  const REPORT_ONLY = { "--measured": 1 };

  let mod = null;
  const utf8 = new TextDecoder();

  /* One command line through rf_cli_run, as the binary and the Python
   * package run it: {code, out, err}, the output and errors the library
   * captured. res is an rf_cli_result (rf_cli.h) in the module's 32-bit
   * memory: out, out_len, err, err_len, code, 4 bytes each (entry.c
   * asserts the offsets). */
  function run(argv) {
    const ptrs = argv.map((s) => {
      const n = mod.lengthBytesUTF8(s) + 1, p = mod._malloc(n);
      mod.stringToUTF8(s, p, n);
      return p;
    });
    const arr = mod._malloc(4 * (ptrs.length + 1));
    ptrs.forEach((p, i) => mod.setValue(arr + 4 * i, p, "i32"));
    mod.setValue(arr + 4 * ptrs.length, 0, "i32");
    const res = mod._malloc(20);
    try {
      mod._rf_cli_run(ptrs.length, arr, res);
      const at = (off) => mod.getValue(res + off, "i32") >>> 0;
      const text = (p, n) => utf8.decode(mod.HEAPU8.subarray(p, p + n));
      return { code: mod.getValue(res + 16, "i32"), out: text(at(0), at(4)),
               err: text(at(8), at(12)) };
    } finally {
      mod._rf_cli_result_free(res);
      mod._free(res);
      ptrs.forEach((p) => mod._free(p));
      mod._free(arr);
    }
  }

  /* ---- the panel ---- */
  const el = (tag, attrs, kids) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    (kids || []).forEach((c) => e.append(c));
    return e;
  };
  const panel = el("form", { id: "rf-explorer", "aria-label": "explorer" });
  panel.addEventListener("submit", (ev) => ev.preventDefault());
  const controls = {};
  function field(name, label, input) {
    input.id = "rf-" + name;
    input.name = name;
    controls[name] = input;
    panel.append(el("label", { for: input.id }, [label, input]));
    return input;
  }
  const select = (values, labels) => {
    const s = el("select");
    values.forEach((v, i) => s.append(el("option", { value: v }, [labels ? labels[i] : v])));
    return s;
  };
  const number = (min) => el("input", { type: "number", min: String(min), step: "1" });

  /* The initial command line: the model first, the owned options to the
   * controls, everything else kept as given. */
  const init = { extra: [] };
  for (let i = 0; i < state.args.length; i++) {
    const a = state.args[i];
    const eq = a.indexOf("=");
    const flag = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    if (flag in OWNED) {
      if (!OWNED[flag]) init[flag] = true;
      else init[flag] = eq > 0 && a.startsWith("--") ? a.slice(eq + 1) : state.args[++i];
    } else if (!a.startsWith("-") && init.model === undefined) {
      init.model = a;
    } else {
      init.extra.push(a);
    }
  }

  function writeFile(path, text) {
    const dirs = path.split("/").slice(0, -1);
    let at = path.startsWith("/") ? "" : ".";
    for (const d of dirs) {
      if (!d) continue;
      at += "/" + d;
      try { mod.FS.mkdir(at); } catch (e) { /* there already */ }
    }
    mod.FS.writeFile(path, text);
  }

  const status = el("p", { id: "rf-status", role: "status" }, ["explorer: loading the module..."]);
  const error = el("p", { id: "rf-error", role: "alert", hidden: "" });
  const summary = el("p", { id: "rf-summary" });
  const command = el("code", { id: "rf-command" });
  const copy = el("button", { type: "button", id: "rf-copy" }, ["copy command line"]);
  const drop = el("textarea", { id: "rf-paste", rows: "2",
    placeholder: "drop or paste a config.json or a measured profile here" });
  const use = el("button", { type: "button", id: "rf-use" }, ["use pasted JSON"]);

  function build(models, hws, families) {
    field("model", "model", select(models));
    /* --family: a config.json of a model_type the reader does not know is
     * refused (its one line shows below) unless read as a known family */
    field("family", "read as family",
          select([""].concat(families), ["config's model_type"].concat(families)));
    field("hw", "hardware", select(hws));
    field("weight", "weights", select([""].concat(DTYPES), ["model's"].concat(DTYPES)));
    field("act", "activations", select(DTYPES));
    field("kv", "KV cache", select(DTYPES));
    field("phase", "phase", select(["decode", "prefill"]));
    field("batch", "batch B", number(1));
    field("context", "context s", number(1));
    field("tokens", "prompt tokens T", number(1));
    field("attn", "attention", select(["flash", "naive"]));
    field("tp", "TP", number(1));
    field("pp", "PP", number(1));
    panel.append(el("div", { class: "rf-row" }, [drop, use]),
                 el("div", { class: "rf-row" }, [copy, command]), summary, error, status);
    const set = (name, v) => { if (v !== undefined) ensure(controls[name], v); };
    set("model", init.model);
    set("hw", init["--hw"] || "h100-sxm");
    set("family", init["--family"] || "");
    set("weight", init["--weight-dtype"] || "");
    set("act", init["--act-dtype"] || "bf16");
    set("kv", init["--kv-dtype"] || "bf16");
    controls.batch.value = init["--batch"] || "1";
    controls.context.value = init["--context"] || "1024";
    controls.tokens.value = init["--tokens"] || "1024";
    controls.attn.value = init["--naive"] ? "naive" : "flash";
    controls.tp.value = init["--tp"] || "1";
    controls.pp.value = init["--pp"] || "1";
    for (const name in controls) {
      const c = controls[name];
      c.addEventListener(c.tagName === "SELECT" ? "change" : "input", recompute);
    }
  }

  /* Select v in s, adding it as an option when it is not one (a file). */
  function ensure(s, v) {
    if (s.tagName === "SELECT" && ![...s.options].some((o) => o.value === v))
      s.append(el("option", { value: v }, [v]));
    s.value = v;
  }

  /* ---- the command lines the controls say ---- */
  function args() {
    const c = controls, a = [c.model.value, "--hw", c.hw.value];
    if (c.family.value) a.push("--family", c.family.value);
    if (c.weight.value) a.push("--weight-dtype", c.weight.value);
    if (c.act.value !== "bf16" || init["--act-dtype"]) a.push("--act-dtype", c.act.value);
    if (c.kv.value !== "bf16" || init["--kv-dtype"]) a.push("--kv-dtype", c.kv.value);
    a.push("--batch", c.batch.value, "--context", c.context.value, "--tokens", c.tokens.value);
    if (c.attn.value === "naive") a.push("--naive");
    if (c.tp.value !== "1") a.push("--tp", c.tp.value);
    if (c.pp.value !== "1") a.push("--pp", c.pp.value);
    return a.concat(init.extra);
  }

  /* step's: the phase's own shape options, no report-only ones. */
  function stepArgs(phase) {
    const a = args(), out = [];
    for (let i = 0; i < a.length; i++) {
      if (a[i] in REPORT_ONLY) { i++; continue; }
      if (a[i] === (phase === "decode" ? "--tokens" : "--context")) { i++; continue; }
      out.push(a[i]);
    }
    return out.concat(["--phase", phase, "--json"]);
  }

  const quote = (s) => (/^[\w.,:=+\/@%-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'");
  const commandLine = () => ["roofline", "report"].concat(args(), ["-o", "report.html"])
    .map(quote).join(" ");

  function fail(text) {
    error.textContent = text;
    error.hidden = false;
    main.classList.add("rf-stale");
    window.rfExplorer.pending = false;
  }

  /* ---- one change ----
   * In two steps: at once, Figure 1 (`plot`, the report's own figure), the
   * step sections (`report --part step`: both phases' totals and operator
   * tables, the page's first sections) and the summary (`step --json`);
   * then, in a task of its own, the whole report (`report -o -`: the
   * other tables and figures) in place of the view. A newer change drops
   * an older one's second step. */
  let generation = 0;
  const firstLine = (r, cmd) => r.err.split("\n")[0] || "roofline " + cmd + ": exit " + r.code;

  function recompute(ev) {
    const t0 = ev && ev.timeStamp ? ev.timeStamp : performance.now();
    const gen = ++generation;
    command.textContent = commandLine();
    window.rfExplorer.pending = true;
    const plot = run(["roofline", "plot"].concat(args(), ["-o", "-"]));
    if (plot.code !== 0) return fail(firstLine(plot, "plot"));
    const part = run(["roofline", "report"].concat(args(), ["--part", "step", "-o", "-"]));
    if (part.code !== 0) return fail(firstLine(part, "report"));
    const phase = controls.phase.value;
    const st = run(["roofline", "step"].concat(stepArgs(phase)));
    if (st.code !== 0) return fail(firstLine(st, "step"));
    const svg = document.createElement("template");
    svg.innerHTML = plot.out.replace(/^<\?xml[^>]*\?>\s*/, "");
    view.querySelector("figure svg").replaceWith(svg.content.firstElementChild);
    /* the part's sections are the page's first ones, in the same order */
    const fresh = document.createElement("template");
    fresh.innerHTML = mainOf(part.out);
    const shown = view.querySelectorAll("section");
    fresh.content.querySelectorAll("section").forEach((s, i) => {
      if (shown[i]) shown[i].replaceWith(s);
    });
    view.querySelector("h1").textContent = fresh.content.querySelector("h1").textContent;
    document.title = view.querySelector("h1").textContent;
    error.hidden = true;
    showSummary(phase, st.out);
    window.rfExplorer.lastMs = performance.now() - t0;
    setTimeout(() => { if (gen === generation) wholeReport(t0); }, 0);
  }

  /* The page on standard output (this emscripten's file system loses a
   * file renamed over another, which an -o FILE would be from the second
   * change on), its <main> parsed once, straight into the view. */
  const mainOf = (page) => page.slice(page.indexOf("<main>") + 6, page.lastIndexOf("</main>"));
  function wholeReport(t0) {
    const rep = run(["roofline", "report"].concat(args(), ["-o", "-"]));
    if (rep.code !== 0) return fail(firstLine(rep, "report"));
    view.innerHTML = mainOf(rep.out);
    document.title = view.querySelector("h1").textContent;
    main.classList.remove("rf-stale");
    window.rfExplorer.pending = false;
    window.rfExplorer.wholeMs = performance.now() - t0;
    status.textContent = "explorer: Figure 1, totals and operators in " +
      window.rfExplorer.lastMs.toFixed(1) +
      " ms, the whole report in " + window.rfExplorer.wholeMs.toFixed(1) + " ms";
  }

  /* The phase's floor and tokens/s from step's JSON, the exact figures in
   * data-value (what a test compares with the native tool's). */
  function showSummary(phase, json) {
    const j = JSON.parse(json), t = j.layout || j; /* many devices: the layout's figures */
    summary.replaceChildren();
    const fig = (key, label, v, scale, unit) => {
      const b = el("b", { "data-key": key, "data-value": String(v) }, [fmt(v * scale) + unit]);
      summary.append(label + " ", b, "  ");
    };
    fig("floor_s", phase + " step floor", t.floor_s, 1e3, " ms");
    fig("tokens_per_s", "tokens/s ceiling", t.tokens_per_s, 1, "");
    summary.append(j.layout ? "on " + j.layout.devices + " devices" : j.regime);
    summary.dataset.json = json;
  }

  const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toPrecision(4));

  /* ---- files: a config.json (a model) or a measured profile (hardware) ---- */
  function useJSON(name, text) {
    let j;
    try {
      j = JSON.parse(text);
    } catch (e) {
      fail(name + ": not JSON (" + e.message + ")");
      return;
    }
    const profile = j && typeof j === "object" &&
      ("bandwidth_bytes_per_s" in j || "peak_flops_per_s" in j);
    writeFile(name, text);
    ensure(profile ? controls.hw : controls.model, name);
    recompute();
  }
  function readDropped(file) {
    const r = new FileReader();
    r.onload = () => useJSON(file.name.replace(/[^\w.-]/g, "_") || "dropped.json", r.result);
    r.readAsText(file);
  }
  document.addEventListener("dragover", (ev) => ev.preventDefault());
  document.addEventListener("drop", (ev) => {
    ev.preventDefault();
    [...ev.dataTransfer.files].forEach(readDropped);
  });
  use.addEventListener("click", () => {
    let n = 1;
    while ([...controls.model.options, ...controls.hw.options].some((o) => o.value ===
           "pasted-" + n + ".json")) n++;
    useJSON("pasted-" + n + ".json", drop.value);
  });

  copy.addEventListener("click", () => {
    const text = commandLine();
    const done = () => { status.textContent = "explorer: command line copied"; };
    if (navigator.clipboard && navigator.clipboard.writeText)
      navigator.clipboard.writeText(text).then(done, () => legacyCopy(text, done));
    else legacyCopy(text, done);
  });
  function legacyCopy(text, done) {
    const t = el("textarea");
    t.value = text;
    document.body.append(t);
    t.select();
    if (document.execCommand("copy")) done();
    else status.textContent = "explorer: select the command line above to copy it";
    t.remove();
  }

  /* the page as written moves into a view the panel sits above */
  const view = el("div", { id: "rf-view" });
  view.append(...main.childNodes);
  main.append(panel, view);
  panel.append(status);
  window.rfExplorer = { run: (argv) => run(argv), args: () => args(), module: () => mod,
                        lastMs: null, wholeMs: null, pending: false, ready: false };
  createRoofline()
    .then((m) => {
      mod = m;
      state.files.forEach((f) => writeFile(f.path, f.text));
      const list = (cmd) => {
        const r = run(["roofline", cmd, "--json"]);
        return r.code ? {} : JSON.parse(r.out);
      };
      const models = list("models"), hws = list("hw");
      const names = (j, key) => (j[key] || []).map((x) => x.name);
      const families = models.known_families ? models.known_families.split(", ") : [];
      panel.replaceChildren();
      build(names(models, "models"), names(hws, "hw"), families);
      command.textContent = commandLine();
      /* two quiet runs of the page's own command line: the engine compiles
       * the module's hot code optimized before the first real change */
      for (let i = 0; i < 2; i++) {
        run(["roofline", "report"].concat(args(), ["-o", "/dev/null"]));
        run(["roofline", "report"].concat(args(), ["--part", "step", "-o", "/dev/null"]));
      }
      const st = run(["roofline", "step"].concat(stepArgs(controls.phase.value)));
      if (st.code) fail(st.err.split("\n")[0]);
      else showSummary(controls.phase.value, st.out);
      status.textContent = "explorer: ready; each change recomputes the page in WebAssembly";
      window.rfExplorer.ready = true;
    }, (e) => { status.textContent = "explorer: the module did not load (" + e + ")"; });
})();
