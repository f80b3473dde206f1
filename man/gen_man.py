#!/usr/bin/env python3
"""gen_man.py - roofline(1) from the option tables the parser reads.

The man page is the prose of man/roofline.1.scd.in with the option lists
spliced in from the built binary's --help, which prints the cli_opt tables
themselves: each option's names, argument and help line come from there,
so the page, `--help` and docs/cli.md (whose --help examples the tests run)
say the same. The template holds what no table does:

  - "## NAME" under "# COMMANDS" is one command, named as
    `roofline NAME --help` is run ("bench gemm"); its synopsis and prose
    are the template's, and the command's options follow them, in the
    table's order;
  - "# GLOBAL OPTIONS": its prose, then the options under every command's
    "global options:";
  - a note: an entry of the template whose first line names options only
    (`*--draft*` or `*--tp*, *--pp*`), its tab-indented lines what the
    option does beyond its help line. The option's entry gets those lines
    after its help line; options a note names together share one entry.
    Notes come after a section's prose; one naming an option the command
    does not take, or an option twice, fails (and so the build).

Everything else is copied as it is. A section of the template that is no
command, and a command `roofline --help` lists with no section, fail.

usage: man/gen_man.py ROOFLINE TEMPLATE OUT.scd
"""
import os
import re
import subprocess
import sys

OPT_LINE = re.compile(r"  ((?:-[A-Za-z0-9], )?--[a-z0-9][a-z0-9-]*)(.*)$")
# --help prints "  %-26s %s": an option's names and argument, padded to 26
# columns, then its help line, which so starts at column 29 when they fit.
HELP_COL = 2 + 26 + 1
NOTE_NAME = re.compile(r"\*(--[a-z0-9][a-z0-9-]*)\*")


class Fail(Exception):
    pass


def run_help(rf, args):
    p = subprocess.run([rf] + args + ["--help"], capture_output=True, text=True)
    if p.returncode != 0:
        raise Fail("'roofline %s --help' exited %d" % (" ".join(args), p.returncode))
    return p.stdout


def parse_opt(line):
    """'  -n, --output-tokens N   output tokens ...' -> (names, arg, help)."""
    m = OPT_LINE.match(line)
    if not m:
        raise Fail("not an option line of --help: %r" % line)
    names, rest = m.group(1), m.group(2)
    # One blank, then a word starting before the help column: the argument
    # (the padding leaves two or more blanks where there is none).
    if rest.startswith(" ") and not rest.startswith("  ") and 2 + len(names) + 1 < HELP_COL:
        arg, _, text = rest[1:].partition(" ")
    else:
        arg, text = "", rest
    text = text.strip()
    if not text:
        raise Fail("no help line: %r" % line)
    return names, arg, text


def parse_help(text, who):
    """A command's --help -> (own options, global options), each a list."""
    lists = {"options:": [], "global options:": []}
    cur = None
    for line in text.splitlines():
        if line in lists:
            cur = lists[line]
        elif cur is not None and line.strip():
            cur.append(parse_opt(line))
    if cur is None:
        raise Fail("%s: no 'options:' list" % who)
    return lists["options:"], lists["global options:"]


def long_name(names):
    return names.split(", ")[-1]


def lit(text):
    """Text for scdoc with its markup characters literal."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")


def esc(text):
    """A help line for scdoc: literal, its options in bold."""
    return re.sub(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", r"*\1*", lit(text))


def entry_head(names, arg):
    """'-n, --output-tokens', 'N|DIST' -> '*-n*, *--output-tokens* _N_|_DIST_'."""
    head = ", ".join("*%s*" % n for n in names.split(", "))
    if arg:
        head += " " + "|".join("_%s_" % lit(p) for p in arg.split("|"))
    return head


def commands(rf):
    top = run_help(rf, [])
    names, on = [], False
    for line in top.splitlines():
        if line == "commands:":
            on = True
        elif on and not line.strip():
            break
        elif on:
            names.append(line.split()[0])
    if not names:
        raise Fail("no commands in 'roofline --help'")
    return names


def tables(rf):
    """{section name: own options} and the global options, from --help."""
    own, glob = {}, []
    for c in commands(rf):
        text = run_help(rf, [c])
        # A lowercase word after the command on the usage line is a
        # subcommand (usage: roofline bench gemm MODEL ...): its options.
        words = text.split("\n", 1)[0].split()
        name = c
        if len(words) > 3 and re.fullmatch(r"[a-z][a-z0-9-]*", words[3]):
            name = "%s %s" % (c, words[3])
            text = run_help(rf, [c, words[3]])
        mine, g = parse_help(text, "'roofline %s --help'" % name)
        own[name] = mine
        for o in g:
            same = [p for p in glob if p[0] == o[0]]
            if not same:
                glob.append(o)
            elif same[0] != o:
                raise Fail("global option %s reads differently in 'roofline %s --help'"
                           % (o[0], name))
    return own, glob


def options(opts, notes, where):
    """The scdoc entries of a table's options, each with its note."""
    by_name = {long_name(o[0]): o for o in opts}
    group_of = {}
    for names, lines in notes:
        for n in names:
            if n not in by_name:
                raise Fail("%s: a note names %s, which its --help does not list" % (where, n))
            if n in group_of:
                raise Fail("%s: %s has two notes" % (where, n))
            group_of[n] = (names, lines)
    out, done = [], set()
    for o in opts:
        n = long_name(o[0])
        if n in done:
            continue
        names, lines = group_of.get(n, ([n], []))
        group = [p for p in opts if long_name(p[0]) in names]
        done.update(long_name(p[0]) for p in group)
        out.append(", ".join(entry_head(p[0], p[1]) for p in group))
        for p in group:
            lead = "*%s*: " % long_name(p[0]) if len(group) > 1 else ""
            out.append("\t" + lead + esc(p[2]))
        if lines:
            out.append("")  # the note a paragraph of its own, as indented
        out += lines
        out.append("")
    return out


def splice(template, own, glob, tpl_name):
    """The template's lines with every option list in its place."""
    out, seen = [], set()
    top, sec = None, None   # the "# " part, the section whose list is due
    body, notes = [], []

    def close():
        if sec is None:
            return
        opts = glob if sec == "" else own[sec]
        where = "%s: '%s'" % (tpl_name, "# GLOBAL OPTIONS" if sec == "" else "## " + sec)
        out.extend(body)
        if opts:
            if out and out[-1] != "":
                out.append("")
            out.extend(options(opts, notes, where))
        elif notes:
            raise Fail("%s: notes, but the command has no options of its own" % where)

    for line in template:
        if line.startswith("# ") or line.startswith("## "):
            close()
            body, notes, sec = [], [], None
            if line.startswith("# "):
                top = line[2:]
                if top == "GLOBAL OPTIONS":
                    sec = ""
            elif top == "COMMANDS":
                sec = line[3:]
                if sec not in own:
                    raise Fail("%s: '%s' is no command 'roofline --help' lists" % (tpl_name, line))
                seen.add(sec)
            out.append(line)
            continue
        if sec is None:
            out.append(line)
        elif line.startswith("*-"):
            names = NOTE_NAME.findall(line)
            if not names or re.sub(r", ", "", NOTE_NAME.sub("", line)).strip():
                raise Fail("%s: a note's first line names options only, as *--name*: %r"
                           % (tpl_name, line))
            notes.append((names, []))
        elif notes and (line.startswith("\t") or line.startswith(";")):
            notes[-1][1].append(line)
        elif notes and line.strip():
            raise Fail("%s: '%s': text after the notes (the prose goes before them): %r"
                       % (tpl_name, sec or "GLOBAL OPTIONS", line))
        elif not notes:
            body.append(line)
    close()
    for name in own:
        if name not in seen:
            raise Fail("%s: no '## %s' under '# COMMANDS' for 'roofline %s'"
                       % (tpl_name, name, name))
    while out and out[-1] == "":
        out.pop()
    return out


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: gen_man.py ROOFLINE TEMPLATE OUT.scd\n")
        return 2
    rf, tpl, dst = argv[1:]
    try:
        with open(tpl, encoding="utf-8") as f:
            template = f.read().split("\n")
        own, glob = tables(rf)
        lines = splice(template, own, glob, os.path.basename(tpl))
    except (Fail, OSError) as e:
        sys.stderr.write("gen_man.py: %s\n" % e)
        return 1
    # scdoc wants the title first; the note on where this came from after it
    lines[1:1] = ["",
                  "; Generated by man/gen_man.py from man/roofline.1.scd.in and the",
                  "; option tables (roofline's --help): edit those, not this file."]
    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
