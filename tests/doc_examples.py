#!/usr/bin/env python3
"""doc_examples.py - the documentation's examples, run as tests.

Every fenced block in README.md and docs/*.md that shows a command and its
output is preceded by a marker, an HTML comment (invisible once rendered):

    <!-- example -->
    ```
    $ roofline gemm 1 4096 6144
    GEMM Y[M,N] = X[M,K] W[K,N]
    ...the exact output...
    ```

A line starting with `$ roofline` starts a command (a trailing ` \\`
continues it on the next line); the lines after it, up to the next `$ `
line or the fence, are its expected output: stdout, then stderr, compared
whole (trailing spaces and trailing blank lines aside). The marker takes
attributes, shell-quoted (use single quotes around a regex):

    exit=N        every command of the block exits N (default 0)
    mask='RE'     machine-dependent text (measured figures, names, dates):
                  every match, in the doc and in the output alike, becomes
                  `...` before they are compared, so the doc can show a real
                  run and still pass on another machine
    elide='RE'    the same, but the doc shows `...` there: used to cut long,
                  variable parts (a run of consecutive `...` lines counts as
                  one, so a table of varying length elides to one line)
    file=PATH     a file the commands write (relative to the repository
                  root); it must equal the repository's copy byte for byte
    skip='WHY'    shown as a real run but not rerun (too slow, or needs a
                  GPU): counted as not run, with the reason

A line `<!-- json-keys: roofline ... --json -->` runs its command and
fails unless every key of the JSON it prints is named in backquotes in the
same section of the page (the section's key lists cannot fall behind).

Regexes are Python's, with ^ and $ matching at every line. A block whose
first line starts with `$ ` and has no marker fails: every example that
shows output is either run or says why not. README.md must also stay within
README_MAX_LINES lines (checked after an update too, by the next run).

The commands run from a scratch folder that links every top-level entry of
the repository except docs/ (an empty folder there), so a relative path such
as tests/data/models/deepseek-v3.json works and `-o docs/figure.svg` writes
into the scratch folder, never the repository. The blocks of one file share
that folder, in order (one example may write lab.json, the next read it).
The environment is PATH, HOME (the scratch folder), LC_ALL=C and TZ=UTC.

usage: doc_examples.py [--update] ROOFLINE ROOT [FILE.md...]
  --update  rewrite the output (and exit=) of every example that fails, and
            each file=, from a fresh run, in place (an example that passes,
            masked figures included, is left as it is); review with git diff
Prints a diff for each failure and closes with 'N passed, N failed'.
"""
import difflib
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

README_MAX_LINES = 250  # the README stays a ten-minute read; the rest lives in docs/
MARKER = re.compile(r"^\s*<!--\s*example\b(.*?)-->", re.S)  # a marker opens its line
FENCE = re.compile(r"^(```+|~~~+)")
TIMEOUT_S = 300


class DocError(Exception):
    pass


def parse_attrs(text, where):
    attrs = {"exit": 0, "mask": [], "elide": [], "file": [], "skip": None}
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise DocError(f"{where}: marker: {e}")
    for w in words:
        key, eq, val = w.partition("=")
        if not eq or key not in attrs:
            raise DocError(f"{where}: marker: unknown attribute '{w}' "
                           "(exit=, mask=, elide=, file=, skip=)")
        if key == "exit":
            if not val.isdigit():
                raise DocError(f"{where}: marker: exit must be a number, not '{val}'")
            attrs["exit"] = int(val)
        elif key in ("mask", "elide"):
            try:
                attrs[key].append(re.compile(val, re.M))
            except re.error as e:
                raise DocError(f"{where}: marker: {key}='{val}': {e}")
        elif key == "file":
            attrs["file"].append(val)
        else:
            attrs["skip"] = val
    return attrs


def parse_block(lines, where):
    """Split a block's lines into [command, its lines as written, expected output]."""
    cmds = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd, raw = line[2:], [line]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
                raw.append(lines[i])
            cmds.append([cmd, raw, []])
        elif not cmds:
            raise DocError(f"{where}: an example must start with a '$ roofline ...' line")
        else:
            cmds[-1][2].append(line)
        i += 1
    for cmd, _, _ in cmds:
        if not cmd.startswith("roofline ") and cmd != "roofline":
            raise DocError(f"{where}: only roofline commands run: '$ {cmd}'")
    return cmds


def find_examples(path, rel):
    """The file's lines and its marked blocks; raise on an unmarked example."""
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    examples, pending = [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m is None and re.match(r"\s*<!--\s*example\b", line):
            # a marker spread over several lines
            j = i
            chunk = line
            while "-->" not in chunk and j + 1 < len(lines):
                j += 1
                chunk += "\n" + lines[j]
            m = MARKER.match(chunk)
            if m is None:
                raise DocError(f"{rel}:{i + 1}: unterminated example marker")
            pending = (i, j, parse_attrs(m.group(1), f"{rel}:{i + 1}"))
            i = j + 1
            continue
        if m is not None:
            pending = (i, i, parse_attrs(m.group(1), f"{rel}:{i + 1}"))
            i += 1
            continue
        f = FENCE.match(line)
        if f is None:
            if pending and line.strip():
                raise DocError(f"{rel}:{pending[0] + 1}: an example marker must be "
                               "followed by a fenced block")
            i += 1
            continue
        close = f.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith(close):
            j += 1
        body = lines[i + 1:j]
        where = f"{rel}:{i + 2}"
        if pending is not None:
            examples.append({"where": where, "marker": (pending[0], pending[1]),
                             "attrs": pending[2], "body": (i + 1, j),
                             "cmds": parse_block(body, where)})
            pending = None
        elif body and body[0].startswith("$ "):
            raise DocError(f"{where}: unmarked example (put <!-- example --> before "
                           "the fence, or <!-- example skip='why' -->)")
        i = j + 1
    return lines, examples


def normalize(text, regexes):
    for rx in regexes:
        text = rx.sub("...", text)
    out = []
    for line in text.split("\n"):
        line = line.rstrip()
        if out and line.strip() == "..." and out[-1] == line:
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out


def make_scratch(root):
    scratch = tempfile.mkdtemp(prefix="doc-examples-")
    for name in os.listdir(root):
        if name not in (".git", "docs"):
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    os.mkdir(os.path.join(scratch, "docs"))
    return scratch


def run(binary, cmd, scratch):
    argv = shlex.split(cmd)
    argv[0] = binary
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
           "LC_ALL": "C", "TZ": "UTC"}
    try:
        p = subprocess.run(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"(timed out after {TIMEOUT_S} s)"
    except OSError as e:
        return None, f"(could not run: {e})"
    out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    return p.returncode, out


def check_example(ex, binary, root, scratch, update):
    """Run one example. Returns (failures, new body lines or None, new exit)."""
    a = ex["attrs"]
    problems, new_body, exits = [], [], []
    for cmd, raw, want in ex["cmds"]:
        rc, got = run(binary, cmd, scratch)
        exits.append(rc)
        new_body.extend(raw)
        new_body.extend(normalize(got, a["elide"]))
        doc = normalize("\n".join(want), a["elide"] + a["mask"])
        out = normalize(got, a["elide"] + a["mask"])
        if rc != a["exit"]:
            problems.append(f"$ {cmd}: exit {rc}, the doc says {a['exit']}")
        if doc != out:
            diff = difflib.unified_diff(doc, out, "the doc", "roofline's output",
                                        lineterm="", n=2)
            problems.append(f"$ {cmd}: output differs\n" + "\n".join(diff))
    for path in a["file"]:
        made, kept = os.path.join(scratch, path), os.path.join(root, path)
        if not os.path.isfile(made):
            problems.append(f"file {path}: the commands did not write it")
            continue
        if update:
            shutil.copyfile(made, kept)
            continue
        new = open(made, "rb").read()
        old = open(kept, "rb").read() if os.path.isfile(kept) else b""
        if new != old:
            diff = difflib.unified_diff(
                old.decode("utf-8", "replace").split("\n"),
                new.decode("utf-8", "replace").split("\n"),
                path + " (repository)", path + " (written now)", lineterm="", n=1)
            problems.append(f"file {path} differs\n" + "\n".join(list(diff)[:40]))
    new_exit = exits[0] if exits and all(e == exits[0] for e in exits) else a["exit"]
    return problems, new_body, new_exit


JSON_KEYS = re.compile(r"^\s*<!--\s*json-keys:\s*(.*?)\s*-->")  # a line of its own
KEY_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def check_json_keys(lines, rel, binary, scratch):
    """Every <!-- json-keys: roofline ... --json --> runs its command; every
    key of the JSON it prints must be named in backquotes in the same
    section (from the heading above the marker to the next heading of that
    level or higher). Returns (passed, failures)."""
    passed, failures = 0, []
    for i, line in enumerate(lines):
        m = JSON_KEYS.match(line)
        if m is None:
            continue
        where, cmd = f"{rel}:{i + 1}", m.group(1)
        if not cmd.startswith("roofline "):
            failures.append(f"{where}: json-keys: only roofline commands run: '{cmd}'")
            continue
        top = next((j for j in range(i, -1, -1) if lines[j].startswith("#")), 0)
        level = len(lines[top]) - len(lines[top].lstrip("#"))
        end = next((j for j in range(i + 1, len(lines))
                    if lines[j].startswith("#") and
                    len(lines[j]) - len(lines[j].lstrip("#")) <= level), len(lines))
        named = set(KEY_NAME.findall("\n".join(lines[top:end])))
        rc, out = run(binary, cmd, scratch)
        try:
            doc = json.loads(out)
        except ValueError:
            failures.append(f"{where}: $ {cmd}: exit {rc}, not a JSON document")
            continue
        keys = set()

        def walk(v):
            if isinstance(v, dict):
                for k, x in v.items():
                    keys.add(k)
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        walk(doc)
        missing = sorted(keys - named)
        if missing:
            failures.append(f"{where}: $ {cmd}: keys the section does not name: "
                            + ", ".join(missing))
        else:
            passed += 1
    return passed, failures


def set_exit(marker_text, code):
    marker_text = re.sub(r"\s+exit=\d+", "", marker_text)
    if code:
        marker_text = re.sub(r"\s*-->", f" exit={code} -->", marker_text, count=1)
    return marker_text


def main(argv):
    update = False
    if argv and argv[0] == "--update":
        update, argv = True, argv[1:]
    if len(argv) < 2:
        sys.stderr.write("usage: doc_examples.py [--update] ROOFLINE ROOT [FILE.md...]\n")
        return 2
    binary, root = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    if not os.access(binary, os.X_OK):
        sys.stderr.write(f"doc_examples: {binary} is not an executable (build it first)\n")
        return 2
    files = argv[2:] or ([os.path.join(root, "README.md")] +
                         sorted(glob.glob(os.path.join(root, "docs", "*.md"))))
    passed = failed = skipped = updated = 0
    for path in files:
        rel = os.path.relpath(path, root)
        if rel == "README.md" and not update:
            n = len(open(path, encoding="utf-8").read().rstrip("\n").split("\n"))
            if n > README_MAX_LINES:
                print(f"FAIL README.md: {n} lines, at most {README_MAX_LINES} "
                      "(move the detail to a page of docs/)")
                failed += 1
        try:
            lines, examples = find_examples(path, rel)
        except DocError as e:
            print(f"FAIL {e}")
            failed += 1
            continue
        scratch = make_scratch(root)
        edits = []
        try:
            for ex in examples:
                where = ex["where"]
                if ex["attrs"]["skip"] is not None:
                    skipped += 1
                    continue
                problems, body, code = check_example(ex, binary, root, scratch, update)
                if update and problems:
                    edits.append((ex, body, code))
                    print(f"updated {where}: {ex['cmds'][0][0]}")
                elif update:
                    passed += 1
                elif problems:
                    failed += 1
                    print(f"FAIL {where}:")
                    for p in problems:
                        print("  " + p.replace("\n", "\n  "))
                else:
                    passed += 1
            ok, bad = check_json_keys(lines, rel, binary, scratch)
            passed += ok
            failed += len(bad)
            for p in bad:
                print("FAIL " + p)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if update and edits:
            for ex, body, code in reversed(edits):
                b0, b1 = ex["body"]
                lines[b0:b1] = body
                m0, m1 = ex["marker"]
                marker = set_exit("\n".join(lines[m0:m1 + 1]), code).split("\n")
                lines[m0:m1 + 1] = marker
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            updated += len(edits)
    if skipped:
        print(f"{skipped} not run (marked skip: recorded runs too slow to repeat or needing a GPU)")
    if update:
        print(f"{passed} up to date, {updated} updated, {failed} failed")
    else:
        print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
