#!/usr/bin/env python3
"""check_layers.py - the layers hold at the file level.

    core  <-  io, report, measure  <-  cuda, mpi, view  <-  cli  <-  lab

usage: check_layers.py ROOT

Scans the #include lines of src/<layer>/*.{c,h,cu}, include/roofline/*.h,
cli/*.{c,h} and cli/lab/*.{c,h} under ROOT and fails (exit 1, one line per
problem) on:

  1. an include against the layers. A file may include headers of its own
     layer and of the layers below it:
         core     core
         io       core, io
         report   core, report
         measure  core, measure        (src/kernels is part of measure)
         cuda     core, measure, cuda
         mpi      core, measure, mpi
         view     core, io, report, measure, view   (results as tables)
         cli      every layer but the lab
         lab      every layer          (cli/lab: roofline-lab's alone)
     A private header (src/<layer>/x.h, cli/x.h) is of its folder's layer. A
     public header (include/roofline/rf_x.h) is of the layer PUBLIC below
     names, or else of the layer whose src/ folder implements the functions
     it declares (the lowest, when they are in several: see 2); a header
     with neither is a problem to fix here.
  2. a public header declaring a function implemented in another layer's
     folder (a core header declaring an io reader, say): the header's layer
     must be where its functions live.
  3. a cycle of includes between files.
  4. a cycle of calls between the .c files of a folder: a.c calls a
     function b.c defines and b.c (directly or through others of the
     folder) calls one a.c defines. Such files are one unit split in two;
     what both use belongs in a third file they share.

Exit 0 when none is found, printing one summary line.
"""
import os
import re
import sys

LAYERS = ("core", "io", "report", "measure", "cuda", "mpi", "view", "cli", "lab")
ALLOWED = {
    "core": {"core"},
    "io": {"core", "io"},
    "report": {"core", "report"},
    "measure": {"core", "measure"},
    "cuda": {"core", "measure", "cuda"},
    "mpi": {"core", "measure", "mpi"},
    "view": {"core", "io", "report", "measure", "view"},
    "cli": set(LAYERS) - {"lab"},  # roofline links no lab
    "lab": set(LAYERS),
}
SRC_LAYER = {"core": "core", "io": "io", "report": "report", "measure": "measure",
             "kernels": "measure", "cuda": "cuda", "mpi": "mpi", "view": "view"}

# Public headers whose layer is not read off their functions: those that
# declare none (types, macros, inline helpers). Every other header is
# placed by where its functions are implemented.
PUBLIC = {
    "rf_measure.h": "measure",  # the umbrella of rf_measure_*.h
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
# A declaration in a header: a line at column 0 naming rf_x( (not a typedef,
# not a macro, not static inline).
DECL = re.compile(r"^(?!typedef|static|#|\s|/\*|\*)[A-Za-z_][\w\s\*]*?\b(rf_\w+)\s*\(")
# The first line of a function definition in a .c file, at column 0.
DEF = re.compile(r"^(?!typedef|static|#|\s|/\*|\*|extern)[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\(")
IDENT = re.compile(r"[A-Za-z_]\w*")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(text):
    """Comments and string literals blanked, line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def files_of(root):
    """(path relative to root, layer or None for public headers)."""
    found = []
    src = os.path.join(root, "src")
    for d in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        if d not in SRC_LAYER:
            continue
        for f in sorted(os.listdir(os.path.join(src, d))):
            if f.endswith((".c", ".h", ".cu")):
                found.append((f"src/{d}/{f}", SRC_LAYER[d]))
    pub = os.path.join(root, "include", "roofline")
    for f in sorted(os.listdir(pub)) if os.path.isdir(pub) else []:
        if f.endswith(".h"):
            found.append((f"include/roofline/{f}", None))
    for d, layer in (("cli", "cli"), ("cli/lab", "lab")):
        folder = os.path.join(root, d)
        for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if f.endswith((".c", ".h")):
                found.append((f"{d}/{f}", layer))
    return found


def definitions(text):
    """Non-static functions a .c file defines: a line at column 0 naming
    f( whose brace opens at column 0 before any line ends in ';'."""
    names, lines = set(), text.split("\n")
    for i, line in enumerate(lines):
        m = DEF.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        for nxt in lines[i: i + 12]:
            if nxt.startswith("{"):
                names.add(m.group(1))
                break
            if nxt.rstrip().endswith(";"):
                break
    return names


def main(root):
    files = files_of(root)
    texts = {p: strip_comments(read(os.path.join(root, p))) for p, _ in files}
    raw = {p: read(os.path.join(root, p)) for p, _ in files}
    by_name = {}
    for p, _ in files:
        by_name.setdefault(os.path.basename(p), []).append(p)
    problems = {"includes against the layers": [], "headers out of their layer": [],
                "include cycles": [], "call cycles": []}

    # where each function is defined, by layer
    defined_in = {}
    for p, layer in files:
        if p.endswith((".c", ".cu")) and p.startswith("src/"):
            for name in definitions(texts[p]):
                defined_in.setdefault(name, set()).add((layer, p))

    # the layer of every public header
    layer_of = dict((p, l) for p, l in files if l)
    for p, _ in files:
        if l := layer_of.get(p):
            continue
        base = os.path.basename(p)
        decls = {m.group(1) for line in texts[p].split("\n") if (m := DECL.match(line))}
        homes = {}
        for d in sorted(decls):
            for layer, where in sorted(defined_in.get(d, ())):
                homes.setdefault(layer, []).append((d, where))
        if base in PUBLIC:
            layer = PUBLIC[base]
        elif len(homes) == 1:
            layer = next(iter(homes))
        elif not homes:
            problems["headers out of their layer"].append(
                f"{p}: declares no function implemented in src/; give its layer in PUBLIC "
                f"({os.path.relpath(__file__, root) if os.path.isabs(__file__) else __file__})")
            continue
        else:  # mixed: the lowest, so the message names what does not belong
            layer = min(homes, key=LAYERS.index)
        layer_of[p] = layer
        for other, where in sorted(homes.items()):
            if other != layer:
                d, at = where[0]
                problems["headers out of their layer"].append(
                    f"{p} ({layer}) declares {d}, implemented in {at} ({other}): split the "
                    f"header so each part lives in its layer")

    # resolve includes; check the layers
    graph = {p: set() for p, _ in files}
    for p, layer in files:
        here = os.path.dirname(p)
        for n, line in enumerate(raw[p].split("\n"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            target = None
            if inc.startswith("roofline/"):
                target = "include/roofline/" + inc[len("roofline/"):]
            elif os.path.normpath(os.path.join(here, inc)) in texts:
                target = os.path.normpath(os.path.join(here, inc))
            elif "/" not in inc and len(by_name.get(inc, [])) == 1:
                target = by_name[inc][0]
            if target not in texts:
                continue  # a system or third-party header
            graph[p].add(target)
            me = layer_of.get(p)
            them = layer_of.get(target)
            if me and them and them not in ALLOWED[me]:
                problems["includes against the layers"].append(
                    f"{p}:{n}: {me} includes {inc} ({them}); {me} may include "
                    f"{', '.join(sorted(ALLOWED[me]))} only")

    for cycle in cycles(graph):
        problems["include cycles"].append("include cycle: " + " -> ".join(cycle + cycle[:1]))

    # calls between the .c files of one folder; a name defined by two files
    # is one of alternatives linked one at a time (cuda_stub.c or the real
    # backend), no call between them
    defined_in = {n: w for n, w in defined_in.items() if len(w) == 1}
    calls = {}
    for p, _ in files:
        if not p.endswith((".c", ".cu")):
            continue
        idents = set(IDENT.findall(texts[p]))
        calls[p] = set()
        for name in idents:
            for _, q in defined_in.get(name, ()):
                if q != p and os.path.dirname(q) == os.path.dirname(p):
                    calls[p].add(q)
    cli_defs = {}
    for p in calls:
        if p.startswith("cli/"):
            for name in definitions(texts[p]):
                cli_defs.setdefault(name, set()).add(p)
    cli_defs = {n: w for n, w in cli_defs.items() if len(w) == 1}
    for p in calls:
        if p.startswith("cli/"):
            for name in set(IDENT.findall(texts[p])):
                calls[p] |= {q for q in cli_defs.get(name, ()) if q != p}
    for comp, cycle in cycles(calls, members=True):
        why = []
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            used = sorted(n for n in set(IDENT.findall(texts[a]))
                          if any(q == b for _, q in defined_in.get(n, ()))
                          or b in cli_defs.get(n, ()))
            why.append(f"{os.path.basename(a)} calls {used[0]} of {os.path.basename(b)}")
        problems["call cycles"].append(
            f"call cycle among {', '.join(comp)}: " + "; ".join(why))

    total = 0
    for kind, lines in problems.items():
        for line in lines:
            print(line)
        total += len(lines)
    if total:
        parts = [f"{k} {len(v)}" for k, v in problems.items() if v]
        print(f"check_layers: FAILED: {', '.join(parts)}")
        return 1
    print(f"check_layers: {len(files)} files, {sum(len(v) for v in graph.values())} includes, "
          f"no include against the layers, no include or call cycle")
    return 0


def cycles(graph, members=False):
    """The strongly connected components of more than one node (Tarjan),
    each as a path through it (with members: (the component, the path)),
    in a stable order."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comp.sort()
                path = path_through(graph, comp)
                out.append((comp, path) if members else path)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def path_through(graph, comp):
    """A cycle from comp[0] back to itself within comp (breadth first)."""
    start, inside = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: check_layers.py ROOT")
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
