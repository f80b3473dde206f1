/* scan.c - the option scanner (scan.h): getopt_long's results with no
 * process-wide state. */
#include <string.h>

#include "scan.h"

size_t cli_opts_count(const cli_opt *o)
{
    size_t n = 0;
    while (o && o[n].name)
        n++;
    return n;
}

static void reverse(char **a, int from, int to)
{
    for (to--; from < to; from++, to--) {
        char *t = a[from];
        a[from] = a[to];
        a[to] = t;
    }
}

/* The k elements at s->next join the options, before the operands passed
 * over (a rotation: both groups keep their order). */
static void take(cli_scan *s, int k)
{
    reverse(s->argv, s->opts_end, s->next);
    reverse(s->argv, s->next, s->next + k);
    reverse(s->argv, s->opts_end, s->next + k);
    s->opts_end += k;
    s->next += k;
}

/* The option named by the len bytes at name, into f: an exact name (the
 * command's groups first, then the globals, as getopt_long's table was
 * ordered), else the one option the bytes begin; false for none or
 * several. */
static bool by_name(const cli_scan *s, const char *name, size_t len, cli_scanned *f)
{
    const cli_opt_group global_group[2] = {{s->globals, NULL, NULL}, {0}};
    size_t n_prefix = 0;
    for (int t = 0; t < 2; t++)
        for (const cli_opt_group *g = t ? global_group : s->groups; g && g->opts; g++)
            for (size_t i = 0; i < (t ? s->n_globals : cli_opts_count(g->opts)); i++) {
                const cli_opt *o = &g->opts[i];
                if (strncmp(o->name, name, len))
                    continue;
                *f = (cli_scanned){.opt = o, .group = t ? NULL : g};
                if (!o->name[len])
                    return true;
                n_prefix++;
            }
    return n_prefix == 1;
}

/* The option -c names, into f; false for none. */
static bool by_letter(const cli_scan *s, char c, cli_scanned *f)
{
    *f = (cli_scanned){.opt = c == 'h' ? s->help : c == 'o' ? s->output : NULL, .letter = c};
    for (const cli_opt_group *g = s->groups; !f->opt && g && g->opts; g++)
        for (const cli_opt *o = g->opts; !f->opt && o->name; o++)
            if (o->letter == c)
                f->opt = o, f->group = g;
    return f->opt != NULL;
}

/* f's value: the rest of its own element (inline; NULL for none), else the
 * next element, whatever it holds. */
static cli_scan_kind value_of(cli_scan *s, cli_scanned *f, const char *inline_value)
{
    if (inline_value) {
        f->value = inline_value;
        return CLI_SCAN_OPT;
    }
    if (s->next == s->argc)
        return CLI_SCAN_NO_VALUE;
    f->value = s->argv[s->next];
    take(s, 1);
    return CLI_SCAN_OPT;
}

/* The next letter of a run (-abc), its value the run's rest or the next
 * element. */
static cli_scan_kind next_letter(cli_scan *s, cli_scanned *f)
{
    if (!by_letter(s, *s->letters++, f)) { /* the element as typed: the run taken already */
        f->typed = s->argv[s->opts_end - 1];
        s->letters = NULL;
        return CLI_SCAN_UNKNOWN;
    }
    if (!f->opt->has_arg) {
        if (!*s->letters)
            s->letters = NULL;
        return CLI_SCAN_OPT;
    }
    const char *rest = s->letters;
    s->letters = NULL;
    return value_of(s, f, *rest ? rest : NULL);
}

/* The option --name or --name=VALUE at s->next (taken, with a value that
 * follows it). */
static cli_scan_kind next_long(cli_scan *s, cli_scanned *f)
{
    const char *el = s->argv[s->next], *name = el + 2, *eq = strchr(name, '=');
    take(s, 1);
    if (!by_name(s, name, eq ? (size_t)(eq - name) : strlen(name), f) ||
        (eq && !f->opt->has_arg)) { /* --json=1 is unknown, as in getopt */
        f->typed = el;
        return CLI_SCAN_UNKNOWN;
    }
    return f->opt->has_arg ? value_of(s, f, eq ? eq + 1 : NULL) : CLI_SCAN_OPT;
}

cli_scan_kind cli_scan_next(cli_scan *s, cli_scanned *f)
{
    *f = (cli_scanned){0};
    if (s->letters)
        return next_letter(s, f);
    while (s->next < s->argc) {
        const char *el = s->argv[s->next];
        if (el[0] != '-' || !el[1]) { /* an operand: passed over */
            s->next++;
            continue;
        }
        if (!strcmp(el, "--")) { /* the end of the options */
            take(s, 1);
            s->next = s->argc;
            break;
        }
        if (el[1] == '-')
            return next_long(s, f);
        take(s, 1);
        s->letters = el + 1;
        return next_letter(s, f);
    }
    return CLI_SCAN_END;
}

const cli_opt *cli_scan_bad_letter(const cli_scan *s)
{
    for (const cli_opt_group *g = s->groups; g && g->opts; g++)
        for (const cli_opt *o = g->opts; o->name; o++) {
            cli_scanned first;
            char c = o->letter;
            if (c && (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ||
                      (by_letter(s, c, &first) && first.opt != o)))
                return o;
        }
    return NULL;
}
