#!/bin/sh
# The man page against the CLI and docs/cli.md. The build writes the page
# (man/gen_man.py: the prose of man/roofline.1.scd.in, the option lists
# from the built roofline's --help, which prints the parser's cli_opt
# tables); this checks the page it wrote, with a parser of its own, so a
# page that fell behind --help (a stale build, a generator fault) or prose
# that names a gone option fails:
#
#   - each command `roofline --help` lists has a "## NAME" section under
#     "# COMMANDS" (NAME is "bench gemm" where the usage line names a
#     subcommand), and every section there is a command;
#   - each option of the command's own list is in its section, each of its
#     global options in "# GLOBAL OPTIONS";
#   - each option in a command's section is one that command takes, each in
#     GLOBAL OPTIONS a global one, each elsewhere one some command takes;
#   - each option line of --help is in the page whole: its names and
#     argument in the first line of its entry (the line starting "*--name*"
#     or "*-x*"), its help line in the tab-indented lines below;
#   - each exit code `roofline --help` lists is an entry of "# EXIT STATUS";
#   - docs/cli.md shows each command's --help as a run example
#     ("$ roofline NAME --help" in a block after a plain "<!-- example -->"
#     marker, which doc_examples compares whole with the binary's).
#
# usage: tests/man_options.sh ROOFLINE BUILD/man/roofline.1.scd docs/cli.md
set -u
rf=$1
page=$2
cli_md=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

[ -r "$page" ] || { echo "FAIL: cannot read $page (the build writes it: man/gen_man.py, with python3)"; exit 1; }
[ -r "$cli_md" ] || { echo "FAIL: cannot read $cli_md"; exit 1; }

# Options named in a text: --name, one a line, sorted, unique.
opts() { grep -o -- '--[a-z0-9][a-z0-9-]*' | sort -u; }

# agree MUST MAY NAMED WHERE WHO: every option in the file MUST is in the
# file NAMED (what the page's section WHERE names), and every option NAMED
# holds is in MAY (what WHO lists).
agree() {
    for o in $(comm -23 "$1" "$3"); do fail "$page: $4 does not name $o ($5 lists it)"; done
    for o in $(comm -13 "$2" "$3"); do fail "$page: $4 names $o, which $5 does not list"; done
}

# The page split by section: $tmp/sec/cmd_<name> (spaces as _), global,
# other; each holds that section's text.
mkdir "$tmp/sec"
awk -v dir="$tmp/sec" '
    /^; / { next }                                   # scdoc comment
    /^# / { top = substr($0, 3); part = "" }
    /^## / { part = substr($0, 4) }
    {
        if (top == "COMMANDS" && part != "") { f = part; gsub(/ /, "_", f); f = "cmd_" f }
        else if (top == "GLOBAL OPTIONS") f = "global"
        else if (top == "EXIT STATUS") f = "exit"
        else f = "other"
        if ($0 ~ /^##? /) next
        print > (dir "/" f)
    }' "$page"
touch "$tmp/sec/global" "$tmp/sec/other" "$tmp/sec/exit"

# entries HELP_LINES SECTION WHERE WHO: each option line of --help in the
# file HELP_LINES against the entries of the page's section file SECTION:
# "--name ARG" in the entry's first line, the help line in the entry.
# --help prints "  %-26s %s", so a word one blank after the names, before
# column 29, is the argument. Markup (* _ \) and runs of blanks do not count.
entries() {
    awk -v where="$3" -v who="$4" '
        function norm(t) { gsub(/[*_\\]/, "", t); gsub(/[ \t]+/, " ", t); sub(/^ /, "", t); return t }
        FNR == NR {
            if (!match($0, /^  (-[A-Za-z0-9], )?--[a-z0-9][a-z0-9-]*/)) next
            left = substr($0, 3, RLENGTH - 2); rest = substr($0, RLENGTH + 1)
            name = left; sub(/^.*, /, "", name)
            if (rest ~ /^ [^ ]/ && RLENGTH + 1 < 29) {
                rest = substr(rest, 2); arg = rest; sub(/ .*/, "", arg)
                left = left " " arg; rest = substr(rest, length(arg) + 1)
            }
            head[name] = norm(left); help[name] = norm(rest)
            next
        }
        /^\*/ {
            cur = ""
            line = $0
            while (match(line, /\*--[a-z0-9][a-z0-9-]*\*/)) {
                o = substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH)
                cur = cur " " o; first[o] = norm($0); entry[o] = first[o]
            }
            next
        }
        /^\t/ && cur != "" {
            k = split(cur, os, " ")
            for (i = 1; i <= k; i++) entry[os[i]] = norm(entry[os[i]] " " $0)
            next
        }
        { cur = "" }
        END {
            for (o in head) {
                if (!(o in entry)) { print where " has no entry *" o "* (" who " lists it)"; continue }
                if (index(first[o], head[o]) == 0)
                    print where ": the entry *" o "* does not start \"" head[o] "\" (" who " does)"
                if (index(entry[o], help[o]) == 0)
                    print where ": the entry *" o "* does not say \"" help[o] "\" (" who " does)"
            }
        }' "$1" "$2" | sort > "$tmp/efail"
    while IFS= read -r line; do fail "$page: $line"; done < "$tmp/efail"
}

top_help=$("$rf" --help) || { echo "FAIL: $rf --help"; exit 1; }
commands=$(printf '%s\n' "$top_help" | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
[ -n "$commands" ] || { echo "FAIL: no commands in '$rf --help'"; exit 1; }

: > "$tmp/all_opts"
: > "$tmp/global_opts"
: > "$tmp/sections_expected"
: > "$tmp/global_lines"
for c in $commands; do
    help=$("$rf" "$c" --help 2>&1) || { fail "'roofline $c --help' failed"; continue; }
    # A lowercase word after the command on the usage line is a subcommand
    # (usage: roofline bench gemm MODEL ...): the page documents that one.
    sub=$(printf '%s\n' "$help" | awk 'NR == 1 && $4 ~ /^[a-z][a-z0-9-]*$/ { print $4 }')
    name=$c
    if [ -n "$sub" ]; then
        name="$c $sub"
        help=$("$rf" "$c" "$sub" --help 2>&1) || { fail "'roofline $name --help' failed"; continue; }
    fi
    key=$(printf '%s' "$name" | tr ' ' '_')
    echo "cmd_$key" >> "$tmp/sections_expected"
    printf '%s\n' "$help" | awk '/^global options:/ { on = 1 } on' | opts > "$tmp/g"
    printf '%s\n' "$help" | opts > "$tmp/takes"
    comm -23 "$tmp/takes" "$tmp/g" > "$tmp/own"
    cat "$tmp/g" >> "$tmp/global_opts"
    cat "$tmp/takes" >> "$tmp/all_opts"

    sec=$tmp/sec/cmd_$key
    if [ ! -f "$sec" ]; then
        fail "$page: no '## $name' section under '# COMMANDS' for 'roofline $name'"
        continue
    fi
    opts < "$sec" > "$tmp/page_sec"
    agree "$tmp/own" "$tmp/takes" "$tmp/page_sec" "'## $name'" "'roofline $name --help'"
    printf '%s\n' "$help" | awk '/^global options:/ { exit } 1' > "$tmp/own_lines"
    entries "$tmp/own_lines" "$sec" "'## $name'" "'roofline $name --help'"
    printf '%s\n' "$help" | awk '/^global options:/ { on = 1 } on' >> "$tmp/global_lines"
done

sort -u -o "$tmp/global_opts" "$tmp/global_opts"
printf '%s\n' "$top_help" | opts >> "$tmp/all_opts" # --help, --version
sort -u -o "$tmp/all_opts" "$tmp/all_opts"

opts < "$tmp/sec/global" > "$tmp/page_global"
agree "$tmp/global_opts" "$tmp/global_opts" "$tmp/page_global" "'# GLOBAL OPTIONS'" \
      "the commands' 'global options:'"
sort -u -o "$tmp/global_lines" "$tmp/global_lines"
entries "$tmp/global_lines" "$tmp/sec/global" "'# GLOBAL OPTIONS'" "'global options:'"
cat "$tmp/sec/other" "$tmp/sec/exit" | opts > "$tmp/page_other"
for o in $(comm -13 "$tmp/all_opts" "$tmp/page_other"); do
    fail "$page: names $o, which no command takes"
done

# Sections under COMMANDS that are no command.
sort -u -o "$tmp/sections_expected" "$tmp/sections_expected"
ls "$tmp/sec" | grep '^cmd_' | sort > "$tmp/sections_page"
for s in $(comm -13 "$tmp/sections_expected" "$tmp/sections_page"); do
    fail "$page: '## $(printf '%s' "${s#cmd_}" | tr _ ' ')' is no command (or subcommand) that 'roofline --help' lists"
done

# Exit codes: "exit codes: 0 ok, 1 runtime failure, ..." to the end of the
# top-level help; each code is a "*N*" entry of EXIT STATUS.
codes=$(printf '%s\n' "$top_help" | awk '/exit codes:/ { on = 1 } on' |
        grep -o '\(^\|[ :,]\)[0-9][0-9]* [a-z]' | grep -o '[0-9][0-9]*' | sort -u)
[ -n "$codes" ] || fail "no exit codes found in 'roofline --help'"
for n in $codes; do
    grep -q "^\*$n\*\$" "$tmp/sec/exit" || fail "$page: '# EXIT STATUS' has no entry *$n*"
done

# docs/cli.md: each command's --help run as an example, its marker plain
# (no mask, elide or skip that would hide a line from doc_examples) or
# eliding only the global options (gemm's example shows them whole).
awk '/^<!-- example -->$/ || /^<!-- example elide=.\^global options:\[\\s\\S\]\*. -->$/ { plain = 1; next }
     /^<!--/ { plain = 0 }
     /^```/ { if (inblock) { inblock = 0; plain = 0 } else inblock = 1; next }
     inblock && plain && /^\$ roofline / { print }' "$cli_md" > "$tmp/md_runs"
for c in $(cat "$tmp/sections_expected"); do
    name=$(printf '%s' "${c#cmd_}" | tr _ ' ')
    grep -qxF "\$ roofline ${name%% *} --help" "$tmp/md_runs" ||
        fail "$cli_md: no run example '\$ roofline ${name%% *} --help' (after a plain '<!-- example -->')"
done

if [ "$fails" -ne 0 ]; then
    echo "$fails problem(s): the man page, the CLI and docs/cli.md disagree. The page is" \
         "built from the option tables (man/gen_man.py): rebuild it (make); edit the" \
         "prose and notes in man/roofline.1.scd.in, the options in the cli_opt tables," \
         "and docs/cli.md with scripts/doc-examples-update.sh"
    exit 1
fi
echo "ok: $(echo "$commands" | wc -w) commands, $(wc -l < "$tmp/all_opts") options, exit codes $(echo $codes) all in $page; every --help in $cli_md"
